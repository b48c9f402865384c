"""Rules: every option, its default, and clear errors for bad ones."""

from __future__ import annotations

import pytest

from arena.engine import Rules, RulesError

DEFAULTS = {
    "scoring": "tendler", "hand_size": 6, "trumps": False, "must_head_phase2": False, "standoff": "double",
    "next_dealer": "winner", "dealer_after_tie": "draw", "flags": 1, "max_deals": None, "deck": "french",
}  # fmt: skip


def test_defaults_are_the_rule_books() -> None:
    assert Rules().to_dict() == DEFAULTS
    assert Rules.from_dict({}) == Rules() == Rules.from_dict(None)


def test_round_trip_through_dict_and_pairs() -> None:
    r = Rules(scoring="altenburg", hand_size=5, trumps=True, must_head_phase2=True, standoff="pot",
              next_dealer="alternate", dealer_after_tie="same", flags=3, max_deals=None, deck="german")  # fmt: skip
    assert Rules.from_dict(r.to_dict()) == r
    pairs = [f"{k}={str(v).lower()}" for k, v in r.to_dict().items()]
    assert Rules.from_pairs(pairs) == r
    assert Rules.from_pairs(["max_deals=8"]).max_deals == 8
    assert Rules.from_pairs(["max_deals=none"]).max_deals is None
    assert r.changed()["deck"] == "german" and "max_deals" not in r.changed()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"scoring": "bridge"}, ["scoring", "tendler", "altenburg"]),
        ({"hand_size": 3}, ["hand_size", "6, 5, 4"]),
        ({"hand_size": True}, ["hand_size"]),
        ({"trumps": "yes"}, ["trumps", "false, true"]),
        ({"standoff": "quadruple"}, ["standoff", "double", "pot"]),
        ({"next_dealer": "random"}, ["next_dealer", "winner", "loser", "alternate"]),
        ({"dealer_after_tie": "coin"}, ["dealer_after_tie", "draw", "same"]),
        ({"flags": 0}, ["flags", "from 1 to 10000"]),
        ({"max_deals": 0}, ["max_deals", "from 1 to 10000"]),
        ({"flags": 4294967296}, ["flags", "from 1 to 10000"]),
        ({"max_deals": 2**64}, ["max_deals", "from 1 to 10000"]),
        ({"deck": "swiss"}, ["deck", "french", "german"]),
        ({"colour": "red"}, ["unknown", "colour", "scoring"]),
    ],
)
def test_bad_options_name_the_option_and_the_allowed_values(data: dict, words: list[str]) -> None:
    with pytest.raises(RulesError) as err:
        Rules.from_dict(data)
    for word in words:
        assert word in str(err.value)


@pytest.mark.parametrize("pair", ["scoring", "=5", "trumps=maybe", "flags=x", "hand_size=six"])
def test_bad_pairs(pair: str) -> None:
    with pytest.raises(RulesError):
        Rules.from_pairs([pair])


def test_worked_example_4_scoring_tables() -> None:
    totals = [11, 14, 15, 16, 18, 19, 20]
    assert [Rules().deal_value(t) for t in totals] == [1, 1, 2, 2, 2, 2, 3]
    assert [Rules(scoring="altenburg").deal_value(t) for t in totals] == [1, 2, 2, 3, 4, 4, 5]
    assert [Rules(scoring="altenburg").deal_value(t) for t in (12, 13, 17)] == [1, 1, 3]
    assert [Rules().deal_value(t) for t in (12, 13, 17)] == [1, 1, 2]

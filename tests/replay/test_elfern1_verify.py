"""elfern/1 records: seeded matches export and verify; every kind of bad record is caught and located."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from elfern1_helpers import mutated, seeded_record
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Match, Rules, card_code, parse_card
from arena.replay.json_record import dumps, load, loads, match_to_json
from arena.replay.verify import RecordFailure, replay_json, verify_file


def _typical_record() -> dict:
    """A seeded match of several deals whose first deal has a winner (so it fixes the next dealer)."""
    for seed in range(100):
        record = seeded_record(seed)
        if len(record["deals"]) >= 3 and record["deals"][0]["winner"] is not None:
            return record
    raise AssertionError("no typical record")


RECORD = _typical_record()


def failure(record) -> RecordFailure:
    with pytest.raises(RecordFailure) as err:
        replay_json(record)
    return err.value


def test_a_seeded_match_verifies_and_round_trips_through_text() -> None:
    result = replay_json(RECORD)
    assert result.match.over and result.seats == ["alice", "bob"]
    assert loads(dumps(RECORD)) == RECORD
    assert RECORD["seed"] >= 0 and RECORD["winner"] in (0, 1)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    policy=st.integers(0, 1000),
    rules=st.builds(Rules, scoring=st.sampled_from(["tendler", "altenburg"]), hand_size=st.sampled_from([6, 5, 4]),
                    trumps=st.booleans(), must_head_phase2=st.booleans(), standoff=st.sampled_from(["double", "pot"]),
                    next_dealer=st.sampled_from(["winner", "loser", "alternate"]),
                    dealer_after_tie=st.sampled_from(["draw", "same"]), flags=st.integers(1, 2),
                    max_deals=st.one_of(st.none(), st.integers(1, 4)), deck=st.sampled_from(["french", "german"])),
)  # fmt: skip
def test_any_seeded_match_exported_to_json_passes_verify(
    seed: int, policy: int, rules: Rules, tmp_path_factory
) -> None:
    record = seeded_record(seed, rules, policy)
    path = tmp_path_factory.mktemp("rec") / "m.json"
    path.write_text(dumps(record), encoding="utf-8")
    assert verify_file(path) == (True, f"{path}: ok")


def test_records_without_a_seed_verify_the_plays_only() -> None:
    record = mutated(RECORD, lambda r: r.pop("seed"))
    replay_json(record)
    # a hand-made deck for deal 1 is fine without a seed...
    m = Match(Rules(), 0)
    m.start_deal(deck=list(range(32)), dealer=0)
    m.playout(random.Random(0))
    while not m.over:
        m.start_deal()
        m.playout(random.Random(len(m.deals)))
    record = match_to_json(m)
    assert "seed" not in record
    replay_json(record)
    # ... but with a seed the deck must be the seeded shuffle
    record["seed"] = 0
    err = failure(record)
    assert (err.deal, err.play) == (1, None) and "not the shuffle of seed 0" in err.reason


def deal1_plays(record) -> list[str]:
    return record["deals"][0]["plays"]


@pytest.mark.parametrize(
    ("change", "where", "words"),
    [
        # the deck is not exactly the 32 cards
        (lambda r: r["deals"][0]["deck"].pop(), (1, None), ["not exactly the 32 cards", "it has 31 cards", "missing"]),
        (lambda r: r["deals"][0]["deck"].__setitem__(0, r["deals"][0]["deck"][1]), (1, None), ["twice"]),
        (lambda r: r["deals"][0]["deck"].__setitem__(3, "ZZ"), (1, None), ["deck card 4", "'ZZ' is not a card"]),
        (lambda r: r["deals"][0].__setitem__("deck", "AS KS"), (1, None), ['"deck" must be a list']),
        # wrong results
        (lambda r: r["deals"][0].__setitem__("honours", [20, 0]), (1, None), ["honours recorded as [20, 0]", "the plays give"]),
        (lambda r: r["deals"][0].__setitem__("winner", 1 - r["deals"][0]["winner"]), (1, None), ["winner recorded as"]),
        (lambda r: r["deals"][0].__setitem__("lines", [3, 3]), (1, None), ["lines recorded as [3, 3]"]),
        (lambda r: r["deals"][0].pop("honours"), (1, None), ['missing "honours"']),
        (lambda r: r.__setitem__("lines", [0, 0]), (None, None), ["lines (the match totals) recorded as [0, 0]"]),
        (lambda r: r.__setitem__("winner", None), (None, None), ["winner (of the match) recorded as null"]),
        # too many or too few plays
        (lambda r: deal1_plays(r).pop(), (1, 32), ["too few plays: 31 recorded, a deal has 32"]),
        (lambda r: deal1_plays(r).append("AS"), (1, 33), ["too many plays"]),
        (lambda r: deal1_plays(r).__setitem__(4, "XX"), (1, 5), ["'XX' is not a card"]),
        (lambda r: deal1_plays(r).__setitem__(4, 7), (1, 5), ["7 is not a card"]),
        # top-level shape
        (lambda r: r.pop("format"), (None, None), ['missing "format": "elfern/1"']),
        (lambda r: r.__setitem__("format", "elfern/2"), (None, None), ["'elfern/2' is not supported"]),
        (lambda r: r["rules"].__setitem__("hand_size", 7), (None, None), ["hand_size=7", "6, 5, 4"]),
        (lambda r: r["rules"].__setitem__("colour", "red"), (None, None), ["unknown rules option 'colour'"]),
        (lambda r: r.__setitem__("seats", ["solo"]), (None, None), ['"seats" must be a list of two names']),
        (lambda r: r.pop("deals"), (None, None), ['missing "deals"']),
        (lambda r: r["deals"].__setitem__(0, [1, 2]), (1, None), ["a deal is a JSON object"]),
        (lambda r: r["deals"][0].__setitem__("dealer", 2), (1, None), ['"dealer" must be seat 0 or 1']),
        # a drawn first dealer cannot be changed when the record carries its seed
        (lambda r: r["deals"][0].__setitem__("dealer", 1 - r["deals"][0]["dealer"]), (1, None), ["draw", "makes seat"]),
        (lambda r: r["deals"].pop(), (None, None), ["the match is not over after"]),
    ],
)  # fmt: skip
def test_bad_records_are_caught_and_located(change, where: tuple, words: list[str]) -> None:
    err = failure(mutated(RECORD, change))
    assert (err.deal, err.play) == where, err
    for word in words:
        assert word in err.reason, err.reason


def test_a_card_not_in_the_hand() -> None:
    plays = deal1_plays(RECORD)
    # play 2 is the follower's card; give it a card the leader still holds (its play 3 is in its hand? use
    # the leader's own first card again, which has left every hand).
    err = failure(mutated(RECORD, lambda r: deal1_plays(r).__setitem__(1, plays[0])))
    assert (err.deal, err.play) == (1, 2)
    assert "is not in your hand" in err.reason and "seat" in err.reason and "legal:" in err.reason


def test_a_card_the_rules_forbid_in_phase_2() -> None:
    m = Match(Rules(), 0)
    m.start_deal(deck=list(range(32)), dealer=0)
    rng = random.Random(5)
    deal = m.deal
    while True:  # find a phase-2 follow where the follower must follow suit and has another suit too
        if deal.phase == 2 and deal.table is not None:
            legal = set(deal.legal_cards())
            hand = {c for c in range(32) if deal.hands[deal.to_move] >> c & 1}
            if hand - legal:
                bad = min(hand - legal)
                k = len(deal.plays) + 1
                break
        m.play(rng.choice(deal.legal_cards()))
        assert not deal.done, "no forced follow in this deal; pick another policy seed"
    record = {"format": "elfern/1", "deals": [{"dealer": 0, "deck": [card_code(c) for c in range(32)],
              "plays": [card_code(c) for c in deal.plays] + [card_code(bad)]}]}  # fmt: skip
    err = failure(record)
    assert (err.deal, err.play) == (1, k)
    assert "phase 2: you must follow suit" in err.reason


def test_a_wrong_dealer_where_the_rules_fix_it() -> None:
    record = RECORD
    assert len(record["deals"]) >= 2
    assert record["deals"][0]["winner"] is not None  # winner deals next
    err = failure(mutated(record, lambda r: r["deals"][1].__setitem__("dealer", 1 - r["deals"][1]["dealer"])))
    assert (err.deal, err.play) == (2, None)
    assert "wrong dealer" in err.reason and "won deal 1 and deals" in err.reason


def test_deals_after_the_end_of_the_match() -> None:
    extra = dict(RECORD["deals"][-1])
    err = failure(mutated(RECORD, lambda r: r["deals"].append(extra)))
    n = len(RECORD["deals"]) + 1
    assert (err.deal, err.play) == (n, None) and "recorded after the match ended" in err.reason


def test_a_verdict_allows_an_unfinished_match_and_last_deal() -> None:
    def cut(r) -> None:
        r["verdict"] = {"status": "TIMEOUT", "seat": 1}
        last = r["deals"][-1]
        del last["plays"][5:]
        for key in ("honours", "winner", "lines"):
            last.pop(key)
        r["lines"] = [sum(d["lines"][s] for d in r["deals"][:-1]) for s in (0, 1)]
        r["winner"] = 0

    replay_json(mutated(RECORD, cut))
    err = failure(mutated(RECORD, lambda r: (cut(r), r["deals"][-1].__setitem__("honours", [1, 1]))))
    assert 'an unfinished deal has no "honours"' in err.reason


def test_hand_written_record_from_the_docs_verifies(repo_root: Path) -> None:
    text = (repo_root / "docs" / "records.md").read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    result = replay_json(json.loads(block))
    assert result.match.over


def test_bad_files_give_one_clear_line(tmp_path: Path) -> None:
    cases = {
        "broken.json": ('{"format": "elfern/1", "deals": [', "not valid JSON: line 1, column"),
        "empty.json": ("", "the file is empty"),
        "list.json": ("[1, 2]", "an elfern/1 record is a JSON object, not a list"),
    }
    for name, (content, words) in cases.items():
        path = tmp_path / name
        path.write_text(content)
        ok, line = verify_file(path)
        assert not ok and line.startswith(f"{path}: FAIL") and words in line, line
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    assert "not a text file" in verify_file(tmp_path / "bin.json")[1]
    assert "cannot read: No such file" in verify_file(tmp_path / "missing.json")[1]
    with pytest.raises(Exception, match="cannot read"):
        load(tmp_path / "missing.json")


def test_german_deck_records_use_the_same_codes() -> None:
    record = seeded_record(7, Rules(deck="german"))
    assert all(parse_card(c) >= 0 for c in record["deals"][0]["deck"])
    replay_json(record)

"""`arena compare`'s closing report, from a real SPRT fed pair by pair: every figure says what it is,
the pentanomial counts carry their labels, a pair still running is "1 pair", and pairing that cost
precision is said in words, never as a negative saving."""

from __future__ import annotations

import random
import re

from arena.cli.compare_report import PAIR_POINTS, report_json, report_lines
from arena.ladder.sprt import Sprt


def _versions(a: str, b: str) -> dict[str, str]:
    return {"a": a, "b": b, "a_content": "aa" * 32, "b_content": "bb" * 32}


def _decided_then_one_more() -> Sprt:
    test = Sprt(elo0=0.0, elo1=80.0)
    rng = random.Random(3)
    while test.frozen is None:
        first, second = float(rng.random() < 0.8), float(rng.random() < 0.8)
        test.add((first + second) / 2, games=(first, second))
    test.add(0.5, games=(1.0, 0.0))  # the one pair still running when the verdict froze
    return test


def test_every_figure_is_explained_and_the_counts_labelled() -> None:
    test = _decided_then_one_more()
    text = "\n".join(report_lines(test, "new@2", "new@1"))
    assert "compared new@2 (A) vs new@1 (B)" in text
    assert "1 pair still running then was counted below but cannot change it" in text
    assert "1 pairs" not in text
    assert "how much stronger A is than B" in text and "95% interval" in text
    labels = " / ".join(PAIR_POINTS)
    counts = " ".join(str(c) for c in test.counts)
    assert f"pairs scoring {labels}: {counts} (A's points over the pair's two games)" in text
    assert "pentanomial [" not in text
    assert "LLR" in text and "the evidence for H1" in text and "the test stops at" in text
    assert f"pairs counted {test.n}: each pair is two games on the same decks" in text


def test_pairing_that_cost_precision_is_never_a_negative_saving() -> None:
    rng = random.Random(5)
    test = Sprt()
    for _ in range(200):  # twins that go alike (the deal decides both): pair scores vary more
        first = float(rng.random() < 0.5)
        second = first if rng.random() < 0.6 else float(rng.random() < 0.5)
        test.add((first + second) / 2, games=(first, second))
    reduction = test.variance_reduction()
    assert reduction is not None and reduction["pairs_saved"] < 0  # the situation the rule is for
    text = "\n".join(report_lines(test, "a@1", "b@1"))
    assert "pairing saved no games" in text
    assert not re.search(r"-\d+ (more )?pairs", text) and "pairs saved" not in text
    assert "inconclusive after 200 pairs" in text and "plain mean of the pairs" in text
    data = report_json(test, _versions("a@1", "b@1"), 2000, 0)
    assert data["pairs_saved"] < 0  # the JSON keeps its figure (and its key) as it was


def test_pairing_that_helped_says_how_many_pairs_it_saved() -> None:
    rng = random.Random(7)
    test = Sprt()
    for _ in range(300):  # a deal that favours a seat: the swapped seats cancel it
        first = float(rng.random() < 0.5)
        if rng.random() < 0.6:
            test.add(0.5, games=(first, 1.0 - first))
        else:
            second = float(rng.random() < 0.5)
            test.add((first + second) / 2, games=(first, second))
    saved = test.variance_reduction()["pairs_saved"]
    assert saved > 0.5
    text = "\n".join(report_lines(test, "a@1", "b@1"))
    assert f"unpaired games would have needed ~{saved:.0f} more pairs" in text


def test_the_json_keeps_its_keys_and_adds_the_labels() -> None:
    test = _decided_then_one_more()
    data = report_json(test, _versions("new@2", "new@1"), 2000, 1)
    old = {"a", "b", "a_content", "b_content", "verdict", "decided_at", "llr", "bounds", "pairs", "max_pairs"}
    old |= {"voided_pairs", "pentanomial", "elo", "elo_ci95", "elo_corrected", "elo_plain"}
    old |= {"variance_ratio", "pairs_saved"}
    assert old <= set(data)
    assert data["pentanomial_points"] == [0.0, 0.5, 1.0, 1.5, 2.0] and data["pairs_after_verdict"] == 1
    assert data["pairs"] == data["decided_at"] + 1 == sum(data["pentanomial"])

"""The live board's public table, fed watch events by hand: honours counted from the trick cards,
hand and stock sizes from the trick number and the rules, lines from each deal's end, and words that
say who is winning the deal and why."""

from __future__ import annotations

from arena.engine.rules import Rules
from arena.replay.live_board import LiveBoard, honours_of


def trick(deal: int, no: int, leader: int, cards: list[str], winner: int) -> dict:
    return {"kind": "trick", "deal": deal, "trick": no, "leader": leader, "cards": cards, "winner": winner}


def test_honours_are_the_a_k_q_j_and_ten() -> None:
    assert honours_of(["AS", "KH", "QD", "JC", "TS"]) == 5
    assert honours_of(["9S", "8H", "7D"]) == 0


def test_the_board_counts_honours_sizes_and_lines() -> None:
    board = LiveBoard(["ann", "bea"])
    assert board.state()["note"] == "No deal shown yet."
    board.feed({"kind": "deal", "deal": 1, "dealer": 1})
    s = board.state()
    assert s["counts"] == [6, 6] and s["stock"] == 20 and s["table"] == [] and s["dealer"] == 1
    assert s["to_move"] == 0  # the non-dealer leads the first trick
    board.feed(trick(1, 1, 0, ["AS", "7S"], 0))
    s = board.state()
    assert s["honours"] == [1, 0] and s["stock"] == 18 and s["counts"] == [6, 6]
    assert s["hands"] == [None, None] and s["table"] == [{"seat": 0, "card": "AS"}, {"seat": 1, "card": "7S"}]
    assert "ann takes it (+1 honour)" in s["note"] and "ann leads; 10 more win the deal" in s["note"]
    assert s["to_move"] == 0  # the trick's winner leads the next one
    board.feed(trick(1, 2, 0, ["9H", "TH"], 1))
    assert board.state()["to_move"] == 1 and board.state()["honours"] == [1, 1]
    for no in range(3, 13):
        board.feed(trick(1, no, 0, ["8C", "7C"], 0))
    s = board.state()
    assert s["stock"] == 0 and s["counts"] == [4, 4]  # phase 2: two tricks out of the hands
    board.feed({"kind": "deal_end", "deal": 1, "winner": 0, "lines": [3, 0]})
    assert board.state()["lines"] == [3, 0] and "ann wins it and scores 3 lines" in board.state()["note"]
    assert board.state()["to_move"] is None  # the deal is over: nobody leads until the next one
    board.feed({"kind": "deal", "deal": 2, "dealer": 0})
    s = board.state()
    assert s["lines"] == [3, 0] and s["honours"] == [0, 0] and s["stock"] == 20


def test_a_tie_is_a_staender_and_smaller_hands_change_the_stock() -> None:
    board = LiveBoard(["ann", "bea"], Rules(hand_size=4))
    board.feed({"kind": "deal", "deal": 1, "dealer": 0})
    assert board.state()["stock"] == 24 and board.state()["counts"] == [4, 4]
    board.feed({"kind": "deal_end", "deal": 1, "winner": -1, "lines": [0, 0]})
    assert "Ständer" in board.standing()

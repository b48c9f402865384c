"""The referee against its manual, protos/elfern/arena/v1/referee.proto, part 1: the first message,
Welcome, turns, deals, cards, clocks and how every joined bot hears the end. One test per promise,
driven by a raw client (tests/referee/wire.py: generated messages over a plain channel, no SDK) on a
real in-process RefereeServer; each test's promises are quoted word for word in conformance.PROMISES,
and test_the_suite_quotes_the_manual fails when the manual no longer says them. Part 2 (sizes, logs,
tooling, a bot's own socket) is test_conformance_limits.py."""

from __future__ import annotations

import re

import grpc
import pytest
import test_conformance_limits
from conformance import (
    MANUAL,
    PROMISES,
    RANK_ORDER,
    SUIT_ORDER,
    _log_of_size,
    hand_key,
    manual_text,
    pair,
    start,
)  # fmt: skip
from wire import CARD, Wire, first_legal, in_thread, play_out

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.referee import TimeControl
from arena.referee.server import MAX_BOT_MESSAGE, SPENT_TOKENS
from arena.referee.session import LogLimits


@pytest.fixture
def addr(referee):
    return referee.address("unix")


def test_the_suite_quotes_the_manual():
    """Every test of the suite names the promises it checks, word for word as referee.proto says them."""
    text = " ".join(manual_text().split())
    missing = [(t, q) for t, qs in PROMISES.items() for q in qs if " ".join(q.split()) not in text]
    assert not missing, missing
    names = [*globals().items(), *vars(test_conformance_limits).items()]
    tests = {
        n
        for n, f in names
        if n.startswith("test_")
        and callable(f)
        and n not in ("test_the_suite_quotes_the_manual", "test_the_sample_bundles_carry_the_manual")
    }
    assert tests == set(PROMISES), tests ^ set(PROMISES)


def test_the_sample_bundles_carry_the_manual():
    for bundle in ("node", "cpp"):
        copy = MANUAL.parents[4] / "sample_bots" / bundle / "proto" / "referee.proto"
        assert copy.read_text() == MANUAL.read_text(), f"{copy} is stale: run `make protos`"


# -- the first message -------------------------------------------------------------------------------


def test_anything_but_join_first_is_failed_precondition(referee, addr):
    """'Anything else first is rejected with status FAILED_PRECONDITION.'"""
    start(referee)
    w = Wire(addr)
    w.action(1, "AS")
    code, details = w.finish()
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "first message must be Join" in details


def test_unknown_token_is_permission_denied(referee, addr):
    """'a wrong ... token with PERMISSION_DENIED.'"""
    w = Wire(addr)
    w.join("not-a-token")
    code, details = w.finish()
    assert code == grpc.StatusCode.PERMISSION_DENIED and "unknown seat token" in details


def test_undecodable_first_message_is_invalid_argument_in_one_plain_line(referee, addr):
    """'A first message that does not parse is INVALID_ARGUMENT, one line of plain words.'"""
    w = Wire(addr)
    w.send(b"\xff\xff\xff\xff\x0f\x01")
    code, details = w.finish()
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "the first message is 6 bytes that do not parse as a BotMessage; " + (
        "send BotMessage{join} with your ARENA_TOKEN first"
    )


def test_a_failed_join_does_not_use_up_the_token(referee, addr):
    """'A refused Join does not use up the token: join again with the same one.'"""
    runner = start(referee)
    w = Wire(addr)
    w.join(runner.tokens[0], version=2)
    code, details = w.finish()
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "protocol_version 2 is not supported" in details
    # the same token now joins (with version 0, read as 1) and plays
    again, other = Wire(addr), Wire(addr)
    again.join(runner.tokens[0], version=0)
    other.join(runner.tokens[1])
    threads = [in_thread(play_out, again), in_thread(play_out, other)]
    referee.wait(runner)
    for t in threads:
        t.join(30)
    assert again.of("welcome")[0].protocol_version == 1 and again.of("match_result")[0].verdicts[0] == "OK"


def test_a_used_token_is_refused_while_its_match_runs(referee, addr):
    """'a ... already used token with PERMISSION_DENIED.'"""
    runner = start(referee)
    a = Wire(addr)
    a.join(runner.tokens[0])
    b = Wire(addr)
    b.join(runner.tokens[1])
    a.until("welcome")
    dup = Wire(addr)
    dup.join(runner.tokens[0])
    code, details = dup.finish()
    assert code == grpc.StatusCode.PERMISSION_DENIED and "already used" in details
    threads = [in_thread(play_out, a), in_thread(play_out, b)]
    referee.wait(runner)
    for t in threads:
        t.join(30)


def test_a_token_reused_after_its_match_says_the_match_is_over(referee, addr):
    """'A token used again after its match: FAILED_PRECONDITION "match ... is over".'"""
    runner, _ = pair(referee, addr)
    for token in runner.tokens:
        w = Wire(addr)
        w.join(token)
        code, details = w.finish()
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details == f"match {runner.spec.match_id} is over: its seat tokens cannot join again"
    assert SPENT_TOKENS >= 1000  # the referee remembers many finished matches' tokens


# -- more of the first message and the stream ----------------------------------------------------------


def test_a_stream_that_sends_nothing_is_dropped_with_deadline_exceeded(referee, addr, monkeypatch):
    from arena.referee import server

    monkeypatch.setattr(server, "JOIN_TIMEOUT", 0.2)  # read when the stream opens; 30 s in service
    w = Wire(addr)
    code, details = w.finish()
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED and "no Join within" in details


def test_an_oversized_first_message_is_invalid_argument(referee, addr):
    runner = start(referee)
    w = Wire(addr)
    w.send(_log_of_size(MAX_BOT_MESSAGE + 1))
    code, details = w.finish()
    assert (
        code == grpc.StatusCode.INVALID_ARGUMENT and "a message of 16385 bytes; the cap is 16384" in details
    )
    assert not runner.seats[0].claimed and not runner.seats[1].claimed


@pytest.mark.parametrize(
    ("send", "words"),
    [
        (lambda w, tok: w.join(tok), "sent a second Join on its stream"),
        (lambda w, tok: w.send(pb.BotMessage()), "sent an empty BotMessage"),
        (
            lambda w, tok: w.send(b"\xff\xff\xff\xff\x0f\x01"),
            "sent 6 bytes that do not parse as a BotMessage",
        ),
    ],
)
def test_breaking_the_protocol_after_join_is_a_protocol_error(referee, addr, send, words):
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    send(a, runner.tokens[0])
    code, _ = play_out(a)
    result = referee.wait(runner)
    tb.join(30)
    assert result.verdicts[0] == "PROTOCOL_ERROR" and words in result.details[0]
    assert a.kinds()[-2:] == ["error", "match_result"] and code == grpc.StatusCode.INVALID_ARGUMENT


# -- Welcome and the names -------------------------------------------------------------------------


def test_welcome_comes_first_and_fills_every_field(referee, addr):
    """'Welcome: once, when both seats have joined' — match_id, seat, rules, clocks, opponent, version,
    log limits and the deck commitment."""
    runner, wires = pair(referee, addr, rules=Rules(max_deals=1, scoring="altenburg"))
    for seat, w in enumerate(wires):
        assert w.kinds()[0] == "welcome" and w.kinds().count("welcome") == 1
        wel = w.of("welcome")[0]
        assert (wel.match_id, wel.seat, wel.protocol_version) == (runner.spec.match_id, seat, 1)
        assert wel.rules.scoring == "altenburg" and wel.rules.max_deals == 1 and wel.rules.hand_size == 6
        assert (wel.time_control.startup_ms, wel.time_control.move_ms, wel.time_control.bank_ms) == (
            20000, 2000, 5000,
        )  # fmt: skip
        assert (wel.opponent_name, wel.opponent_version) == ("remote", "")  # nobody registered the seats
        lim = LogLimits()
        assert (wel.log_limits.max_line_bytes, wel.log_limits.max_lines) == (
            lim.max_line_bytes,
            lim.max_lines,
        )
        assert (wel.log_limits.lines_per_second, wel.log_limits.burst) == (lim.lines_per_second, lim.burst)
        assert re.fullmatch(r"[0-9a-f]{64}", wel.commitment) and wel.commitment == runner.commitment


def test_names_over_64_characters_are_cut(referee, addr):
    """'bot_name and bot_version: at most 64 characters each; longer ones are cut.'"""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0], name="n" * 100)
    b.join(runner.tokens[1])
    threads = [in_thread(play_out, a), in_thread(play_out, b)]
    referee.wait(runner)
    for t in threads:
        t.join(30)
    assert runner.record.players[0].self_reported_name == "n" * 64


# -- turns, deals and the result ---------------------------------------------------------------------


def test_turn_ids_are_one_counter_shared_by_both_seats(referee, addr):
    """'turn_id: one counter for the whole match, shared by both seats: 1, 2, 3, ...'"""
    _, wires = pair(referee, addr)
    ids = sorted(r.turn_id for w in wires for r in w.of("turn_request"))
    assert ids == list(range(1, 33))  # one deal: 32 cards, each seat's ids interleave
    for w in wires:
        own = [r.turn_id for r in w.of("turn_request")]
        assert own == sorted(own) and len(own) == 16


def test_every_turn_request_is_well_formed(referee, addr):
    """legal_cards never empty and in the hand; deadline_ms = move_ms + bank_ms; hand and legal cards in
    hand order (suit C D H S, then rank 7 .. A); deal_start in the first turn of a deal, trick_result in
    every later one."""
    _, wires = pair(referee, addr)
    for seat, w in enumerate(wires):
        reqs = w.of("turn_request")
        for n, r in enumerate(reqs):
            assert r.legal_cards and set(r.legal_cards) <= set(r.view.hand)
            assert all(re.fullmatch(CARD, c) for c in r.view.hand)
            assert list(r.view.hand) == sorted(r.view.hand, key=hand_key)
            assert list(r.legal_cards) == sorted(r.legal_cards, key=hand_key)
            assert r.deadline_ms == r.move_ms + r.bank_ms and r.move_ms == 2000
            assert r.view.seat == seat and len(r.view.lines) == 2 and len(r.view.honours) == 2
            assert r.HasField("deal_start") == (n == 0)
            assert r.HasField("trick_result") == (n > 0)
        start_msg = reqs[0].deal_start
        assert start_msg.deal_number == 1 and len(start_msg.hand) == 6
        assert list(start_msg.hand) == sorted(start_msg.hand, key=hand_key)
        assert start_msg.stock_size == 20 and list(start_msg.lines) == [0, 0] and start_msg.multiplier == 1


def test_trick_results_follow_the_deal(referee, addr):
    """TrickResult: the trick (number, leader, cards, winner, honours), honours so far, your draw,
    whether the opponent drew, and the stock after the draws."""
    _, wires = pair(referee, addr)
    for w in wires:
        tricks = [r.trick_result for r in w.of("turn_request")[1:]] + [w.of("deal_result")[0].last_trick]
        # every trick reaches each seat once: in its next turn, or in the DealResult for the last
        numbers = [t.trick.number for t in tricks]
        assert numbers == sorted(set(numbers)) and numbers[-1] == 16
        for t in tricks:
            assert re.fullmatch(CARD, t.trick.lead_card) and re.fullmatch(CARD, t.trick.follow_card)
            assert t.trick.winner in (0, 1) and t.trick.honours in (0, 1, 2) and len(t.honours) == 2
            if t.trick.number <= 10:  # phase 1: both draw while the stock lasts
                assert re.fullmatch(CARD, t.drawn_card) and t.opponent_drew
                assert t.stock_size == 20 - 2 * t.trick.number
            else:
                assert t.drawn_card == "" and not t.opponent_drew and t.stock_size == 0


def test_deal_result_and_match_result_come_last_and_the_call_ends_ok(referee, addr):
    """'MatchResult: last message', after the DealResult; honours sum to 20; per-seat lists have two
    entries; the call then ends with status OK."""
    _, wires = pair(referee, addr)
    for w in wires:
        assert w.kinds()[-2:] == ["deal_result", "match_result"]
        deal = w.of("deal_result")[0]
        assert sum(deal.honours) == 20 and deal.deal_number == 1 and deal.HasField("last_trick")
        res = w.of("match_result")[0]
        assert res.end_reason == "COMPLETED" and list(res.verdicts) == ["OK", "OK"]
        assert list(res.details) == ["", ""] and res.deals_played == 1
        assert list(res.lines) == list(deal.lines) and len(res.flags) == 2
        assert res.winner == (deal.winner if deal.winner >= 0 else -1) and not res.void
        assert w.code == grpc.StatusCode.OK


def test_stale_turns_are_non_fatal_errors_and_a_flood_is_a_protocol_error(referee, addr):
    """'An Action for any other turn ... a non-fatal Error STALE_TURN ... More than 100 of them is a
    PROTOCOL_ERROR.'"""
    sent = []

    def stale(req):
        if not sent:
            sent.append(1)
            for _ in range(101):
                wires[0].action(req.turn_id + 1000, req.legal_cards[0])
        return None

    runner = start(referee)
    wires = [Wire(addr), Wire(addr)]
    for w, tok in zip(wires, runner.tokens, strict=True):
        w.join(tok)
    threads = [in_thread(play_out, wires[0], stale), in_thread(play_out, wires[1])]
    result = referee.wait(runner)
    for t in threads:
        t.join(30)
    errors = wires[0].of("error")
    assert [e.code for e in errors[:100]] == ["STALE_TURN"] * 100
    assert all(not e.fatal and e.turn_id > 1000 for e in errors[:100])
    assert errors[-1].code == "PROTOCOL_ERROR" and errors[-1].fatal
    assert result.verdicts[0] == "PROTOCOL_ERROR" and "more than 100" in result.details[0]
    assert wires[0].code == grpc.StatusCode.INVALID_ARGUMENT


# -- cards ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["10D", "9h", " 9H", "", "AS "])
def test_only_exact_card_codes_are_cards(referee, addr, bad):
    """'card: exactly two characters, rank then suit, upper case; anything else loses with
    PROTOCOL_ERROR, and the Error names the bad code and the valid form.'"""
    runner, wires = pair(referee, addr, choose=(lambda req: bad, first_legal))
    result = runner.result
    assert result.verdicts[0] == "PROTOCOL_ERROR" and result.winner == 1
    err = wires[0].of("error")[-1]
    assert err.fatal and err.code == "PROTOCOL_ERROR" and err.turn_id == result_turn(runner)
    assert f"Action.card was {bad!r}" in err.message
    assert "a rank 7 8 9 T J Q K A then a suit C D H S, upper case, like 'TS' or '9H'" in err.message
    assert bad not in result.details[0] or bad == ""  # the public detail never quotes the bot
    assert wires[0].kinds()[-2:] == ["error", "match_result"]


def result_turn(runner) -> int:
    return runner.record.result.failed_turn_id


def test_an_illegal_card_names_the_card_the_rule_and_the_legal_cards_in_wire_codes(referee, addr):
    """'ILLEGAL_MOVE: the Error names the card you played, the rule that forbids it and the legal cards,
    all as wire codes.'"""
    played = []

    def cheat(req):  # play legally until phase 2 offers a card in hand that is not legal
        wrong = [c for c in req.view.hand if c not in req.legal_cards]
        if req.view.phase == 2 and wrong:
            played.append((wrong[0], list(req.legal_cards), req.view.lead_card))
            return wrong[0]
        return req.legal_cards[0]

    for seed in range(1, 40):
        runner, wires = pair(referee, referee.address("unix"), choose=(cheat, first_legal), seed=seed)
        if played:
            break
        played.clear()
    assert played, "no seed gave an illegal chance"
    card, legal, lead = played[0]
    err = wires[0].of("error")[-1]
    assert err.code == "ILLEGAL_MOVE" and err.fatal
    assert err.message.startswith(f"played {card}: in phase 2 ")
    assert f"the legal cards were {' '.join(legal)}" in err.message
    rule = "the led suit must be followed" if card[1] != lead[1] else "must beat"
    assert rule in err.message or "must play a trump" in err.message
    assert not re.search("[♠♥♦♣]", err.message) and runner.result.verdicts[0] == "ILLEGAL_MOVE"
    assert wires[0].code == grpc.StatusCode.FAILED_PRECONDITION


def test_a_card_not_in_hand_is_an_illegal_move(referee, addr):
    def outside(req):
        return next(c + s for s in SUIT_ORDER for c in RANK_ORDER if c + s not in req.view.hand)

    runner, wires = pair(referee, addr, choose=(outside, first_legal))
    err = wires[0].of("error")[-1]
    assert err.code == "ILLEGAL_MOVE" and "which is not in your hand; the legal cards were " in err.message


# -- clocks --------------------------------------------------------------------------------------------


def test_a_timeout_shows_the_move_limit_and_the_bank_left(referee, addr):
    """'TIMEOUT ... the detail shows the move limit and what was left of the bank.'"""
    tc = TimeControl(startup=20.0, move=0.05, bank=0.2)
    runner, wires = pair(referee, addr, choose=(lambda req: None, first_legal), time_control=tc)
    detail = runner.result.details[0]
    assert runner.result.verdicts[0] == "TIMEOUT"
    assert "the move limit of 0.05 s plus the 0.2 s left in the bank" in detail
    assert wires[0].kinds()[-2:] == ["error", "match_result"] and wires[0].of("error")[-1].code == "TIMEOUT"
    assert wires[0].code == grpc.StatusCode.DEADLINE_EXCEEDED and "TIMEOUT" in wires[0].details


# -- how every joined bot hears the end ---------------------------------------------------------------


def test_an_absent_opponent_still_gives_welcome_then_match_result(referee, addr):
    """'Every bot that joined gets Welcome (so it knows its seat), then MatchResult', even when its
    opponent never joins; the call ends OK (it won)."""
    runner = start(referee, time_control=TimeControl(startup=0.5, move=1.0, bank=1.0))
    w = Wire(addr)
    w.join(runner.tokens[1])
    code, _ = play_out(w)
    assert w.kinds() == ["welcome", "match_result"] and w.of("welcome")[0].seat == 1
    res = w.of("match_result")[0]
    assert list(res.verdicts) == ["STARTUP_FAILED", "OK"] and res.winner == 1 and code == grpc.StatusCode.OK


def test_a_half_closed_stream_hears_error_and_match_result(referee, addr):
    """'A bot that closes its sending side early loses with DISCONNECT, and still receives Error and
    MatchResult; its call ends FAILED_PRECONDITION.'"""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.half_close()
    code, details = a.finish()
    referee.wait(runner)
    tb.join(30)
    assert a.kinds()[-2:] == ["error", "match_result"]
    assert a.of("error")[-1].code == "DISCONNECT" and "half-closed" in a.of("error")[-1].message
    assert a.of("match_result")[0].verdicts[0] == "DISCONNECT"
    assert code == grpc.StatusCode.FAILED_PRECONDITION and details.startswith(
        "DISCONNECT: the bot half-closed"
    )
    assert b.of("match_result")[0].winner == 1 and b.code == grpc.StatusCode.OK


def test_a_shutdown_tells_both_bots_and_ends_their_calls_unavailable(referee, addr):
    """'SHUTDOWN: the match is void, verdicts stay OK (an OK verdict may carry a detail); the call ends
    UNAVAILABLE.'"""
    runner = start(referee, time_control=TimeControl(startup=20.0, move=60.0, bank=60.0))
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    a.until("welcome")
    b.until("welcome")
    referee.stop(grace=2.0)
    for w in (a, b):
        code, _ = w.finish()
        res = w.of("match_result")[0]
        assert res.end_reason == "SHUTDOWN" and res.void and list(res.verdicts) == ["OK", "OK"]
        assert res.details[0] == "the referee shut down"  # an OK verdict with a detail
        assert code == grpc.StatusCode.UNAVAILABLE

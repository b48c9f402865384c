"""The referee against its manual, protos/elfern/arena/v1/referee.proto: one test per promise, driven by
a raw client (tests/referee/wire.py: generated messages over a plain channel, no SDK) on a real
in-process RefereeServer. When the manual changes, this file follows; the comment on each test quotes
the promise it checks."""

from __future__ import annotations

import re
import time
from pathlib import Path

import grpc
import pytest
from wire import CARD, Wire, first_legal, in_thread, play_out

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.referee import TimeControl
from arena.referee.server import MAX_BOT_MESSAGE, SPENT_TOKENS
from arena.referee.session import LogLimits

TC = TimeControl(startup=20.0, move=2.0, bank=5.0)
ONE_DEAL = Rules(max_deals=1)
SUIT_ORDER, RANK_ORDER = "CDHS", "789TJQKA"


# Each test checks the manual's words quoted here (whitespace and comment markers aside); a change of
# wording in referee.proto fails test_the_suite_quotes_the_manual until the suite follows it.
PROMISES: dict[str, list[str]] = {
    "test_anything_but_join_first_is_failed_precondition": [
        "FAILED_PRECONDITION the first message is not a Join",
    ],
    "test_unknown_token_is_permission_denied": ["PERMISSION_DENIED an unknown token"],
    "test_undecodable_first_message_is_invalid_argument_in_one_plain_line": [
        "INVALID_ARGUMENT the first message does not parse as a BotMessage",
        "(one line of plain words",
    ],
    "test_a_failed_join_does_not_use_up_the_token": [
        "A refused Join does not use up the token: fix the problem and join again with the same one.",
        "(0, the unset default, is read as 1.)",
    ],
    "test_a_used_token_is_refused_while_its_match_runs": ["or one already used by a stream that joined"],
    "test_a_token_reused_after_its_match_says_the_match_is_over": [
        'the token\'s match is over ("match M is over: its seat tokens cannot join again")',
    ],
    "test_welcome_comes_first_and_fills_every_field": [
        "Welcome first and once: your seat, the rules, the clocks.",
        'the opponent\'s registered name; "remote" for an unregistered seat',
        "The deck commitment: lower-case hex SHA-256",
    ],
    "test_names_over_64_characters_are_cut": ["(at most 64 characters each; longer ones are cut)"],
    "test_turn_ids_are_one_counter_shared_by_both_seats": [
        "one counter for the whole match, shared by both seats",
    ],
    "test_every_turn_request_is_well_formed": [
        "sorted by suit, C D H S, then by rank, 7 8 9 T J Q K A",
        "the cards you may play now, in hand order; never empty",
        "move_ms + bank_ms: answer later than this and you lose (TIMEOUT)",
        "Your first TurnRequest of a deal carries the deal's DealStart",
        "every later one carries the TrickResult of the trick that ended since your last move",
    ],
    "test_trick_results_follow_the_deal": [
        'the card you drew from the stock after this trick; "" if none',
        "whether the opponent drew a card after this trick",
        "cards left in the stock after the draws",
    ],
    "test_deal_result_and_match_result_come_last_and_the_call_ends_ok": [
        "MatchResult last: winner and verdicts. Nothing follows it.",
        "honours of the deal, per seat; they sum to 20",
        "OK the match completed, or it ended by your opponent's fault",
    ],
    "test_stale_turns_are_non_fatal_errors_and_a_flood_is_a_protocol_error": [
        "is rejected with a non-fatal Error STALE_TURN",
        "More than 100 of them is a PROTOCOL_ERROR.",
        "INVALID_ARGUMENT your PROTOCOL_ERROR",
    ],
    "test_only_exact_card_codes_are_cards": [
        "Cards are text codes of exactly two characters: rank then suit, upper case, nothing around them.",
        '"10D", "9h", " 9H" and "AS " are not cards (PROTOCOL_ERROR)',
        "your Error quotes what you sent and shows the valid form",
    ],
    "test_an_illegal_card_names_the_card_the_rule_and_the_legal_cards_in_wire_codes": [
        "your Error names the card you played, the rule that forbids it and the legal cards, all as wire codes",
        "FAILED_PRECONDITION your ILLEGAL_MOVE",
    ],
    "test_a_card_not_in_hand_is_an_illegal_move": [
        "A card code that is not legal now loses with ILLEGAL_MOVE"
    ],
    "test_a_timeout_shows_the_move_limit_and_the_bank_left": [
        "its detail shows the move limit and what was left of the bank",
        "DEADLINE_EXCEEDED your TIMEOUT",
        "The status details repeat your verdict and its detail",
    ],
    "test_an_absent_opponent_still_gives_welcome_then_match_result": [
        "if the match ends before it starts (the opponent never joined), just before the MatchResult",
    ],
    "test_a_half_closed_stream_hears_error_and_match_result": [
        "FAILED_PRECONDITION your ILLEGAL_MOVE, or your DISCONNECT (you closed your side too early)",
        "a fatal one (code = your verdict) comes once, just before the MatchResult",
    ],
    "test_a_shutdown_tells_both_bots_and_ends_their_calls_unavailable": [
        "UNAVAILABLE the referee shut down (end_reason SHUTDOWN)",
        "An OK verdict may carry a detail too",
    ],
    "test_messages_up_to_the_cap_pass_and_one_byte_more_is_a_protocol_error": [
        "a message from a bot may be at most 16 KiB (16384 bytes, serialized)",
        '("sent an oversized message: a message of 16385 bytes; the cap is 16384 bytes")',
    ],
    "test_a_message_over_grpcs_own_limit_is_refused_by_grpc": [
        "over 4 MiB on `arena serve`'s ports. Your call then ends with RESOURCE_EXHAUSTED",
        "judges DISCONNECT (or CRASH if your process dies), with a detail naming the limit",
    ],
    "test_log_dropped_is_sent_once_with_the_count": [
        "one non-fatal Error LOG_DROPPED with the count so far and the limit you hit",
        "it is sent once per match, later drops are only counted",
    ],
    "test_long_log_lines_are_cut_and_counted": [
        "Lines longer than Welcome.log_limits.max_line_bytes are cut (at a character boundary) and counted",
    ],
    "test_logs_sent_until_match_result_are_kept": [
        "Every line sent before you receive MatchResult is kept",
        "The referee keeps reading your stream until you do (for at most 1 s)",
    ],
    "test_health_check_watch_and_list_work_with_the_stock_client": [
        "gRPC health checking (grpc.health.v1.Health: Check, Watch, List)",
    ],
    "test_reflection_v1alpha_works_with_the_stock_client": [
        "server reflection (grpc.reflection.v1 and v1alpha)"
    ],
    "test_reflection_v1_answers_the_same_protocol": ["server reflection (grpc.reflection.v1 and v1alpha)"],
    "test_a_stream_that_sends_nothing_is_dropped_with_deadline_exceeded": [
        "DEADLINE_EXCEEDED nothing at all was sent for 30 s",
    ],
    "test_an_oversized_first_message_is_invalid_argument": [
        "INVALID_ARGUMENT the first message does not parse as a BotMessage, or is over 16 KiB",
        "nothing else happens to the match",
    ],
    "test_breaking_the_protocol_after_join_is_a_protocol_error": [
        "PROTOCOL_ERROR (a message over 16 KiB or that does not parse, a card that is not an exact code, "
        "a second Join, an empty message, more than 100 stale actions)",
    ],
    "test_the_size_boundary_on_a_bots_own_socket": [
        "over 17 KiB (17408 bytes) on a bot's own socket (what `arena play` and the ladder give each bot)",
        "on a bot's own socket, which closes with its match, it may read UNAVAILABLE instead",
    ],
    "test_a_bots_own_socket_serves_play_only": [
        "A bot's own socket serves Referee.Play only; there they answer UNIMPLEMENTED.",
    ],
}
MANUAL = Path(__file__).resolve().parents[2] / "protos" / "elfern" / "arena" / "v1" / "referee.proto"


def manual_text() -> str:
    return " ".join(
        " ".join(re.sub(r"^\s*//", " ", line).split()) for line in MANUAL.read_text().splitlines()
    )


def test_the_suite_quotes_the_manual():
    """Every test of this file names the promises it checks, word for word as referee.proto says them."""
    text = " ".join(manual_text().split())
    missing = [(t, q) for t, qs in PROMISES.items() for q in qs if " ".join(q.split()) not in text]
    assert not missing, missing
    tests = {
        n
        for n in globals()
        if n.startswith("test_")
        and n not in ("test_the_suite_quotes_the_manual", "test_the_sample_bundles_carry_the_manual")
    }
    assert tests == set(PROMISES), tests ^ set(PROMISES)


def test_the_sample_bundles_carry_the_manual():
    for bundle in ("node", "cpp"):
        copy = MANUAL.parents[4] / "sample_bots" / bundle / "proto" / "referee.proto"
        assert copy.read_text() == MANUAL.read_text(), f"{copy} is stale: run `make protos`"


def hand_key(code: str) -> tuple[int, int]:
    return SUIT_ORDER.index(code[1]), RANK_ORDER.index(code[0])


@pytest.fixture
def addr(referee):
    return referee.address("unix")


def start(referee, **kw):
    kw.setdefault("time_control", TC)
    kw.setdefault("rules", ONE_DEAL)
    return referee.new_match(**kw)


def pair(referee, addr, choose=(first_legal, first_legal), **kw):
    """A match between two raw clients that answer with `choose[seat]`; returns (runner, wires)."""
    runner = start(referee, **kw)
    wires = [Wire(addr), Wire(addr)]
    for w, tok in zip(wires, runner.tokens, strict=True):
        w.join(tok)
    threads = [in_thread(play_out, w, c) for w, c in zip(wires, choose, strict=True)]
    referee.wait(runner)
    for t in threads:
        t.join(30)
    return runner, wires


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


# -- message size --------------------------------------------------------------------------------------


def _log_of_size(size: int) -> bytes:
    """A serialized BotMessage{log} of exactly `size` bytes."""
    text = "x" * (size - 6)
    data = pb.BotMessage(log=pb.Log(text=text)).SerializeToString()
    data = pb.BotMessage(log=pb.Log(text="x" * (len(text) - (len(data) - size)))).SerializeToString()
    assert len(data) == size
    return data


def test_messages_up_to_the_cap_pass_and_one_byte_more_is_a_protocol_error(referee, addr):
    """'A message may be at most 16 KiB (16384 bytes); a bigger one ... PROTOCOL_ERROR whose detail says
    it was oversized.'"""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(_log_of_size(MAX_BOT_MESSAGE))
    a.send(_log_of_size(MAX_BOT_MESSAGE + 1))
    code, _ = play_out(a)
    result = referee.wait(runner)
    tb.join(30)
    assert len(runner.record.logs) == 1  # the one at the cap was taken (and cut to the line limit)
    assert result.verdicts[0] == "PROTOCOL_ERROR"
    assert "sent an oversized message: a message of 16385 bytes; the cap is 16384 bytes" in result.details[0]
    assert a.kinds()[-2:] == ["error", "match_result"] and code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_message_over_grpcs_own_limit_is_refused_by_grpc(referee, addr):
    """'Over the port's gRPC limit (17 KiB on a bot's own socket, 4 MiB on arena serve's ports) gRPC
    refuses the message with RESOURCE_EXHAUSTED before the referee sees it: DISCONNECT or CRASH, with
    a detail that names the limit.'"""
    from arena.referee.server import GRPC_RECEIVE_CAP

    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(b"\x1a\x85\x80\x80\x02" + b"x" * (GRPC_RECEIVE_CAP + 5))  # a Log field of 4 MiB + 5 bytes
    code, details = a.finish()
    result = referee.wait(runner)
    tb.join(30)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details
    assert result.verdicts[0] == "DISCONNECT"
    assert f"over gRPC's receive limit of {GRPC_RECEIVE_CAP} bytes" in result.details[0]


# -- logs ----------------------------------------------------------------------------------------------


def test_log_dropped_is_sent_once_with_the_count(referee, addr):
    """'LOG_DROPPED: sent once, when the referee first drops one of your lines, with the count so far.'"""
    runner = start(referee, log_limits=LogLimits(max_lines=5))
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    for i in range(20):
        a.log(f"line {i}")
    code, _ = play_out(a)
    referee.wait(runner)
    tb.join(30)
    dropped = [e for e in a.of("error") if e.code == "LOG_DROPPED"]
    assert len(dropped) == 1 and not dropped[0].fatal
    assert re.fullmatch(
        r"\d+ Log lines? dropped: the match's total of 5 lines is reached; .*", dropped[0].message
    )
    assert [x.text for x in runner.record.logs] == [f"line {i}" for i in range(5)]
    assert runner.record.stats[0].logs_dropped == 15 and code == grpc.StatusCode.OK


def test_long_log_lines_are_cut_and_counted(referee, addr):
    """'Lines longer than max_line_bytes are cut' (and counted in the replay)."""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.log("é" * 1000)  # 2000 bytes of UTF-8: cut at 1024 without splitting a character
    play_out(a)
    referee.wait(runner)
    tb.join(30)
    assert runner.record.logs[0].text == "é" * 512 and runner.record.stats[0].logs_truncated == 1


def test_logs_sent_until_match_result_are_kept(referee, addr):
    """'Log lines sent until you receive MatchResult are kept' — also one sent well after the last
    DealResult, while the MatchResult already waits unread (the referee reads on until the bot closes)."""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    while (msg := a.recv()) is not None:
        kind = msg.WhichOneof("msg")
        if kind == "turn_request":
            a.action(msg.turn_request.turn_id, msg.turn_request.legal_cards[0])
        elif kind == "deal_result":
            time.sleep(0.2)  # the referee has sent the MatchResult by now
            a.log("after the last deal")
        elif kind == "match_result":
            a.half_close()
    referee.wait(runner)
    tb.join(30)
    assert [(x.seat, x.text) for x in runner.record.logs] == [(0, "after the last deal")]
    assert a.code == grpc.StatusCode.OK


# -- tooling (arena serve's ports; a bot's own socket serves Play only) --------------------------------


def test_health_check_watch_and_list_work_with_the_stock_client(referee):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(referee.address("tcp")))
    serving = health_pb2.HealthCheckResponse.SERVING
    for service in ("", "elfern.arena.v1.Referee", "elfern.arena.v1.Arena", "grpc.health.v1.Health"):
        assert stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status == serving
    with pytest.raises(grpc.RpcError) as info:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    watch = stub.Watch(health_pb2.HealthCheckRequest(service="elfern.arena.v1.Referee"), timeout=10)
    assert next(watch).status == serving
    watch.cancel()
    listed = stub.List(health_pb2.HealthListRequest(), timeout=10).statuses
    assert {"", "elfern.arena.v1.Referee", "elfern.arena.v1.Arena", "grpc.health.v1.Health"} <= set(listed)
    assert all(v.status == serving for v in listed.values())


def test_reflection_v1alpha_works_with_the_stock_client(referee):
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    db = ProtoReflectionDescriptorDatabase(grpc.insecure_channel(referee.address("tcp")))
    services = set(db.get_services())
    assert {
        "elfern.arena.v1.Referee",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    } <= services
    proto = db.FindFileContainingSymbol("elfern.arena.v1.Referee")
    assert proto.name.endswith("referee.proto") and "Play" in [m.name for m in proto.service[0].method]


def test_reflection_v1_answers_the_same_protocol(referee):
    """grpc.reflection.v1 (what grpcurl asks first) has the v1alpha messages under a new package name."""
    from grpc_reflection.v1alpha import reflection_pb2 as rpb

    channel = grpc.insecure_channel(referee.address("tcp"))
    info = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=rpb.ServerReflectionRequest.SerializeToString,
        response_deserializer=rpb.ServerReflectionResponse.FromString,
    )
    asks = [
        rpb.ServerReflectionRequest(list_services=""),
        rpb.ServerReflectionRequest(file_containing_symbol="elfern.arena.v1.BotMessage"),
    ]
    listed, found = list(info(iter(asks), timeout=10))
    assert "elfern.arena.v1.Referee" in {s.name for s in listed.list_services_response.service}
    assert found.file_descriptor_response.file_descriptor_proto


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


# -- a bot's own socket (what arena play and the ladder give each seat) --------------------------------


def seat_sockets():
    """A real play_match with two remote seats, each on its own socket; (thread, outcome, addresses, tokens)."""
    import queue

    from arena.workers.match import play_match

    ready: queue.Queue = queue.Queue()
    outcome: dict = {}

    def run() -> None:
        outcome["out"] = play_match(
            (None, None), rules=ONE_DEAL, seed=1, time_control=TC, launcher=None,
            on_ready=lambda addresses, tokens: ready.put((addresses, tokens)),
        )  # fmt: skip

    t = in_thread(run)
    addresses, tokens = ready.get(timeout=30)
    return t, outcome, addresses, tokens


@pytest.mark.parametrize("size", [17000, 17409])
def test_the_size_boundary_on_a_bots_own_socket(size):
    """Up to 17408 bytes the referee sees the message (PROTOCOL_ERROR, oversized); past it gRPC refuses it."""
    from arena.referee.botsocket import BOT_SOCKET_RECEIVE_CAP

    assert BOT_SOCKET_RECEIVE_CAP == 17408
    t, outcome, addresses, tokens = seat_sockets()
    a, b = Wire(addresses[0][0]), Wire(addresses[1][0])
    a.join(tokens[0])
    b.join(tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(_log_of_size(size))
    code, details = play_out(a)
    t.join(60)
    tb.join(30)
    out = outcome["out"]
    if size <= BOT_SOCKET_RECEIVE_CAP:
        assert out.verdicts[0] == "PROTOCOL_ERROR" and f"a message of {size} bytes" in out.verdict_details[0]
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    else:
        # gRPC's core refuses it; the socket closes with the match, which the bot may see first
        assert code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE), details
        assert out.verdicts[0] == "DISCONNECT"
        assert "over gRPC's receive limit of 17408 bytes" in out.verdict_details[0]


def test_a_bots_own_socket_serves_play_only():
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    t, outcome, addresses, tokens = seat_sockets()
    channel = grpc.insecure_channel(addresses[0][0])
    with pytest.raises(grpc.RpcError) as info:
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    wires = [Wire(addresses[s][0]) for s in (0, 1)]
    for w, tok in zip(wires, tokens, strict=True):
        w.join(tok)
    threads = [in_thread(play_out, w) for w in wires]
    t.join(60)
    for th in threads:
        th.join(30)
    assert outcome["out"].verdicts == ("OK", "OK")

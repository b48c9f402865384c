"""Shared parts of the conformance suite (test_conformance.py, test_conformance_limits.py): the
manual's promises each test checks, word for word, and small ways to set up matches for raw clients."""

from __future__ import annotations

import queue
import re
from pathlib import Path

from wire import Wire, first_legal, in_thread, play_out

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.referee import TimeControl

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


def hand_key(code: str) -> tuple[int, int]:
    return SUIT_ORDER.index(code[1]), RANK_ORDER.index(code[0])


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


def _log_of_size(size: int) -> bytes:
    """A serialized BotMessage{log} of exactly `size` bytes."""
    text = "x" * (size - 6)
    data = pb.BotMessage(log=pb.Log(text=text)).SerializeToString()
    data = pb.BotMessage(log=pb.Log(text="x" * (len(text) - (len(data) - size)))).SerializeToString()
    assert len(data) == size
    return data


def seat_sockets():
    """A real play_match with two remote seats, each on its own socket; (thread, outcome, addresses, tokens)."""
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

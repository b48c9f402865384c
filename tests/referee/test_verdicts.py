"""Every verdict, each provoked by a misbehaving bot process (tests/referee/bots/), over a real
Unix socket through play_match, the function `arena play` and the ladder use."""

from __future__ import annotations

import pytest

from arena.engine import deal_deck
from arena.referee import TimeControl, streams
from arena.referee.convert import codes


@pytest.mark.parametrize(
    ("bad", "verdict", "words", "quote"),
    [
        ("crash", "CRASH", "process died (exit code 3)", "crash: something went badly wrong"),
        ("illegal", "ILLEGAL_MOVE", "not in your hand", ""),
        ("disconnect", "DISCONNECT", "process kept running", ""),
        ("notacard", "PROTOCOL_ERROR", "Action.card is not a card code", "Action.card was 'XX'"),
        ("secondjoin", "PROTOCOL_ERROR", "second Join", ""),
        ("oversize", "PROTOCOL_ERROR", "the cap is 16384", ""),
        # over the bot socket's gRPC limit: gRPC refuses it before the referee sees it (botsocket.py)
        ("huge", "CRASH", "exit code 1", ""),
        ("exitearly", "STARTUP_FAILED", "exited (exit code 2) before it joined", "exitearly: giving up"),
    ],
)
@pytest.mark.parametrize("bad_seat", [0, 1])
def test_verdict_and_opponent_wins(play_bots, bad, verdict, words, quote, bad_seat):
    """The public detail is the arena's sentence; what quotes the bot is in the private detail only."""
    seats = [bad, "random"] if bad_seat == 0 else ["random", bad]
    out = play_bots(*seats, seed=3)
    assert out.verdicts[bad_seat] == verdict, out.verdict_details
    assert out.verdicts[1 - bad_seat] == "OK"
    assert out.winner == 1 - bad_seat and not out.void
    assert words in out.verdict_details[bad_seat]
    assert out.end_reason == "VERDICT"
    result = out.record.result
    assert result.verdicts == list(out.verdicts)  # the replay keeps the reason
    assert list(result.details) == list(out.verdict_details)
    if quote:
        assert quote in result.private_details[bad_seat]
        assert not any(quote in d for d in out.verdict_details)
    assert result.private_details[1 - bad_seat] == ""


def test_failure_names_the_turn(play_bots):
    out = play_bots("crash", "random", seed=3)
    deal, trick, turn = out.failed_at
    assert deal == 1 and trick >= 1 and turn >= 2
    assert f"turn {turn}" in out.verdict_details[0]
    assert "exit code 3" in out.verdict_details[0]


def test_never_joining_is_startup_failed(play_bots):
    out = play_bots("random", "nojoin", tc=TimeControl(startup=3.0, move=0.5, bank=1.0))
    assert out.verdicts == ("OK", "STARTUP_FAILED")
    assert "did not join within the start-up budget of 3 s" in out.verdict_details[1]
    assert out.winner == 0 and out.deals_played == 0


def test_both_failing_is_void(play_bots):
    out = play_bots("exitearly", "exitearly")
    assert out.verdicts == ("STARTUP_FAILED", "STARTUP_FAILED")
    assert out.void and out.winner is None


def test_sleeper_times_out_and_the_opponent_clock_is_untouched(play_bots):
    tc = TimeControl(startup=20.0, move=0.3, bank=1.0)
    out = play_bots("random", "sleeper", tc=tc, seed=5)
    assert out.verdicts == ("OK", "TIMEOUT")
    assert "no answer within 1.3 s" in out.verdict_details[1]
    timing = out.record.timing
    assert timing.bank_left_ms[1] == 0
    assert timing.bank_left_ms[0] == 1000  # the sleeper's wait was never charged to seat 0
    assert timing.think_total_us[0] < timing.think_total_us[1]


@pytest.mark.parametrize("deaf_seat", [0, 1])
def test_a_bot_that_stops_reading_is_caught_by_the_write_watchdog(play_bots, monkeypatch, deaf_seat):
    """The move clock (60 s) cannot fire first: only the watchdog on stalled writes ends this."""
    monkeypatch.setattr(streams, "WRITE_STALL", 1.0)
    seats = ["deaf", "random"] if deaf_seat == 0 else ["random", "deaf"]
    out = play_bots(*seats, tc=TimeControl(startup=20.0, move=60.0, bank=60.0), seed=4)
    assert out.verdicts[deaf_seat] == "TIMEOUT", out.verdict_details
    assert out.verdicts[1 - deaf_seat] == "OK" and out.winner == 1 - deaf_seat
    assert "did not read its messages for 1 s" in out.verdict_details[deaf_seat]


def test_time_over_the_move_limit_draws_on_the_bank(play_bots):
    tc = TimeControl(startup=20.0, move=0.2, bank=2.0)
    out = play_bots("banker", "random", tc=tc, seed=2)
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    left = out.record.timing.bank_left_ms
    assert left[1] == 2000  # the fast bot kept its whole bank
    assert 0 < left[0] <= 2000 - 2 * 100  # two moves of move + 0.1 s each took >= 0.2 s from it


def test_stale_turn_ids_are_rejected_and_counted(play_bots):
    out = play_bots("stale", "random", seed=4)
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    stats = out.record.stats
    moves = out.record.timing.moves[0]
    assert stats[0].stale_actions == moves > 0  # one stale answer per turn, none applied
    assert stats[1].stale_actions == 0


def test_log_lines_are_capped_and_kept(play_bots):
    # 3000 lines of 3 kB arrive before its first move: give its clock room on a loaded machine
    out = play_bots("spammer", "random", seed=4, tc=TimeControl(startup=20.0, move=10.0, bank=10.0))
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    logs = [entry for entry in out.record.logs if entry.seat == 0 and not entry.source]  # its Log lines
    stats = out.record.stats[0]
    assert 0 < len(logs) <= 2000
    assert stats.logs_dropped > 0 and stats.logs_dropped + len(logs) == 3000
    assert all(len(entry.text.encode()) <= 1024 for entry in logs)
    assert stats.logs_truncated == len(logs)


def test_full_match_between_sample_bots(play_bots):
    out = play_bots("random", "random", seed=11, tc=TimeControl(startup=20.0, move=1.0, bank=3.0))
    assert out.verdicts == ("OK", "OK") and out.end_reason == "COMPLETED"
    assert out.winner in (0, 1) and max(out.flags) >= 1
    assert out.deals_played == len(out.record.deals) >= 1
    assert all(len(d.plays) == 32 for d in out.record.deals)
    # each deal was dealt from the seeded deck (the referee shuffles the next one ahead of time)
    assert [list(d.deck) for d in out.record.deals] == [
        codes(deal_deck(11, k)) for k in range(out.deals_played)
    ]


def test_matches_from_several_threads_at_once(play_bots):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(lambda seed: play_bots("random", "random", seed=seed), [21, 22, 23]))
    assert [o.verdicts for o in outs] == [("OK", "OK")] * 3, [o.verdict_details for o in outs]
    assert len({o.match_id for o in outs}) == 3
    assert len({tuple(o.record.deals[0].deck) for o in outs}) == 3


@pytest.mark.parametrize(
    ("a", "b", "verdicts"), [("random", "random", ("OK", "OK")), ("random", "sleeper", ("OK", "TIMEOUT"))]
)
def test_pausing_the_idle_bot_keeps_matches_and_clocks_working(play_bots, a, b, verdicts):
    out = play_bots(a, b, seed=6, pause_idle=True, tc=TimeControl(startup=20.0, move=0.3, bank=0.7))
    assert out.verdicts == verdicts, out.verdict_details

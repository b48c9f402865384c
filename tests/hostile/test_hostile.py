"""Each hostile bot is a real bundle played through `play_match` (what `arena play` runs) in the bwrap
sandbox against the random sample bot. It must lose with the right verdict while the opponent, the
referee, the host's files and a TCP listener on 127.0.0.1 stay untouched, and nothing survives it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hostile_support import copy_bot, tree_hash

pytestmark = [pytest.mark.hostile, pytest.mark.slow]

MiB = 1024 * 1024
SECRET = "s3cr3t-arena-db-contents"

# name -> (bundle, expected verdict, Limits overrides, TimeControl overrides)
CASES = {
    "fork_bomb": ("fork_bomb", "PIDS_LIMIT", {}, {}),
    "memory_bomb": ("memory_bomb", "MEMORY_LIMIT", {"memory": 160 * MiB}, {}),
    "cpu_spin": ("cpu_spin", "TIMEOUT", {}, {}),
    "cpu_budget": ("cpu_spin", "CPU_LIMIT", {"cpu_seconds": 2}, {"move": 1.0, "bank": 30.0}),
    "disk_small": ("disk_small", "CRASH", {"tmp_size": 4 * MiB}, {}),
    "disk_huge": ("disk_huge", "CRASH", {"file_size": 2 * MiB}, {}),
    "net_tcp": ("net_tcp", "CRASH", {}, {}),
    "net_dns": ("net_dns", "CRASH", {}, {}),
    "net_netlink": ("net_netlink", "CRASH", {}, {}),
    "read_secrets": ("read_secrets", "CRASH", {}, {}),
    "write_bundle": ("write_bundle", "CRASH", {}, {}),
    "signal_others": ("signal_others", "CRASH", {}, {}),
    "flood": ("flood", "TIMEOUT", {"log_bytes": 64 * 1024}, {}),
    "daemon": ("daemon", "CRASH", {}, {}),
    "garbage": ("garbage", "STARTUP_FAILED", {}, {}),
    "oversized": ("oversized", "PROTOCOL_ERROR", {}, {}),
    # stdio bots, whose lines the referee's own process reads (arena/referee/stdio_seat.py)
    "stdio_flood_lines": ("stdio_flood_lines", "TIMEOUT", {}, {}),
    "stdio_unasked": ("stdio_unasked", "PROTOCOL_ERROR", {}, {}),
    "stdio_long_line": ("stdio_long_line", "PROTOCOL_ERROR", {}, {}),
    "stdio_binary": ("stdio_binary", "PROTOCOL_ERROR", {}, {}),
    "stdio_exit": ("stdio_exit", "CRASH", {}, {}),
    "stdio_close_stdout": ("stdio_close_stdout", "DISCONNECT", {}, {}),
}


def _in_cgroup(pid: int, names: list[str]) -> bool:
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False
    return any(name in text for name in names)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_bot_loses_and_harms_nothing(case, tmp_path, recording_launcher, listener, repo_root):
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.sandbox import cgroups
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.launcher import Limits
    from arena.workers.match import play_match

    bot_name, expected, limit_kw, tc_kw = CASES[case]
    hostile_dir = copy_bot(bot_name, tmp_path)
    opponent_dir = repo_root / "sample_bots" / "python" / "random"
    db = tmp_path / "arena.db"
    db.write_text(SECRET)
    (hostile_dir / "targets.json").write_text(
        json.dumps(
            {
                "port": listener.port,
                "db": str(db),
                "opponent": str(opponent_dir),
                "self": str(hostile_dir),
                "referee_pid": os.getpid(),
            }
        )
    )
    watched = [hostile_dir, opponent_dir, db]
    before = {str(p): tree_hash(p) for p in watched}

    # Scaled where the lane runs in an emulated VM (scripts/cgroup2-guest.sh); 1 on a real host.
    scale = float(os.environ.get("ARENA_TEST_TIME_SCALE", "1"))
    tc = TimeControl(
        **{k: v * scale for k, v in {"startup": 20.0, "move": 0.5, "bank": 1.0, **tc_kw}.items()}
    )
    # A CPU budget is CPU time, which emulation inflates as it does wall time (a bot's start-up
    # alone took over 2 s of CPU in the TCG VM, and the opponent hit the cap before it joined).
    if "cpu_seconds" in limit_kw:
        limit_kw = {**limit_kw, "cpu_seconds": round(limit_kw["cpu_seconds"] * scale)}
    limits = Limits(**{"memory": 256 * MiB, "pids": 64, **limit_kw})
    budget = tc.startup + tc.move + tc.bank + 20.0 * scale  # generous: a hostile bot ends on its first turn
    started = time.monotonic()
    outcome = play_match(
        (load_bundle(hostile_dir), load_bundle(opponent_dir)),
        rules=Rules(max_deals=1),
        seed=7,
        time_control=tc,
        launcher=recording_launcher,
        pause_idle=True,
        limits=limits,
    )
    elapsed = time.monotonic() - started

    # The hostile bot loses with the right verdict; the opponent is unharmed and wins.
    assert outcome.verdicts == (expected, "OK"), outcome.verdict_details
    assert outcome.winner == 1 and not outcome.void
    assert outcome.end_reason == "VERDICT"
    assert elapsed < budget
    # Nothing reached the listener, no file outside the sandbox changed, no secret leaked.
    assert listener.seen == []
    assert {str(p): tree_hash(p) for p in watched} == before
    assert not (hostile_dir / "planted.txt").exists()
    private = outcome.record.result.private_details[0]  # the bot's own output tail (issue 11 §3)
    assert (
        SECRET.encode() not in outcome.replay_bytes and "LEAKED" not in outcome.verdict_details[0] + private
    )
    # Nothing is left running, and every cgroup is gone.
    assert recording_launcher.pids, "the sandbox recorded no processes"
    survivors = [
        pid
        for pid in recording_launcher.pids
        if os.path.exists(f"/proc/{pid}") and _in_cgroup(pid, recording_launcher.cgroups)
    ]
    assert survivors == []
    leftovers = [path for c in recording_launcher.cgroups for path in cgroups.leftovers(c)]
    assert leftovers == []
    hostile = recording_launcher.handles[0]
    if case == "flood":
        assert hostile.output_bytes > limits.log_bytes  # it flooded, and only the cap was kept
        assert len(hostile.output().encode()) <= limits.log_bytes
    if case == "stdio_flood_lines":  # read, rate-limited and dropped by the referee, not buffered
        assert outcome.record.stats[0].logs_dropped > 0
    if case == "stdio_long_line":  # cut at 16 KiB: the bad card the referee quotes is its first bytes
        assert "AAAA" in outcome.record.result.private_details[0]
    if case in ("disk_small", "disk_huge"):
        assert "wrote" in private and "wrote" not in outcome.verdict_details[0]  # its output is private
        wrote = int(private.split(" wrote ")[1].split()[0])
        assert wrote <= max(limits.tmp_size, limits.file_size)


def test_arena_play_sandboxes_by_default(tmp_path, listener, repo_root):
    """The command users type: no --sandbox flag, and the hostile bot still meets the sandbox."""
    from click.testing import CliRunner

    from arena.cli import cli

    hostile = copy_bot("net_tcp", tmp_path)
    (hostile / "targets.json").write_text(json.dumps({"port": listener.port}))
    result = CliRunner().invoke(
        cli,
        [
            "play",
            str(hostile),
            str(repo_root / "sample_bots" / "python" / "random"),
            "--seed",
            "3",
            "--deals",
            "1",
            "--time",
            "startup=20s,move=0.5s,bank=1s",
            "--json",
            "--out",
            str(tmp_path / "m.replay"),
        ],
    )
    data = json.loads(result.output)
    assert data["verdicts"] == ["CRASH", "OK"] and data["winner"] == 1
    refusals = (
        "Address family not supported",
        "Network is unreachable",
        "Connection refused",
    )  # seccomp / netns
    # its own stderr, in the private detail that `arena play` shows the local user
    assert any(r in data["private_details"][0] for r in refusals), data["private_details"][0]
    assert not any(r in data["details"][0] for r in refusals), data["details"][0]
    assert listener.seen == []

"""The referee's own stdio seat (arena/referee/stdio_seat.py): a `protocol = "stdio"` bot's lines on
its pipes, no bridge process. Real matches through `play_match` with the local launcher against the
random sample bot, each case also played behind the SDK's bridge (started by hand, as a bot author
does) where the two must agree. The bwrap sandbox's attack cases are in tests/hostile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from referee_support import REPO, local_launcher

from arena.engine import Rules
from arena.proto.lines import MAX_LINE
from arena.referee import TimeControl
from arena.sandbox.bundle import STDIO_BRIDGE, load_bundle
from arena.workers.match import MatchOutcome, play_match

# Every line it reads goes to seen.txt, then "EOF" once its stdin ends; it answers the first legal card.
RECORDER = """
import json, os, sys
with open("seen.txt", "w") as seen:
    seen.write("token in env: %s\\n" % ("ARENA_TOKEN" in os.environ))
    for line in sys.stdin:
        seen.write(line)
        msg = json.loads(line)
        if msg["type"] == "turn_request":
            print(json.dumps({"card": msg["legal_cards"][0]}), flush=True)
    seen.write("EOF\\n")
"""
ON_TURN = """
import json, os, sys, time
for line in sys.stdin:
    if json.loads(line)["type"] == "turn_request":
        ACT
"""


def _bundle(root: Path, script: str, bridge: bool) -> Path:
    """A stdio bot running `script`: direct (protocol = "stdio"), or the same bot behind the bridge
    started by its own run line, as before."""
    root.mkdir(parents=True)
    (root / "bot.py").write_text(script)
    run = [*STDIO_BRIDGE, "python3", "bot.py"] if bridge else ["python3", "bot.py"]
    protocol = "grpc" if bridge else "stdio"
    (root / "bot.toml").write_text(
        f'name = "liner"\nversion = "2"\nprotocol = "{protocol}"\nrun = {run!r}\n'.replace("'", '"')
    )
    os.chmod(root, 0o755)
    return root


def _play(bot: Path, deals: int = 1, seed: int = 4) -> MatchOutcome:
    return play_match(
        (load_bundle(bot), load_bundle(REPO / "sample_bots" / "python" / "random")),
        rules=Rules(max_deals=deals), seed=seed, time_control=TimeControl(move=5.0, bank=10.0),
        launcher=local_launcher(), match_id="stdio-seat", salt=b"s" * 16,
    )  # fmt: skip


def _acting(act: str) -> str:
    return ON_TURN.replace("ACT", act)


def test_the_bot_reads_the_bridges_lines_byte_for_byte_and_its_stdin_ends_after_the_result(tmp_path) -> None:
    seen = {}
    for bridge in (False, True):
        bot = _bundle(tmp_path / f"bridge{bridge}", RECORDER, bridge)
        out = _play(bot, deals=2)
        assert out.verdicts == ("OK", "OK"), out.verdict_details
        assert out.record.players[0].self_reported_name == "liner"
        seen[bridge] = (bot / "seen.txt").read_text()
    direct, bridged = seen[False].splitlines(), seen[True].splitlines()
    assert direct[0] == "token in env: False", "the direct bot gets no seat token: it needs none"
    assert bridged[0] == "token in env: True"
    assert direct[1:] == bridged[1:], "the same lines, byte for byte"
    assert direct[-1] == "EOF" and '"type":"match_result"' in direct[-2]


@pytest.mark.parametrize("bridge", [False, True], ids=["direct", "bridge"])
@pytest.mark.parametrize(
    ("act", "verdict"),
    [
        ('print("I think I will play the ace", flush=True)', "PROTOCOL_ERROR"),
        (f'print("{{" + "x" * {MAX_LINE} + "}}", flush=True)', "PROTOCOL_ERROR"),  # over MAX_LINE: cut
        ('print(json.dumps({"card": "7Z"}), flush=True)', "PROTOCOL_ERROR"),
        ("sys.exit(3)", "CRASH"),
    ],
    ids=["garbage", "long-line", "not-a-card", "exit"],
)
def test_a_misbehaving_line_bot_gets_the_same_verdict_as_behind_the_bridge(
    tmp_path, act, verdict, bridge
) -> None:
    out = _play(_bundle(tmp_path / "bot", _acting(act), bridge))
    assert out.verdicts == (verdict, "OK"), out.verdict_details
    assert out.winner == 1


def test_closing_stdout_while_alive_is_a_disconnect_and_its_stderr_is_its_log(tmp_path) -> None:
    act = 'print("closing", file=sys.stderr, flush=True); os.close(1); time.sleep(60)'
    out = _play(_bundle(tmp_path / "bot", _acting(act), bridge=False))
    assert out.verdicts == ("DISCONNECT", "OK"), out.verdict_details
    assert "closed its stdout while its process kept running" in out.verdict_details[0]
    assert [log.text for log in out.record.logs if log.seat == 0 and log.source == "output"] == ["closing"]


def test_log_lines_reach_the_replay(tmp_path) -> None:
    act = 'print(json.dumps({"log": "thinking"}), flush=True); print(json.dumps({"card": "AS"}), flush=True)'
    out = _play(
        _bundle(tmp_path / "bot", _acting(act).replace('"AS"', 'json.loads(line)["legal_cards"][0]'), False)
    )
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    assert any(log.seat == 0 and log.text == "thinking" and log.source != "output" for log in out.record.logs)


class _SandboxNeverUp:
    """A launcher whose sandbox fails before the bot's program runs (as bwrap does without the
    capability for its namespaces): the process dies with a line on stderr and never writes the launch
    chain's STARTED_LINE."""

    name = "local"
    direct_stdio = True

    def launch(self, spec):
        import subprocess

        from arena.sandbox.local import LocalProcess

        proc = subprocess.Popen(
            ["/bin/sh", "-c", "echo 'sandbox: creating new namespace failed' >&2; exit 1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        return LocalProcess(proc, True, spec.limits.log_bytes)

    def build(self, bundle, limits):
        return True, ""


def test_a_sandbox_that_never_ran_the_bot_is_a_startup_failure_not_its_crash(tmp_path) -> None:
    """The seat joins on the chain's STARTED_LINE, as a gRPC seat on its Join: without it, both seats
    are STARTUP_FAILED and the match is void, so a broken host gives nobody a rated win."""
    bot = load_bundle(_bundle(tmp_path / "liner", RECORDER, bridge=False))
    out = play_match(
        (bot, bot), rules=Rules(max_deals=1), seed=4, time_control=TimeControl(startup=20.0),
        launcher=_SandboxNeverUp(), match_id="never-up",
    )  # fmt: skip
    assert out.verdicts == ("STARTUP_FAILED", "STARTUP_FAILED"), out.verdict_details
    assert out.void and out.winner is None and out.deals_played == 0
    assert "exited" in out.verdict_details[0]


# Opens and closes seats' pipe contexts while another thread makes and checks pipes of its own; on
# the loop named by argv[1]. Prints the number of fds of that thread's found closed under it.
_CLOSE_RACE = """
import asyncio, os, sys, threading
from arena.referee import stdio_seat
from arena.referee.loop import new_loop
done, lost = threading.Event(), []

def others():
    while not done.is_set():
        fds = os.pipe()
        for fd in fds:
            try:
                os.fstat(fd)
                os.close(fd)
            except OSError:
                lost.append(fd)

async def seats(count):
    for _ in range(count):
        bot_in, stdin = os.pipe()
        stdout, bot_out = os.pipe()
        context = await stdio_seat.open_context(os.fdopen(stdin, "wb"), os.fdopen(stdout, "rb"))
        context.close()
        await asyncio.sleep(0)
        os.close(bot_in)
        os.close(bot_out)

sys.setswitchinterval(1e-6)
loop = new_loop()
loop.run_until_complete(seats(1))  # what the loop itself opens on its first run is not counted
before = len(os.listdir("/proc/self/fd"))
thread = threading.Thread(target=others)
thread.start()
loop.run_until_complete(seats(3000))
done.set()
thread.join()
print(len(lost), len(os.listdir("/proc/self/fd")) - before)
"""


@pytest.mark.parametrize("uvloop", ["1", "0"])
def test_a_closed_seat_closes_its_pipes_once_and_no_one_elses_fd(uvloop: str) -> None:
    """uvloop closes a pipe's fd in libuv and then the object it was given: were that the file object,
    the fd number would be closed twice, the second time maybe another seat's fresh pipe (CI: the
    next seat's stdin was gone, EBADF). Nothing is lost under another thread, and nothing leaks."""
    import subprocess
    import sys

    env = {**os.environ, "ARENA_UVLOOP": uvloop}
    done = subprocess.run(
        [sys.executable, "-c", _CLOSE_RACE], cwd=REPO, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "0"], done.stdout

"""A stdio bot under the bwrap launcher (arena/sandbox/stdio_pipes.py): its stdin and stdout are the
protocol's pipes and nothing else holds them, its stderr is its output, and it gets no socket or
token. The referee's side of those pipes is tested in tests/referee/test_stdio_seat.py."""

from __future__ import annotations

import os
import select
from pathlib import Path

from sandbox_support import TIME_SCALE, make_bundle, wait_exit

from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec
from arena.sandbox.stdio_pipes import STARTED_LINE, stdio_chain

BOT = """
import os, sys
print("to the log", file=sys.stderr, flush=True)
line = sys.stdin.readline()
seen = ["ARENA_TOKEN" in os.environ, "ARENA_ADDRESS" in os.environ, os.path.exists("/run/arena")]
print(line.strip()[::-1], *seen, flush=True)
sys.stdin.readline()  # then it closes its stdout and lives on until killed
os.close(1)
sys.stdin.readline()
"""


def _read_line(fd: int) -> bytes:
    """Up to a newline or the end, waiting at most 30 s for each read (a hang fails, it does not block)."""
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], 30 * TIME_SCALE)
        assert ready, f"nothing to read after {data!r}"
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


def _holders(fd: int) -> list[int]:
    """Every other process holding the pipe that `fd` is one end of."""
    target = f"pipe:[{os.fstat(fd).st_ino}]"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(pid) != os.getpid() and any(
                os.readlink(f"/proc/{pid}/fd/{f}") == target for f in os.listdir(f"/proc/{pid}/fd")
            ):
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_stdio_bot_alone_holds_its_protocol_pipes_and_its_stderr_is_its_output(bwrap, tmp_path) -> None:
    bundle = load_bundle(make_bundle(tmp_path / "bot", BOT, 'protocol = "stdio"\n'))
    spec = LaunchSpec(
        bundle=bundle, socket_path=tmp_path / "no.sock", env={"ARENA_TOKEN": "secret"}, label="p"
    )
    proc = bwrap.launch(spec)
    try:
        stdin, stdout = proc.protocol_pipes
        assert _read_line(stdout.fileno()) == STARTED_LINE  # the chain's, before the bot's program runs
        os.write(stdin.fileno(), b"hello\n")
        assert _read_line(stdout.fileno()) == b"olleh False False False\n"  # no token, address or socket
        holders = _holders(stdout.fileno())  # bwrap's monitor and pid 1 do not hold it
        assert [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in holders] == [b"python3\0bot.py\0"]
        os.write(stdin.fileno(), b"close\n")
        assert _read_line(stdout.fileno()) == b"", "its end is seen as soon as the bot closes it"
        assert proc.exit_status() is None, "while the bot lives on"
        assert "to the log" in proc.output() and "olleh" not in proc.output()
    finally:
        proc.kill()
    assert wait_exit(proc) is not None


def test_the_pipes_cross_on_two_one_digit_fds_not_passed_for_bwrap() -> None:
    inner, outer = stdio_chain(["./bot"], taken=(3, 5))
    assert inner[-1] == "./bot" and "exec 0<&4 1>&6 4<&- 6>&-" in inner[2]
    assert "exec 4<&0 6>&1 0</dev/null 1>&2" in outer[2]
    assert Path(outer[0]).name == "sh"

"""A stdio bot's protocol pipes (docs/sandbox.md "stdio bots"): which of a bot's streams are pipes,
for every launcher that hands them to the referee, and their way through the bwrap launch chain.

The chain (the launch helper or setpriv, sh and prlimit, then bwrap, its monitor and its pid 1)
would hold the bot's stdin and stdout as long as the sandbox lives, so the referee would never see
the bot close its stdout. bwrap's monitor and pid 1 close every fd above 2, though; so the pipes
cross on two of those.

Every launcher's last step before a stdio bot's program writes one empty line on its stdout
(`STARTED_LINE`), so the referee learns that the sandbox is up and the bot about to run: until that
line its seat is not joined, as a gRPC bot's is not until its Join. A sandbox that never came up (bwrap
refused a namespace, a container did not start) then ends in STARTUP_FAILED, not in a CRASH of the
bot, and the bot cannot write anything before that line.
"""

from __future__ import annotations

import subprocess
from typing import IO

#: The line the launch chain writes on a stdio bot's stdout just before it execs the bot's program.
STARTED_LINE = b"\n"
_ANNOUNCE = 'echo; exec "$@"'  # sh: STARTED_LINE, then the program in its place


def announced(argv: list[str]) -> list[str]:
    """`argv` behind one `sh` step that writes STARTED_LINE to its stdout first (the local and Docker
    launchers; bwrap's inner step of `stdio_chain` writes it itself)."""
    return ["/bin/sh", "-c", _ANNOUNCE, "arena-stdio", *argv]


def popen_streams(stdio: bool) -> dict[str, int]:
    """Popen's stdin, stdout and stderr for a bot: a stdio bot's stdin and stdout are its protocol
    pipes and its stderr alone is its output; any other bot has no stdin and one output pipe."""
    return {
        "stdin": subprocess.PIPE if stdio else subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE if stdio else subprocess.STDOUT,
    }


def split_streams(
    popen: subprocess.Popen[bytes], stdio: bool
) -> tuple[IO[bytes], tuple[IO[bytes], IO[bytes]] | None]:
    """(the output pipe to capture, the protocol pipes (stdin, stdout) or None) of a bot started
    with `popen_streams(stdio)`."""
    output = popen.stderr if stdio else popen.stdout
    assert output is not None
    if not stdio:
        return output, None
    assert popen.stdin is not None and popen.stdout is not None
    return output, (popen.stdin, popen.stdout)


def stdio_chain(argv: list[str], taken: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """Outside, the chain's first step moves the pipes from its stdin and stdout to two free one-digit
    fds (dash's limit; not one of `taken`, the fds passed for bwrap) and takes /dev/null and the log
    instead; inside, the last step before the bot puts them back on 0 and 1, so the bot alone holds
    them, and writes STARTED_LINE. Returns (the bot's argv, the chain's prefix)."""
    a, b = [fd for fd in range(3, 10) if fd not in taken][:2]
    inner = ["/bin/sh", "-c", f"exec 0<&{a} 1>&{b} {a}<&- {b}>&-; {_ANNOUNCE}", "arena-stdio", *argv]
    outer = ["/bin/sh", "-c", f'exec {a}<&0 {b}>&1 0</dev/null 1>&2; exec "$@"', "arena-stdio"]
    return inner, outer

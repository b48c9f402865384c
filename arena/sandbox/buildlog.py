"""What an author is shown of a failed build: its first error lines, not its end.

A compiler names the real mistake first; what follows is often a cascade, and the end of a long log
(the summary, "1 error", or a tail cut by the capture cap) rarely says what to fix. So `arena play`,
`arena bots submit` and `arena bots show` print the first lines that look like an error, a few
lines from there, and the arena's own closing lines ("[arena] build exited with status 1"), and say
where the whole log is.
"""

from __future__ import annotations

import re

#: A line that reports an error in the formats of gcc/g++ (`error:`), javac (`error:`), go (`file.go:3:5:
#: undefined: x`), rustc (`error[E0425]`), mcs (`error CS0103`), tsc (`error TS2304`), make, npm and
#: Python tracebacks.
ERROR_LINE = re.compile(
    r"(?i)(\berror\b|\bfatal\b|undefined|cannot find|not found|no such file|\bfailed\b|exception|traceback"
    r"|\.go:\d+:\d+:)"
)
ARENA_PREFIX = "[arena]"


def excerpt(log: str, max_lines: int = 12) -> tuple[bool, list[str]]:
    """(found an error line, the lines to show): from the first error line on, at most `max_lines`,
    then the arena's closing lines; the last `max_lines` lines when no line looks like an error."""
    lines = log.rstrip("\n").splitlines()
    body = [line for line in lines if not line.startswith(ARENA_PREFIX)]
    closing = [line for line in lines if line.startswith(ARENA_PREFIX)]
    first = next((i for i, line in enumerate(body) if ERROR_LINE.search(line)), None)
    shown = body[-max_lines:] if first is None else body[first : first + max_lines]
    return first is not None, shown + closing


def summary(log: str, where: str, max_lines: int = 12) -> str:
    """The excerpt under a heading, and where the whole log is (`where`: a path or a command)."""
    found, lines = excerpt(log, max_lines)
    total = len(log.rstrip("\n").splitlines())
    head = "the first error lines of its build log" if found else "the end of its build log"
    return "\n".join([f"{head} ({total} lines; the whole log: {where}):", *lines])

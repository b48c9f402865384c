"""A stdio bot's protocol pipes through the bwrap launch chain (docs/sandbox.md "stdio bots").

The chain (setpriv, sh, prlimit, bwrap, its monitor and its pid 1) would hold the bot's stdin and
stdout as long as the sandbox lives, so the referee would never see the bot close its stdout. bwrap's
monitor and pid 1 close every fd above 2, though; so the pipes cross on two of those.
"""

from __future__ import annotations


def stdio_chain(argv: list[str], taken: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """Outside, the chain's first step moves the pipes from its stdin and stdout to two free one-digit
    fds (dash's limit; not one of `taken`, the fds passed for bwrap) and takes /dev/null and the log
    instead; inside, the last step before the bot puts them back on 0 and 1, so the bot alone holds
    them. Returns (the bot's argv, the chain's prefix)."""
    a, b = [fd for fd in range(3, 10) if fd not in taken][:2]
    inner = ["/bin/sh", "-c", f'exec 0<&{a} 1>&{b} {a}<&- {b}>&-; exec "$@"', "arena-stdio", *argv]
    outer = ["/bin/sh", "-c", f'exec {a}<&0 {b}>&1 0</dev/null 1>&2; exec "$@"', "arena-stdio"]
    return inner, outer

"""What one challenge may ask for, and how many an owner may have waiting: the limits, in one place.

The server's own workers play challenges, so a challenge is bounded three ways (docs/remote.md,
"Challenges: limits and the ladder's share"):

- **its length**: the longest match its rules allow, `Rules.longest_match()`, at most `deals`
  deals, whichever way it is asked for (the `deals` field, `max_deals`, a `flags` target, or any
  option that counts there). The limit of each option is derived from `longest_match` by search,
  so an option the engine adds is bounded as soon as it counts there; no list of options here.
- **its worst-case wall time**: the startup, then every move of the longest match at the full
  move clock, then both seats' banks, at most `wall_seconds`.
- **how many an owner has queued or running**: at most `open_per_owner` (the admin is the
  organiser and is not counted).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, select

from arena.access.roles import Principal
from arena.engine import Rules
from arena.engine.rules import CHOICES, MAX_COUNT, TRICKS_PER_DEAL
from arena.service.errors import InvalidArgument, ResourceExhausted
from arena.store import models as m

MOVES_PER_DEAL = 2 * TRICKS_PER_DEAL  # each seat plays one card a trick


@dataclass(frozen=True)
class ChallengeLimits:
    deals: int = 200  # the longest match a challenge may ask for, in deals that score
    wall_seconds: int = 7200  # startup + longest match x 32 moves x move clock + both banks
    open_per_owner: int = 5  # an owner's challenges queued or running at once
    retry_after: int = 60  # seconds an owner over `open_per_owner` is told to wait before asking again


LIMITS = ChallengeLimits()
OPEN = ("queued", "running")


def check_deals(pairs: list[str], deals: int, limits: ChallengeLimits = LIMITS) -> list[str]:
    """The request's `deals` field as a `max_deals` pair in place of any in `pairs`, refused
    (INVALID_ARGUMENT) over the limit that `max_deals` has with the other rules as given."""
    rest = [p for p in pairs if p.partition("=")[0].strip() != "max_deals"]
    most = _int_limit(Rules.from_pairs(rest), "max_deals", limits.deals)
    if most is None or deals > most:
        raise InvalidArgument(
            f"deals: a challenge allows deals at most {most or 0}, got {deals} (a challenge lasts at "
            f"most {limits.deals} deals that score); ask for fewer"
        )
    return [*rest, f"max_deals={deals}"]


def check_length(pairs: list[str], limits: ChallengeLimits = LIMITS) -> Rules:
    """The challenge's rules, refused (INVALID_ARGUMENT) when their longest match is over `limits.deals`.

    The message names the option to lower, its limit (with the other options as given) and the value
    given."""
    rules = Rules.from_pairs(pairs)  # check_rules has already refused what does not parse
    longest = rules.longest_match()
    if longest <= limits.deals:
        return rules
    for name, value in rules.changed().items():
        allowed = _option_limit(rules, name, limits.deals)
        if allowed is None:
            continue  # no value of this option alone brings the match within the cap
        raise InvalidArgument(
            f"rules: a challenge allows {name} {allowed}, got {_show(value)} (a challenge lasts at most "
            f"{limits.deals} deals that score; this one could last {longest}); ask for less"
        )
    raise InvalidArgument(
        f"rules: a challenge lasts at most {limits.deals} deals that score; these rules allow {longest} "
        f"({', '.join(f'{k}={_show(v)}' for k, v in rules.changed().items())}); ask for fewer"
    )


def _fits(rules: Rules, name: str, value: Any, deals: int) -> bool:
    return replace(rules, **{name: value}).longest_match() <= deals


def _option_limit(rules: Rules, name: str, deals: int) -> str | None:
    """What of option `name` fits in `deals` deals, the other options as in `rules`: "at most N" for
    an integer option, the values that fit for an enumerated one; None when nothing fits."""
    if name in CHOICES:
        ok = [v for v in CHOICES[name] if _fits(rules, name, v, deals)]
        return f"one of {', '.join(_show(v) for v in ok)}" if ok else None
    most = _int_limit(rules, name, deals)
    return None if most is None else f"at most {most}"


def _int_limit(rules: Rules, name: str, deals: int) -> int | None:
    """The largest value of integer option `name` (1..MAX_COUNT, the other options as in `rules`)
    whose longest match fits in `deals`; None when not even 1 fits. A binary search: `longest_match`
    never shrinks as a count grows."""
    if not _fits(rules, name, 1, deals):
        return None
    low, high = 1, MAX_COUNT
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(rules, name, mid, deals):
            low = mid
        else:
            high = mid - 1
    return low


def check_wall_time(rules: Rules, tc: dict[str, float], limits: ChallengeLimits = LIMITS) -> None:
    """Refuse (INVALID_ARGUMENT) a challenge whose worst-case wall time is over `limits.wall_seconds`:
    the startup, every move of the longest match at the full move clock, and both seats' banks."""
    longest = rules.longest_match()
    moves = longest * MOVES_PER_DEAL
    worst = tc["startup"] + moves * tc["move"] + 2 * tc["bank"]
    if worst <= limits.wall_seconds:
        return
    room = limits.wall_seconds - tc["startup"] - 2 * tc["bank"]
    hint = (
        f"at {longest} deals, move_ms at most {int(room / moves * 1000)}"
        if room > 0
        else f"startup_ms + 2 x bank_ms at most {limits.wall_seconds * 1000} ms"
    )
    raise InvalidArgument(
        f"time_control: a challenge may take at most {limits.wall_seconds} s at worst, got {worst:.0f} s "
        f"(startup {tc['startup']:g} s + {longest} deals x {MOVES_PER_DEAL} moves x move {tc['move']:g} s "
        f"+ 2 x bank {tc['bank']:g} s); ask for fewer deals or a shorter clock ({hint})"
    )


def check_open(s, principal: Principal, limits: ChallengeLimits = LIMITS) -> None:
    """Refuse (RESOURCE_EXHAUSTED) an owner who already has `limits.open_per_owner` challenges queued
    or running. The owner's row is locked first, so two requests at once are counted one after the
    other (PostgreSQL; SQLite's writers already queue)."""
    if principal.is_admin or principal.owner is None:
        return
    owner = principal.owner
    s.scalar(select(m.Owner.id).where(m.Owner.name == owner).with_for_update())
    open_ = s.scalar(
        select(func.count())
        .select_from(m.Match)
        .where(m.Match.kind == "challenge", m.Match.requested_by == owner, m.Match.status.in_(OPEN))
    )
    if open_ >= limits.open_per_owner:
        raise ResourceExhausted(
            f"challenges: {owner} has {open_} queued or running, the limit per owner is "
            f"{limits.open_per_owner}; ask again once one is played (`arena matches --kind challenge`)",
            retry_after=limits.retry_after,
        )


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) or value is None else str(value)

"""The rules configuration: every *option* of docs/rules.md, validated, with its default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

# option -> allowed values (for enumerated options); ints are checked separately.
CHOICES: dict[str, tuple[Any, ...]] = {
    "scoring": ("tendler", "altenburg"),
    "hand_size": (6, 5, 4),
    "trumps": (False, True),
    "must_head_phase2": (False, True),
    "standoff": ("double", "pot"),
    "next_dealer": ("winner", "loser", "alternate"),
    "dealer_after_tie": ("draw", "same"),
    "deck": ("french", "german"),
}
#: The largest flags / max_deals a match may ask for: far beyond any real match, and it keeps every
#: count inside the wire's uint32 fields (a larger value was a crash, not a refusal).
MAX_COUNT = 10_000
#: Four lines make one flag (docs/rules.md §6).
LINES_PER_FLAG = 4
#: Every deal is played to the end, all 16 tricks, one card of each seat a trick (docs/rules.md §3).
TRICKS_PER_DEAL = 16
INT_OPTIONS = {
    "flags": f"an integer from 1 to {MAX_COUNT}",
    "max_deals": f"null (play to flags) or an integer from 1 to {MAX_COUNT}",
}

# Deal value by the winner's honours (11..20), per scoring table (docs/rules.md §4).
VALUE_TABLES: dict[str, tuple[int, ...]] = {
    #            11 12 13 14 15 16 17 18 19 20
    "tendler": (1, 1, 1, 1, 2, 2, 2, 2, 2, 3),
    "altenburg": (1, 1, 1, 2, 2, 3, 3, 4, 4, 5),
}


class RulesError(ValueError):
    """An unknown option or a bad value; the message names the option and its allowed values."""


@dataclass(frozen=True, slots=True)
class Rules:
    """One Elfern variant. Defaults are the rule book's defaults."""

    scoring: str = "tendler"
    hand_size: int = 6
    trumps: bool = False
    must_head_phase2: bool = False
    standoff: str = "double"
    next_dealer: str = "winner"
    dealer_after_tie: str = "draw"
    flags: int = 1
    max_deals: int | None = None
    deck: str = "french"

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            # bool is an int subclass: keep True from passing as hand_size 1 and 1 as True.
            if not any(value == a and type(value) is type(a) for a in allowed):
                raise RulesError(f"rules option {name}={value!r} is invalid; allowed: {_show(allowed)}")
        if type(self.flags) is not int or not 1 <= self.flags <= MAX_COUNT:
            raise RulesError(f"rules option flags={self.flags!r} is invalid; allowed: {INT_OPTIONS['flags']}")
        if self.max_deals is not None and (
            type(self.max_deals) is not int or not 1 <= self.max_deals <= MAX_COUNT
        ):
            raise RulesError(
                f"rules option max_deals={self.max_deals!r} is invalid; allowed: {INT_OPTIONS['max_deals']}"
            )

    @property
    def phase1_tricks(self) -> int:
        """Tricks played while the stock lasts: (32 - 2h) / 2."""
        return TRICKS_PER_DEAL - self.hand_size

    def longest_match(self) -> int:
        """The most deals a match under these rules can take that score lines: `max_deals` when set;
        else the way to `flags` flags that lasts longest (a won deal scores at least one line, so both
        players one line short of the target, then one deal more). Ständers, which score nothing, can
        add deals to a flags match beyond this; nothing a caller chooses makes them likelier than the
        cards do. An option that lengthens a match must count here: limits on requested play (a
        challenge's, arena/service/challenge_limits.py) are derived from it."""
        if self.max_deals is not None:
            return self.max_deals
        return 2 * (LINES_PER_FLAG * self.flags - 1) + 1

    def deal_value(self, honours: int) -> int:
        """The deal's value for a winner holding `honours` (11..20) points."""
        return VALUE_TABLES[self.scoring][honours - 11]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Rules:
        """Build from a JSON-like mapping; a missing key means the default."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise RulesError(f"unknown rules option {key!r}; the options are: {', '.join(sorted(known))}")
        return cls(**data)

    @classmethod
    def from_pairs(cls, pairs: Iterable[str]) -> Rules:
        """Build from `["scoring=altenburg", "trumps=true", "max_deals=8"]` (command-line form)."""
        data: dict[str, Any] = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            key, text = key.strip(), text.strip()
            if not sep or not key:
                raise RulesError(
                    f"rules option {pair!r} is not of the form name=value, e.g. scoring=altenburg"
                )
            data[key] = _parse_value(key, text)
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Every option, including defaults: the inverse of `from_dict`."""
        return asdict(self)

    def changed(self) -> dict[str, Any]:
        """Only the options that differ from the defaults (compact records)."""
        default = Rules()
        return {k: v for k, v in self.to_dict().items() if getattr(default, k) != v}


def _parse_value(key: str, text: str) -> Any:
    lowered = text.lower()
    if key in ("trumps", "must_head_phase2"):
        if lowered in ("true", "yes", "1", "on"):
            return True
        if lowered in ("false", "no", "0", "off"):
            return False
        raise RulesError(f"rules option {key}={text!r} is invalid; allowed: true, false")
    if key in ("hand_size", "flags", "max_deals"):
        if key == "max_deals" and lowered in ("none", "null", ""):
            return None
        try:
            return int(text)
        except ValueError:
            allowed = INT_OPTIONS.get(key) or _show(CHOICES[key])
            raise RulesError(f"rules option {key}={text!r} is invalid; allowed: {allowed}") from None
    return text


def _show(values: tuple[Any, ...]) -> str:
    return ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)

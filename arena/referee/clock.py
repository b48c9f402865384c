"""Time controls and the per-seat clock: a free allowance per move plus a bank for the whole match."""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena.proto import referee_pb2 as pb


class TimeControlError(ValueError):
    """A time-control string that cannot be read; the message shows the expected form."""


@dataclass(frozen=True)
class TimeControl:
    """All in seconds. Only the part of a move beyond `move` is taken from the `bank`."""

    startup: float = 10.0
    move: float = 1.0
    bank: float = 10.0

    def to_proto(self) -> pb.TimeControl:
        return pb.TimeControl(
            startup_ms=round(self.startup * 1000),
            move_ms=round(self.move * 1000),
            bank_ms=round(self.bank * 1000),
        )

    @classmethod
    def from_proto(cls, msg: pb.TimeControl) -> TimeControl:
        """Unset (zero) fields take the defaults."""
        d = cls()
        return cls(
            startup=msg.startup_ms / 1000 if msg.startup_ms else d.startup,
            move=msg.move_ms / 1000 if msg.move_ms else d.move,
            bank=msg.bank_ms / 1000 if msg.bank_ms else d.bank,
        )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """`"move=1s,bank=10s,startup=10s"` (any subset; units ms, s, m; bare numbers are seconds)."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, _, value = part.partition("=")
            key = key.strip()
            if key not in ("startup", "move", "bank"):
                raise TimeControlError(
                    f"time control {text!r}: unknown key {key!r}; use move=1s,bank=10s,startup=10s"
                )
            values[key] = _seconds(value.strip(), text)
        return cls(**values)

    def describe(self) -> str:
        return f"move={_fmt(self.move)},bank={_fmt(self.bank)},startup={_fmt(self.startup)}"


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m)?$")


def _seconds(value: str, whole: str) -> float:
    m = _DURATION.match(value)
    if not m:
        raise TimeControlError(f"time control {whole!r}: {value!r} is not a duration like 500ms, 1s or 1.5s")
    n = float(m.group(1))
    unit = m.group(2) or "s"
    return n / 1000 if unit == "ms" else n * 60 if unit == "m" else n


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:g}ms" if seconds < 1 else f"{seconds:g}s"


class SeatClock:
    """One seat's clock. `charge()` takes the time beyond the move allowance from the bank."""

    def __init__(self, tc: TimeControl) -> None:
        self.move = tc.move
        self.bank = tc.bank
        self.total = 0.0
        self.moves = 0

    @property
    def deadline(self) -> float:
        """Seconds a move may take before it is a TIMEOUT."""
        return self.move + self.bank

    def charge(self, think: float) -> bool:
        """Charge one move's think time; False when it exceeded move + bank (the bank is then 0)."""
        self.total += think
        self.moves += 1
        over = think - self.move
        if over > 0:
            if over > self.bank:
                self.bank = 0.0
                return False
            self.bank -= over
        return True

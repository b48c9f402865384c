"""What a worker needs to play a match, and what it hands back: plain, picklable data.

These cross process boundaries (local pool) and, later, a broker; they name bundles by path.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MatchJob:
    match_id: int
    bundles: tuple[str, str]  # stored bundle directories, seat 0 then seat 1
    rules: tuple[str, ...]  # "key=value" pairs for Rules.from_pairs
    seed: int
    time_control: dict = field(default_factory=dict)  # {"move": seconds, "bank": seconds}
    launcher: str = "bwrap"
    salt: str = ""  # hex, the deck commitment's salt (docs/shuffle.md); empty: the referee draws one
    # the registered (name, version) per seat: what the record and the opponent are told
    names: tuple[tuple[str, str], tuple[str, str]] = (("", ""), ("", ""))
    live: str = ""  # where to append the match's public live events (arena.workers.live); "" for none
    attempt: int = 0  # the match row's claim count: the live file names it (an earlier attempt's is stale)
    # stored bundles of retired or suspended bots at claim time: the worker stops their warm zygotes
    retired: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatchResult:
    winner: int | None  # 0, 1, or None for a draw or a void
    void: bool
    verdicts: tuple[str, str]
    verdict_details: tuple[str, str] = ("", "")
    lines: tuple[int, int] = (0, 0)
    deals_played: int = 0
    replay: bytes = b""
    logs: tuple[str, str] = ("", "")  # each seat's captured output, for its owner
    duration: float = 0.0

    @property
    def score0(self) -> float | None:
        """Seat 0's score (1, ½, 0), or None when the match is void and does not count."""
        if self.void:
            return None
        return 0.5 if self.winner is None else float(self.winner == 0)

"""What a worker needs to play a match, and what it hands back: plain, picklable data.

These cross process boundaries (local pool) and a broker (Celery). A job names each seat's bundle by
its content hash, which is all a worker needs: it fetches the files from the store into its own cache
(`arena.store.bundles.fetch_bundle`). The stored path is a fast path only, for a worker on the
server's machine: used when that folder exists there and hashes to the content hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MatchJob:
    match_id: int
    bundles: tuple[str, str]  # the server's stored bundle folders, seat 0 then seat 1: a fast path only
    rules: tuple[str, ...]  # "key=value" pairs for Rules.from_pairs
    seed: int
    time_control: dict = field(default_factory=dict)  # {"move": seconds, "bank": seconds}
    launcher: str = "bwrap"
    salt: str = ""  # hex, the deck commitment's salt (docs/shuffle.md); empty: the referee draws one
    # the registered (name, version) per seat: what the record and the opponent are told
    names: tuple[tuple[str, str], tuple[str, str]] = (("", ""), ("", ""))
    # where the match's public live events go (arena.store.live_target): its Redis stream,
    # "stream:m<ID>" (no path), when Redis is configured, else a live file's path; "" for none
    live: str = ""
    attempt: int = 0  # the match row's claim count: the live file names it (an earlier attempt's is stale)
    # stored bundles of retired or suspended bots at claim time: the worker stops their warm zygotes
    retired: tuple[str, ...] = ()
    # each seat's content hash (BotVersion.content_hash): what a worker fetches and checks the files by
    hashes: tuple[str, str] = ("", "")
    # the request id of the call that queued the match (a challenge), for the worker's log lines; "" none
    request_id: str = ""


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

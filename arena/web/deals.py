"""The replay viewer one deal at a time, so a match page and its JSON stay small however long the
match (issue #30): a record's outline, and one deal's steps re-simulated from it.

The outline is one engine walk of the whole record (`arena.replay.walk.Walk`, through
`arena.web.timeline`) that builds no step: each deal's summary row (dealer, honours, winner, lines,
totals) and the match's state as the deal starts. A deal's state is everything re-simulating that
deal alone needs besides what the record holds for it (its pack and its dealer): the lines so far, the
pending Ständer multiplier or pot, and how many deals came before (the `max_deals` end). So deal K
costs one deal's walk, not K deals'; `arena.web.records` keeps outlines and deals in its memos.
Deal K's entry is the whole timeline's K-th deal, step for step (tests/web/test_match_page_size.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from arena.engine.match import DealSummary, Match
from arena.engine.rules import Rules
from arena.proto import replay_pb2
from arena.replay.export import early_end
from arena.replay.record import rules_of
from arena.replay.walk import DealSource, record_deals
from arena.web.timeline import DealState, TimelineError, walk_timeline

ROWS = 50  # the summary rows a deal's answer carries: a window around it, whatever the match's length
SUMMARY = ("tricks", "steps")  # what a summary row leaves out of the whole timeline's deal entry

Source = tuple[tuple[int, ...], int | None, tuple[int, ...]]  # a deal's pack, dealer and plays


@dataclass(frozen=True)
class Outline:
    """A record's deals without their steps (shared: do not modify)."""

    rules: Rules
    seed: int
    names: list[str]
    rows: list[dict[str, Any]]  # per deal: the whole timeline's entry without `SUMMARY`
    starts: list[DealState]  # per deal: the match as it starts
    sources: list[Source]  # per deal, from the record
    finished: list[DealSummary]  # the engine's finished deals (deal K starts after K - 1 of them)
    verdict: dict[str, Any] | None  # the record's early end, noted on the last deal's last step
    end: dict[str, Any]  # the match's `lines`, `winner`, `over` and `error`, as the whole timeline says

    @property
    def count(self) -> int:
        return len(self.rows)


def record_outline(record: replay_pb2.MatchRecord, names: list[str]) -> Outline:
    """One walk of a (public) record without steps. Raises what `record_timeline` raises."""
    match = Match(rules_of(record), record.seed)
    sources: list[Source] = [(tuple(d), dealer, tuple(p)) for d, dealer, p in record_deals(record)]
    deals: list[dict[str, Any]] = []
    starts: list[DealState] = []

    def walked() -> Iterator[DealSource]:
        for number, source in enumerate(sources, 1):
            deals.append({"number": number, "dealer": source[1], "steps": [], "tricks": []})
            yield source

    verdict = early_end(record)
    winner = None if verdict is None or record.result.winner < 0 else record.result.winner
    tl = walk_timeline(match, names, deals, walked(), None, verdict, winner, strict=True, starts=starts)
    rows = [{k: v for k, v in d.items() if k not in SUMMARY} for d in deals]
    end = {k: tl[k] for k in ("lines", "winner", "over", "error")}
    return Outline(match.rules, record.seed, names, rows, starts, sources, list(match.deals), verdict, end)


def deal_timeline(outline: Outline, number: int, perspective: int | None) -> dict[str, Any]:
    """Deal `number`'s timeline, in the whole timeline's form with that deal only in `deals`, plus
    `deal`, `deal_count` and `rows` (the summary rows of up to `ROWS` deals around it)."""
    if perspective not in (None, 0, 1):
        raise TimelineError(f"perspective must be 0, 1 or omniscient, not {perspective!r}")
    if not 1 <= number <= outline.count:
        raise TimelineError(f"deal {number} is not in this match: it has deals 1 to {outline.count}")
    start = outline.starts[number - 1]
    match = Match(outline.rules, outline.seed)
    match.lines = list(start.lines)
    match.multiplier, match.pot = start.multiplier, start.pot
    match.deals = outline.finished[: number - 1]  # its length decides a max_deals match's end
    source = outline.sources[number - 1]
    deals: list[dict[str, Any]] = [{"number": number, "dealer": source[1], "steps": [], "tricks": []}]
    last = number == outline.count
    verdict = outline.verdict if last else None
    tl = walk_timeline(match, outline.names, deals, iter([source]), perspective, verdict, None, strict=True)
    return {
        **tl,
        **outline.end,
        "deal": number,
        "deal_count": outline.count,
        "rows": rows_around(outline, number),
    }


def rows_around(outline: Outline, number: int) -> list[dict[str, Any]]:
    """The summary rows of up to `ROWS` deals, `number` about in their middle."""
    first = max(1, min(number - ROWS // 2, outline.count - ROWS + 1))
    return outline.rows[first - 1 : first - 1 + ROWS]


def empty_timeline(outline: Outline, perspective: int | None) -> dict[str, Any]:
    """The answer for a match that ended before its first deal (no deal to ask for)."""
    rules = outline.rules
    return {
        "format": "elfern/1 viewer", "seats": outline.names, "deck": rules.deck, "rules": rules.to_dict(),
        "perspective": perspective, "deals": [], **outline.end, "deal": 0, "deal_count": 0, "rows": [],
    }  # fmt: skip

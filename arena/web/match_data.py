"""The web's queries about matches: lists, one match, its reveal state and its stored record.

Part of `arena.web.data.WebData` (a mixin, so that the pages still see one object). What a spectator
may see of a match is decided here and in `arena.web.reveal`: the result, seed, salt and replay only
once `arena.ladder.visibility` says the match is revealed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.queries import season_names
from arena.ladder.visibility import unrevealed_ids
from arena.store import models as m
from arena.web.reveal import MatchFacts, first_line, has_replay, sealed_reason, twins
from arena.web.schemas import MatchOut, MatchPage, MatchSummary


class MatchQueries:
    """Match queries over `self.session` (a read-only session factory)."""

    session: Callable[[], AbstractContextManager[Session]]

    def matches(
        self,
        season: str | None = None,
        bot: str | None = None,
        verdict: str | None = None,
        limit: int = 50,
        after: int | None = None,
        kind: str | None = None,
    ) -> MatchPage:
        """Finished matches, newest first, older than match `after` (keyset paging); challenges
        (unrated) only when `kind` asks for them, never mixed in. A bad verdict raises BadFilter."""
        from arena.ladder import queries as q

        wanted = q.MatchFilter(
            season=season,
            bot=bot,
            verdict=verdict,
            kind=q.MatchKind(kind) if kind else None,
            status=q.MatchStatus.DONE,
        )
        with self.session() as s:
            try:
                page = q.list_matches(s, wanted, after=after, limit=limit)
            except q.NoSuchSeason:
                return MatchPage(total=0, limit=limit, matches=[])
            return MatchPage(
                total=page.total,
                total_capped=page.total_capped,
                limit=limit,
                next_after=page.next_after,
                matches=summaries(s, page.matches),
            )

    def verdict_names(self) -> list[str]:
        """The verdict filter's choices: the closed set (arena.verdicts), not a scan of the store."""
        from arena.ladder.queries import verdict_names

        return [v for v in verdict_names() if v != "VOID"]

    def match(self, match_id: int) -> MatchOut | None:
        """One match as the public sees it: seed, salt, result and details only once revealed."""
        with self.session() as s:
            match = s.get(m.Match, match_id)
            if match is None:
                return None
            summary = summaries(s, [match])[0]
            common = {
                **summary.model_dump(),
                "rules": _rules_dict(match.rules),
                "commitment_id": f"m{match.id}",
            }
            if not summary.revealed:
                return MatchOut(**common, sealed=sealed_reason(match.id, match.status, twins(s, match)))
            stored = has_replay(s, match_id)
            return MatchOut(
                **common,
                seed=match.seed,
                salt=match.salt or None,
                duration=match.duration,
                verdict_details=[first_line(d) for d in match.verdict_details or []],
                has_replay=stored,
            )

    def match_facts(self, match_id: int) -> MatchFacts | None:
        """Status, reveal state and the registered seats with their owners, for the access checks."""
        with self.session() as s:
            match = s.get(m.Match, match_id)
            if match is None:
                return None
            shown = not unrevealed_ids(s, [match])
            q = (
                select(m.BotVersion.id, m.Bot.name, m.BotVersion.number, m.Bot.owner)
                .join(m.Bot)
                .where(m.BotVersion.id.in_((match.version0_id, match.version1_id)))
            )
            by_id = {vid: (name, number, owner) for vid, name, number, owner in s.execute(q)}
            stored = has_replay(s, match_id)
            return MatchFacts(
                id=match.id,
                status=match.status,
                revealed=shown,
                reason=None if shown else sealed_reason(match.id, match.status, twins(s, match)),
                seats=tuple(by_id.get(v, ("?", 0, "")) for v in (match.version0_id, match.version1_id)),
                has_replay=stored,
            )

    def replay_bytes(self, match_id: int) -> bytes | None:
        """The stored record as the referee wrote it: private (logs included); see arena.web.records."""
        with self.session() as s:
            replay = s.get(m.Replay, match_id)
            return bytes(replay.data) if replay is not None and replay.data else None


def _rules_dict(pairs: Iterable[str] | dict | None) -> dict:
    if isinstance(pairs, dict):
        return dict(pairs)
    out = {}
    for pair in pairs or []:
        key, _, value = str(pair).partition("=")
        out[key.strip()] = value.strip()
    return out


def summaries(s: Session, matches: Sequence[m.Match]) -> list[MatchSummary]:
    version_ids = {v for match in matches for v in (match.version0_id, match.version1_id)}
    versions = {}
    if version_ids:
        q = (
            select(m.BotVersion.id, m.BotVersion.number, m.Bot.name)
            .join(m.Bot)
            .where(m.BotVersion.id.in_(version_ids))
        )
        versions = {vid: (name, number) for vid, number, name in s.execute(q)}
    seasons = season_names(s, list(matches))  # a challenge's season_id is None: no season
    sealed = unrevealed_ids(s, matches)
    out = []
    for match in matches:
        seats = [versions.get(match.version0_id, ("?", 0)), versions.get(match.version1_id, ("?", 0))]
        public: dict[str, Any] = {
            "id": match.id,
            "season": seasons.get(match.season_id),
            "kind": match.kind,
            "status": match.status,
            "bots": [name for name, _ in seats],
            "versions": [f"{name}@{number}" for name, number in seats],
            "commitment": match.commitment or "",
        }
        if match.id in sealed:  # existence, seats, status and commitment only
            out.append(MatchSummary(**public, revealed=False))
            continue
        out.append(
            MatchSummary(
                **public,
                winner=match.winner,
                void=match.void,
                void_reason=match.void_reason,
                verdicts=[str(v) for v in (match.verdicts or [])],
                lines=list(match.lines or []),
                deals=match.deals_played,
                finished_at=match.finished_at,
            )
        )
    return out

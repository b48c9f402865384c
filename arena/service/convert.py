"""Store rows as the management API's messages. Whether a match is revealed is decided by the
caller (`arena.ladder.visibility`); here an unrevealed match simply leaves its secrets unset."""

from __future__ import annotations

from datetime import datetime

from arena.limits import VERSIONS_SHOWN
from arena.proto import arena_pb2 as pb
from arena.store import models as m


def iso(when: datetime | None) -> str:
    return when.isoformat(timespec="seconds") + "Z" if when is not None else ""


def version_info(v: m.BotVersion) -> pb.BotVersion:
    return pb.BotVersion(
        number=v.number,
        content_hash=v.content_hash,
        language=v.language,
        protocol=v.protocol,
        build_ok=v.build_ok,
        created_at=iso(v.created_at),
    )


def bot_state(bot: m.Bot) -> str:
    if bot.retired:
        return "retired"
    if bot.suspended:
        return "suspended"
    if bot.versions and not bot.versions[-1].build_ok:
        return "build failed"
    return "active"


def bot_info(bot: m.Bot) -> pb.BotInfo:
    """The bot with its newest `VERSIONS_SHOWN` versions (oldest first), so its size is bounded."""
    return pb.BotInfo(
        name=bot.name,
        owner=bot.owner,
        state=bot_state(bot),
        suspension_reason=bot.suspension_reason or "" if bot.suspended else "",
        versions=[version_info(v) for v in bot.versions[-VERSIONS_SHOWN:]],
        version_count=len(bot.versions),
    )


def match_info(match: m.Match, labels: dict[int, str], *, revealed: bool, season: str = "") -> pb.MatchInfo:
    """`labels` maps version ids to registered `name@number`."""
    out = pb.MatchInfo(
        id=match.id,
        season=season,
        kind=match.kind,
        status=match.status,
        players=[labels.get(match.version0_id, "?"), labels.get(match.version1_id, "?")],
        revealed=revealed,
        winner=-1,
        commitment=match.commitment or "",
        started_at=iso(match.started_at),
        finished_at=iso(match.finished_at) if revealed else "",
        requested_by=match.requested_by or "",
    )
    if revealed:
        out.winner = -1 if match.winner is None else match.winner
        out.void = match.void
        out.void_reason = match.void_reason or ""
        out.verdicts.extend(str(v) for v in match.verdicts or [])
        out.details.extend(str(d).split("\n", 1)[0] for d in match.verdict_details or [])
        out.lines.extend(int(x) for x in match.lines or [])
        out.has_seed = True
        out.seed = match.seed
        out.salt = match.salt or ""
    return out

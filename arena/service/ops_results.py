"""Result operations: seasons, standings, matches and replays, as a spectator may see them.

A match's seed, salt, result and replay are public only once it and every match dealing the same
cards are over (`arena.ladder.visibility`); before that only its existence, seats, status and
deck commitment are. Private records go to the owner of a seat (that seat's part) and the admin.
"""

from __future__ import annotations

from sqlalchemy import func, or_, select

from arena.access.roles import Principal
from arena.proto import arena_pb2 as pb
from arena.proto import referee_pb2
from arena.service.convert import iso, match_info
from arena.service.core import Service
from arena.service.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    check_id,
    echo,
)
from arena.service.ops_bots import labels_for
from arena.store import models as m

KINDS = ("ladder", "final", "compare", "challenge")
STATUSES = ("queued", "running", "done", "failed")


def time_control(tc: dict) -> referee_pb2.TimeControl:
    ms = {k: int(round(float(v) * 1000)) for k, v in (tc or {}).items() if k in ("move", "bank", "startup")}
    return referee_pb2.TimeControl(
        move_ms=ms.get("move", 0), bank_ms=ms.get("bank", 0), startup_ms=ms.get("startup", 0)
    )


def season_info(season: m.Season, done: int = 0, pending: int = 0) -> pb.SeasonInfo:
    return pb.SeasonInfo(
        name=season.name,
        status=season.status,
        rules=list(season.rules or []),
        time_control=time_control(season.time_control),
        duplicate=season.duplicate,
        matches_done=done,
        matches_pending=pending,
        created_at=iso(season.created_at),
    )


def list_seasons(service: Service) -> pb.ListSeasonsResponse:
    with service.store.read() as s:
        counts: dict[tuple[int | None, str], int] = {
            (sid, status): n
            for sid, status, n in s.execute(
                select(m.Match.season_id, m.Match.status, func.count()).group_by(
                    m.Match.season_id, m.Match.status
                )
            )
        }
        seasons = s.scalars(select(m.Season).order_by(m.Season.id.desc()))
        return pb.ListSeasonsResponse(
            seasons=[
                season_info(
                    x,
                    counts.get((x.id, "done"), 0),
                    counts.get((x.id, "queued"), 0) + counts.get((x.id, "running"), 0),
                )
                for x in seasons
            ]
        )


def get_standings(
    service: Service, season: str = "", request: pb.GetStandingsRequest | None = None
) -> pb.Standings:
    """A season's standings, each row with its LOS over the next; the LOS table `request` asks for
    (los_top, los_around, los_bots: at most LOS_MAX bots, RESOURCE_EXHAUSTED over it), none by
    default. Never the whole n×n table (issue #30: at 2,000 bots it was a 32 MB reply)."""
    from arena.ladder.standings import LOS_MAX, LosAsk, LosError, LosTooLarge, standings_with_los

    name = season
    if not name:
        seasons = service.store.seasons()
        if not seasons:
            raise NotFound("no seasons yet; the organiser creates one with CreateSeason")
        live = [x for x in seasons if x.status in ("running", "closing")]
        name = (live or seasons)[-1].name
    ask = None
    if request is not None and (request.los_top or request.los_around or request.los_bots):
        if request.los_top > LOS_MAX or len(request.los_bots) > LOS_MAX:
            raise ResourceExhausted(
                f"a LOS table of at most {LOS_MAX} bots is sent (asked: los_top {request.los_top}, "
                f"{len(request.los_bots)} los_bots); ask for fewer, or page through the rows' los_next"
            )
        ask = LosAsk(request.los_top, request.los_around, tuple(request.los_bots))
    try:
        info, rows, labels, matrix = standings_with_los(service.store, name, ask)
    except LosTooLarge as exc:
        raise ResourceExhausted(str(exc)) from None
    except LosError as exc:
        raise NotFound(str(exc)) from None
    return pb.Standings(
        season=info.name,
        status=info.status,
        los_bots=labels,
        los=[pb.LosRow(values=[round(float(x), 4) for x in row]) for row in matrix],
        rows=[
            pb.StandingRow(
                rank=r.rank,
                bot=r.bot,
                owner=r.owner,
                elo=r.elo or 0.0,
                has_ci95=r.ci95 is not None,
                ci95=r.ci95 or 0.0,
                live_elo=r.live_elo,
                games=r.games,
                wins=r.wins,
                draws=r.draws,
                losses=r.losses,
                provisional=r.provisional,
                active=r.active,
                unrated=not r.rated,
                group=r.group,
                bound=r.bound or "",
                anchor=r.anchor,
                suspended=r.suspended,
                has_los_next=r.los_next is not None,
                los_next=r.los_next or 0.0,
            )
            for r in rows
        ],
    )


def list_matches(service: Service, req: pb.ListMatchesRequest) -> pb.ListMatchesResponse:
    from arena.ladder.visibility import unrevealed_ids

    if req.kind and req.kind not in KINDS:
        raise InvalidArgument(f"kind {echo(req.kind)}: expected one of {', '.join(KINDS)}")
    if req.status and req.status not in STATUSES:
        raise InvalidArgument(f"status {echo(req.status)}: expected one of {', '.join(STATUSES)}")
    limit = min(req.limit or 50, 500)
    with service.store.read() as s:
        query = select(m.Match)
        # keyed by a match's season_id, which is None for a challenge: that gets ""
        names: dict[int | None, str] = {
            sid: name for sid, name in s.execute(select(m.Season.id, m.Season.name))
        }
        if req.season:
            sid = next((k for k, v in names.items() if v == req.season), None)
            if sid is None:
                raise NotFound(f"no season named {echo(req.season)}")
            query = query.where(m.Match.season_id == sid)
        if req.bot:
            ids = select(m.BotVersion.id).join(m.Bot).where(m.Bot.name == req.bot)
            query = query.where(or_(m.Match.version0_id.in_(ids), m.Match.version1_id.in_(ids)))
        query = (
            query.where(m.Match.kind == req.kind) if req.kind else query.where(m.Match.kind != "challenge")
        )
        if req.status:
            query = query.where(m.Match.status == req.status)
        matches = list(s.scalars(query.order_by(m.Match.id.desc())))
        hidden = unrevealed_ids(s, matches)
        if req.verdict:  # a verdict filter may only see revealed results
            matches = [x for x in matches if x.id not in hidden and req.verdict in (x.verdicts or [])]
        page = matches[req.offset : req.offset + limit]
        labels = labels_for(s, page)
        return pb.ListMatchesResponse(
            total=len(matches),
            matches=[
                match_info(x, labels, revealed=x.id not in hidden, season=names.get(x.season_id, ""))
                for x in page
            ],
        )


def get_match(service: Service, match_id: int) -> pb.MatchInfo:
    from arena.ladder.visibility import revealed

    with service.store.read() as s:
        x = s.get(m.Match, check_id(match_id))
        if x is None:
            raise NotFound(f"no match {match_id}")
        season = s.get_one(m.Season, x.season_id).name if x.season_id is not None else ""
        return match_info(x, labels_for(s, [x]), revealed=revealed(s, x), season=season)


def seats_owned(principal: Principal, owners: tuple[str, str]) -> list[int]:
    """The seats whose private part this principal may read (both for the admin)."""
    return [seat for seat, owner in enumerate(owners) if principal.owns(owner)]


def get_replay(service: Service, principal: Principal, match_id: int, private: bool = False) -> pb.Replay:
    """The public record once revealed; the private one (own seats only) to owners and the admin."""
    from arena.ladder.visibility import revealed
    from arena.replay.privacy import private_record_bytes, public_record_bytes

    with service.store.read() as s:
        x = s.get(m.Match, check_id(match_id))
        if x is None:
            raise NotFound(f"no match {match_id}")
        if not revealed(s, x):
            raise NotFound(
                f"match {match_id} is not over: its replay is published when it and its duplicate twin have finished"
            )
        replay = s.get(m.Replay, match_id)
        if replay is None:
            raise NotFound(f"match {match_id} has no replay (it failed to play)")
        owners = tuple(s.get_one(m.BotVersion, vid).bot.owner for vid in (x.version0_id, x.version1_id))
        data = replay.data
    if not private:
        return pb.Replay(match_id=match_id, record=public_record_bytes(data), private=False)
    seats = seats_owned(principal, owners)  # type: ignore[arg-type]
    if not seats:
        raise PermissionDenied(
            f"the private record of match {match_id} is for the owners of its bots and the admin"
        )
    return pb.Replay(match_id=match_id, record=private_record_bytes(data, seats), private=True)

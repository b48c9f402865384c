"""Result operations: seasons, standings, matches and replays, as a spectator may see them.

A match's seed, salt, result and replay are public only once it and every match dealing the same
cards are over (`arena.ladder.visibility`); before that only its existence, seats, status and
deck commitment are. Private records go to the owner of a seat (that seat's part) and the admin.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from arena.access.roles import Principal
from arena.memo import Memo
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
        paused=bool(season.paused),
    )


def list_seasons(service: Service, limit: int = 0, page_token: str = "") -> pb.ListSeasonsResponse:
    """A page of seasons, newest first, at most `SEASONS_PAGE`, each with its finished matches (the
    `recorded` counter) and its open ones (`arena.ladder.queries.open_counts`): no count over the
    history. `page_token` is the id of the page before's oldest season (keyset: pages never overlap)."""
    from arena.ladder.queries import open_counts
    from arena.limits import SEASONS_PAGE

    size = min(limit or SEASONS_PAGE, SEASONS_PAGE)
    before = _season_token(page_token)
    with service.store.read() as s:
        pending = open_counts(s)
        query = select(m.Season).order_by(m.Season.id.desc()).limit(size + 1)
        if before is not None:
            query = query.where(m.Season.id < before)
        found = list(s.scalars(query))
        page = found[:size]
        return pb.ListSeasonsResponse(
            seasons=[season_info(x, x.recorded or 0, pending.get(x.id, 0)) for x in page],
            next_page_token=str(page[-1].id) if len(found) > size else "",
        )


def _season_token(token: str) -> int | None:
    if not token:
        return None
    if not token.isdigit():
        raise InvalidArgument(
            f"page_token {echo(token)} is not one this server gave; pass an earlier answer's "
            "next_page_token unchanged, or none for the newest page"
        )
    return int(token)


def default_season_name(service: Service) -> str:
    """The season shown when none is named (`arena.ladder.queries.default_season`)."""
    from arena.ladder.queries import default_season

    with service.store.read() as s:
        found = default_season(s)
        if found is None:
            raise NotFound("no seasons yet; the organiser creates one with `arena season create`")
        return found.name


def get_standings(
    service: Service, season: str = "", request: pb.GetStandingsRequest | None = None
) -> pb.Standings:
    """A page of a season's standings (`limit` rows, 100 by default, from `page_token`, or the page
    holding `bot`: `arena.ladder.standings_page`), each row with its LOS over the next; the LOS table
    `request` asks for (los_top, los_around, los_bots: at most LOS_MAX bots, RESOURCE_EXHAUSTED over
    it), none by default. Never the whole table or the n×n LOS (issue #30: at 2,000 bots the rows
    were 172 KB a reply, the LOS 32 MB)."""
    from arena.ladder.standings import LOS_MAX, LosAsk, LosError, LosTooLarge
    from arena.ladder.standings_page import PAGE, PAGE_MAX, NoSuchRow, standings_page

    request = request if request is not None else pb.GetStandingsRequest()
    name = season or default_season_name(service)
    ask = None
    if request.los_top or request.los_around or request.los_bots:
        if request.los_top > LOS_MAX or len(request.los_bots) > LOS_MAX:
            raise ResourceExhausted(
                f"a LOS table of at most {LOS_MAX} bots is sent (asked: los_top {request.los_top}, "
                f"{len(request.los_bots)} los_bots); ask for fewer, or page through the rows' los_next"
            )
        ask = LosAsk(request.los_top, request.los_around, tuple(request.los_bots))
    if request.limit > PAGE_MAX:
        raise InvalidArgument(
            f"limit {request.limit}: a page holds at most {PAGE_MAX} rows; page with page_token"
        )
    token = request.page_token
    if token and not (token.isascii() and token.isdigit() and len(token) <= 9):
        raise InvalidArgument(
            f"page_token {echo(token)}: pass a reply's next_page_token, or none for the top"
        )
    try:
        page = standings_page(
            service.store, name, after=int(token or 0), limit=request.limit or PAGE, bot=request.bot, ask=ask
        )
    except LosTooLarge as exc:
        raise ResourceExhausted(str(exc)) from None
    except (LosError, NoSuchRow) as exc:
        raise NotFound(str(exc)) from None
    info, rows = page.season, page.rows
    return pb.Standings(
        season=info.name,
        status=info.status,
        los_bots=page.los_bots,
        los=[pb.LosRow(values=[round(float(x), 4) for x in row]) for row in page.los],
        next_page_token="" if page.next_after is None else str(page.next_after),
        total=page.total,
        first=page.first,
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
    """A page of matches, newest first (`arena.ladder.queries.list_matches`: keyset paging by
    `page_token`, a capped total, the reveal test in one query for the page)."""
    from arena.ladder import queries as q
    from arena.ladder.visibility import unrevealed_ids

    if req.kind and req.kind not in KINDS:
        raise InvalidArgument(f"kind {echo(req.kind)}: expected one of {', '.join(KINDS)}")
    if req.status and req.status not in STATUSES:
        raise InvalidArgument(f"status {echo(req.status)}: expected one of {', '.join(STATUSES)}")
    if req.offset:
        raise InvalidArgument(
            f"offset {req.offset}: offset paging is no longer served; send the previous answer's "
            "next_page_token as page_token (`arena matches --after ID`)"
        )
    try:
        after = q.parse_after(req.page_token, "page_token")
        listing_filter = q.MatchFilter(
            season=req.season or None,
            bot=req.bot or None,
            verdict=q.check_verdict(req.verdict) if req.verdict else None,
            kind=q.MatchKind(req.kind) if req.kind else None,
            status=q.MatchStatus(req.status) if req.status else None,
        )
    except q.BadFilter as exc:
        raise InvalidArgument(str(exc)) from None
    with service.store.read() as s:
        try:
            page = q.list_matches(s, listing_filter, after=after, limit=req.limit or 50)
        except q.NoSuchSeason:
            raise NotFound(f"no season named {echo(req.season)}") from None
        names = q.season_names(s, page.matches)
        hidden = unrevealed_ids(s, page.matches)
        labels = labels_for(s, page.matches)
        return pb.ListMatchesResponse(
            total=page.total,
            total_capped=page.total_capped,
            next_page_token=str(page.next_after) if page.next_after is not None else "",
            matches=[
                match_info(x, labels, revealed=x.id not in hidden, season=names.get(x.season_id, ""))
                for x in page.matches
            ],
        )


def running_matches(service: Service, limit: int) -> list[pb.MatchInfo]:
    """The newest `limit` matches being played, ladder and challenges alike (the web's "now
    playing"): the shared list query without its count, three statements whatever the store holds."""
    from arena.ladder import queries as q
    from arena.ladder.visibility import unrevealed_ids

    running = q.MatchFilter(status=q.MatchStatus.RUNNING, challenges=True)
    with service.store.read() as s:
        page = q.list_matches(s, running, limit=limit, count=False)
        names = q.season_names(s, page.matches)
        hidden = unrevealed_ids(s, page.matches)  # all of them: none is done
        labels = labels_for(s, page.matches)
        return [
            match_info(x, labels, revealed=x.id not in hidden, season=names.get(x.season_id, ""))
            for x in page.matches
        ]


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


#: The last records GetReplay cut into pieces, by (SHA-256 of the stored record, seats or None for the
#: public one): a long record is read piece after piece, and making its public or private form again
#: for each piece (decompress, filter, recompress at level 9) took 0.78 s a piece for a 9 MB record.
#: At most 2 records of at most 32 MiB each (codec.MAX_RECORD_BYTES) are kept.
RECORDS: Memo[tuple[bytes, tuple[int, ...] | None], bytes] = Memo(2)


def get_replay(
    service: Service, principal: Principal, match_id: int, private: bool = False, offset: int = 0
) -> pb.Replay:
    """The public record once revealed; the private one (own seats only) to owners and the admin;
    either as its piece at `offset` (at most pieces.PIECE bytes, so no reply exceeds gRPC's limit)."""
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
    stored = hashlib.sha256(data).digest()  # names the stored record: the memo's key
    if not private:
        whole = RECORDS.get((stored, None), lambda: public_record_bytes(data))
        return replay_piece(match_id, whole, False, offset)
    seats = seats_owned(principal, owners)  # type: ignore[arg-type]
    if not seats:
        raise PermissionDenied(
            f"the private record of match {match_id} is for the owners of its bots and the admin"
        )
    whole = RECORDS.get((stored, tuple(seats)), lambda: private_record_bytes(data, seats))
    return replay_piece(match_id, whole, True, offset)


def replay_piece(match_id: int, whole: bytes, private: bool, offset: int) -> pb.Replay:
    """The Replay reply carrying `whole`'s piece at `offset` (arena/proto/pieces.py)."""
    from arena.proto.pieces import BadOffset, piece_of

    try:
        piece = piece_of(whole, offset)
    except BadOffset as exc:
        raise InvalidArgument(str(exc)) from None
    return pb.Replay(
        match_id=match_id,
        record=piece.data,
        private=private,
        total_size=piece.total_size,
        next_offset=piece.next_offset,
        sha256=piece.sha256,
    )

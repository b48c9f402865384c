"""The organiser's operations (admin token only): seasons, suspensions and the list of owners."""

from __future__ import annotations

import math
from dataclasses import asdict

from sqlalchemy import select

from arena.access.roles import Principal
from arena.proto import arena_pb2 as pb
from arena.proto import referee_pb2
from arena.service.core import Service, require_admin
from arena.service.errors import InvalidArgument, NotFound, echo
from arena.service.ops_bots import check_name, get_bot
from arena.service.ops_results import season_info
from arena.store import models as m

MAX_REASON = 500


def check_rules(pairs: list[str], field: str = "rules") -> list[str]:
    """Validated "key=value" pairs; INVALID_ARGUMENT names the bad one."""
    from arena.engine import Rules

    items = [p.strip() for p in pairs if p.strip()]
    try:
        Rules.from_pairs(items)
    except Exception as exc:  # RulesError, and any overflow a hostile value could cause
        raise InvalidArgument(f"{field}: {str(exc)[:200]}") from None
    return items


def check_time(tc: referee_pb2.TimeControl, field: str = "time_control") -> dict:
    """Seconds per clock, as seasons store them; zero fields take the defaults."""
    from arena.referee import TimeControl

    limits = {"startup_ms": 600_000, "move_ms": 60_000, "bank_ms": 3_600_000}
    for name, most in limits.items():
        if getattr(tc, name) > most:
            raise InvalidArgument(f"{field}.{name}: at most {most} ms, got {getattr(tc, name)}")
    return asdict(TimeControl.from_proto(tc))


def create_season(service: Service, principal: Principal, req: pb.CreateSeasonRequest) -> pb.SeasonInfo:
    from arena.ladder.seasons import create_season as create

    require_admin(principal, "CreateSeason")
    check_name(req.name)
    season = create(
        service.store,
        req.name,
        rules=check_rules(list(req.rules)),
        time_control=check_time(req.time_control),
        duplicate=req.duplicate,
        anchors=check_anchors(dict(req.anchors)),
        pair_same_owner=req.pair_same_owner,
    )
    return season_info(season)


MAX_ANCHORS = 50


def check_anchors(anchors: dict[str, float]) -> dict[str, float]:
    """Anchors as `create_season` takes them: a bot name (optionally @VERSION) and a finite Elo."""
    if len(anchors) > MAX_ANCHORS:
        raise InvalidArgument(f"anchors: at most {MAX_ANCHORS}, got {len(anchors)}")
    for bot, elo in anchors.items():
        name, _, version = bot.partition("@")
        check_name(name, "anchors")
        if version and not version.isdigit():
            raise InvalidArgument(f"anchors: {echo(bot)}: give NAME or NAME@VERSION, e.g. random@1")
        if not math.isfinite(elo) or abs(elo) > 1e5:
            raise InvalidArgument(f"anchors: {echo(bot)}={elo}: give a finite Elo, e.g. 1000")
    return anchors


def season_step(service: Service, principal: Principal, name: str, step: str) -> pb.SeasonInfo:
    from arena.ladder import seasons

    require_admin(principal, f"{step.capitalize()}Season")
    check_name(name, "name")
    if step == "start":
        seasons.start_season(service.store, name)
    elif step == "freeze":
        seasons.freeze_season(service.store, name)
    elif step == "close":
        if seasons.close_season(service.store, name) == 0:
            seasons.maybe_finish_close(service.store, name)
    else:  # pragma: no cover - the servicer names the step
        raise ValueError(step)
    return season_info(service.store.season(name))


def suspend(service: Service, principal: Principal, name: str, reason: str, *, on: bool) -> pb.BotInfo:
    """SuspendBot/ReinstateBot: the organiser's suspension (SuspensionKind.ORGANISER) stays through
    new versions until ReinstateBot, which lifts a suspension of either kind."""
    from arena.store.repo import suspend_bot

    require_admin(principal, "SuspendBot" if on else "ReinstateBot")
    if len(reason) > MAX_REASON:
        raise InvalidArgument(f"reason: at most {MAX_REASON} characters, got {len(reason)}")
    with service.store.tx() as s:
        bot = s.scalar(select(m.Bot).where(m.Bot.name == name))
        if bot is None:
            raise NotFound(f"no bot named {echo(name)}")
        if on:
            why = f"suspended by the organiser: {reason or 'no reason given'}"
            suspend_bot(s, bot.id, why, m.SuspensionKind.ORGANISER)
        elif bot.suspended:
            bot.suspended, bot.suspension_reason, bot.suspension_kind = False, None, None
            s.add(
                m.Notice(bot_id=bot.id, kind="reinstated", message=f"reinstated by the organiser: {reason}")
            )
    return get_bot(service, name)


def owner_info(o) -> pb.OwnerInfo:  # arena.access.owners.OwnerInfo
    return pb.OwnerInfo(
        name=o.name,
        token_prefix=o.token_prefix,
        revoked=o.revoked,
        bots=o.bots,
        created_at=o.created_at.isoformat(timespec="seconds") + "Z",
        rotated_at=o.rotated_at.isoformat(timespec="seconds") + "Z" if o.rotated_at else "",
        suspended=o.suspended is not None,
        suspension_reason=o.suspended or "",
    )


def list_owners(
    service: Service, principal: Principal, limit: int = 0, page_token: str = ""
) -> pb.ListOwnersResponse:
    """A page of owners in name order, at most `OWNERS_PAGE`; `page_token` is the last name of the
    page before, so pages never overlap."""
    from arena.access.owners import list_owners as owners
    from arena.limits import OWNERS_PAGE

    require_admin(principal, "ListOwners")
    size = min(limit or OWNERS_PAGE, OWNERS_PAGE)
    found = owners(service.store, after=page_token, limit=size + 1)
    page = found[:size]
    more = page[-1].name if len(found) > size else ""
    return pb.ListOwnersResponse(owners=[owner_info(o) for o in page], next_page_token=more)


def manage_owner(
    service: Service, principal: Principal, name: str, step: str
) -> pb.OwnerToken | pb.OwnerInfo:
    """AddOwner, RotateOwner, RevokeOwner: the organiser's `arena owners` over the API."""
    from arena.access import owners

    require_admin(principal, f"{step.capitalize()}Owner")
    check_name(name)
    if step == "add":
        return pb.OwnerToken(name=name, token=owners.add_owner(service.store, name))
    if step == "rotate":
        return pb.OwnerToken(name=name, token=owners.rotate_owner(service.store, name))
    owners.revoke_owner(service.store, name)
    return owner_info(owners.owner_info(service.store, name))  # that one owner, not every owner

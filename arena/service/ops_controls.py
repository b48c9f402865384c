"""The organiser's controls over the API (admin token only): pause and resume a season, requeue
failed matches, void a match, recompute a season's ratings, suspend and reinstate an owner, drain
and undrain a worker, and read the organiser's log. Each names who acted (`actor`: the transport and
the caller's address) in that log (`arena.store.audit`)."""

from __future__ import annotations

from arena.access.roles import Principal
from arena.proto import arena_pb2 as pb
from arena.service.core import Service, require_admin
from arena.service.errors import InvalidArgument, check_id
from arena.service.ops_admin import MAX_REASON, owner_info
from arena.service.ops_bots import check_name
from arena.service.ops_results import season_info


def actor(transport: str, address: str) -> str:
    """Who acted, as the organiser's log writes it: the admin token, the transport and the address."""
    return f"{transport}:admin@{address or 'unknown'}"


def _reason(reason: str) -> str:
    if len(reason) > MAX_REASON:
        raise InvalidArgument(f"reason: at most {MAX_REASON} characters, got {len(reason)}")
    return reason


def pause(service: Service, principal: Principal, name: str, who: str, *, on: bool) -> pb.SeasonInfo:
    from arena.ladder.controls import pause_season

    require_admin(principal, "PauseSeason" if on else "ResumeSeason")
    check_name(name, "name")
    return season_info(pause_season(service.store, name, who, on=on))


def requeue(
    service: Service, principal: Principal, req: pb.RequeueFailedRequest, who: str
) -> pb.RequeueFailedResponse:
    from arena.ladder.controls import requeue_failed

    require_admin(principal, "RequeueFailed")
    if req.season:
        check_name(req.season, "season")
    if req.match_id:
        check_id(req.match_id)
    if not req.season and not req.match_id:
        raise InvalidArgument("give season (its failed matches) or match_id (one failed match)")
    ids = requeue_failed(service.store, who, season=req.season, match_id=req.match_id)
    return pb.RequeueFailedResponse(match_ids=ids)


def void(service: Service, principal: Principal, req: pb.VoidMatchRequest, who: str) -> pb.MatchInfo:
    from arena.ladder.controls import void_match
    from arena.service.ops_results import get_match

    require_admin(principal, "VoidMatch")
    check_id(req.match_id)
    if not req.reason.strip():
        raise InvalidArgument("reason: a void needs a reason; it is shown publicly with the match")
    void_match(service.store, req.match_id, _reason(req.reason), who)
    return get_match(service, req.match_id)


def recompute(service: Service, principal: Principal, name: str, who: str) -> pb.RecomputeRatingsResponse:
    from arena.ladder.controls import recompute_ratings

    require_admin(principal, "RecomputeRatings")
    check_name(name, "name")
    done = recompute_ratings(service.store, name, who)
    return pb.RecomputeRatingsResponse(**done.to_dict())  # type: ignore[arg-type]


def suspend_owner(
    service: Service, principal: Principal, name: str, reason: str, who: str, *, on: bool
) -> pb.OwnerInfo:
    from arena.access import owners
    from arena.store.audit import Action, record_action

    require_admin(principal, "SuspendOwner" if on else "ReinstateOwner")
    check_name(name)
    changed = owners.suspend_owner(service.store, name, _reason(reason), on=on)
    with service.store.tx() as s:
        action = Action.SUSPEND_OWNER if on else Action.REINSTATE_OWNER
        record_action(s, who, action, f"owner {name}", f"{changed} bots; {reason or 'no reason given'}")
    return owner_info(owners.owner_info(service.store, name))


def worker_info(w) -> pb.WorkerInfo:  # arena.store.drains.Worker
    return pb.WorkerInfo(**w.to_dict())


def list_workers(service: Service, principal: Principal) -> pb.ListWorkersResponse:
    from arena.store.drains import workers

    require_admin(principal, "ListWorkers")
    with service.store.read() as s:
        return pb.ListWorkersResponse(workers=[worker_info(w) for w in workers(s)])


def drain(
    service: Service, principal: Principal, req: pb.DrainWorkerRequest, who: str, *, on: bool
) -> pb.WorkerInfo:
    from arena.store import drains
    from arena.store.audit import Action, record_action

    require_admin(principal, "DrainWorker" if on else "UndrainWorker")
    reason = _reason(req.reason)
    try:
        name = drains.check_worker(req.worker)
    except drains.DrainError as exc:
        raise InvalidArgument(f"worker: {exc}") from None
    with service.store.tx() as s:
        if on:
            drains.drain(s, name, reason)
        else:
            drains.undrain(s, name)
        record_action(s, who, Action.DRAIN if on else Action.UNDRAIN, f"worker {name}", reason)
    with service.store.read() as s:
        found = [w for w in drains.workers(s) if w.name == name or drains.covers(name, w.name)]
    return worker_info(found[0]) if found else pb.WorkerInfo(name=name, draining=on)


def list_actions(service: Service, principal: Principal, limit: int = 0) -> pb.ListAdminActionsResponse:
    from arena.store.audit import recent_actions

    require_admin(principal, "ListAdminActions")
    with service.store.read() as s:
        rows = recent_actions(s, limit)
    return pb.ListAdminActionsResponse(
        actions=[pb.AdminAction(**{**r.to_dict(), "at": str(r.to_dict()["at"])}) for r in rows]  # type: ignore[arg-type]
    )

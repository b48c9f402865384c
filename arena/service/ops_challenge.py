"""Challenges: an unrated match between the caller's bot and any active bot, queued for the workers.

A challenge is a `Match` of kind "challenge" with no season: it never touches ratings, it is
listed apart from ladder matches, and the same workers play it (`arena serve --workers`), within
the limits of `arena.service.challenge_limits` (its length, its worst-case wall time, and how many
an owner has waiting).
"""

from __future__ import annotations

from sqlalchemy import select

from arena.access.roles import Principal
from arena.logs import REQUEST
from arena.proto import arena_pb2 as pb
from arena.service.challenge_limits import check_deals, check_length, check_open, check_wall_time
from arena.service.convert import match_info
from arena.service.core import Service, require_owner
from arena.service.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied, echo
from arena.service.ops_admin import check_rules, check_time
from arena.service.ops_bots import labels_for, refuse_suspended_owner
from arena.store import models as m
from arena.store.decks import commit_decks, new_seed


def _playable(s, name: str, field: str) -> m.BotVersion:
    bot = s.scalar(select(m.Bot).where(m.Bot.name == name))
    if bot is None:
        raise NotFound(f"{field}: no bot named {echo(name)}")
    if bot.retired or bot.suspended:
        raise FailedPrecondition(f"{field}: bot {name!r} is {'retired' if bot.retired else 'suspended'}")
    built = [v for v in bot.versions if v.build_ok]
    if not built:
        raise FailedPrecondition(f"{field}: bot {name!r} has no version that built")
    return built[-1]


def challenge(service: Service, principal: Principal, req: pb.ChallengeRequest) -> pb.ChallengeResponse:
    require_owner(principal, "a challenge")
    refuse_suspended_owner(service, principal)
    rules = check_rules(list(req.rules))
    if req.deals:
        rules = check_deals(rules, req.deals)
    tc = check_time(req.time_control)
    check_wall_time(check_length(rules), tc)
    with service.store.tx() as s:
        mine = _playable(s, req.my_bot, "my_bot")
        if not principal.owns(mine.bot.owner):
            raise PermissionDenied(
                f"my_bot: bot {req.my_bot!r} is not yours; challenge with one of your own bots"
            )
        theirs = _playable(s, req.opponent, "opponent")
        if theirs.bot_id == mine.bot_id:
            raise InvalidArgument("opponent: a bot cannot challenge itself; pick another bot")
        check_open(s, principal)
        service.limiter.hit("challenge", principal.key)
        match = m.Match(
            kind="challenge",
            version0_id=mine.id,
            version1_id=theirs.id,
            rules=rules,
            time_control=tc,
            seed=new_seed(),
            requested_by=principal.name,  # "admin" for the organiser: a reserved name
            request_id=REQUEST.get() or None,  # the worker's lines about the match carry it
        )
        s.add(match)
        commit_decks(s, match)
        s.flush()
        return pb.ChallengeResponse(match=match_info(match, labels_for(s, [match]), revealed=False))

"""Bot operations of the management API: submit (streamed, capped), list, show, retire, and logs.

The same functions serve gRPC and the web. Public answers carry only public fields; build logs
and match logs go to the bot's owner and the admin (docs/security.md, "Bots").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shutil
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, selectinload

from arena.access.roles import Principal, owner_of
from arena.limits import BOTS_PAGE, BUILD_LOG_SHOWN, LOG_SHOWN, LOGS_REPLY, VERSIONS_SHOWN
from arena.proto import arena_pb2 as pb
from arena.service.builds import WAITING
from arena.service.convert import bot_info, match_info, version_info
from arena.service.core import Service, require_owner
from arena.service.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    check_id,
    echo,
)
from arena.service.quota import Admission
from arena.store import models as m
from arena.store.repo import NAME_RE, bot_named, check_spelling

FORMATS = ("tar.gz", "zip")
RECENT = 20


def check_name(name: str, field: str = "name") -> str:
    if not NAME_RE.match(name or ""):
        raise InvalidArgument(
            f"{field} {echo(name)}: use letters, digits, '_', '.', '-' (1-64, not starting with . - _)"
        )
    return name


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InvalidArgument(f"format {echo(fmt)}: expected one of {', '.join(FORMATS)}")
    return fmt


async def receive_upload(
    chunks: AsyncIterator[bytes], cap: int, dest: Path, admission: Admission | None = None
) -> int:
    """Write the arriving bytes to `dest`, refusing as soon as they pass `cap` or the room the
    upload's admission reserved in its owner's disk quota (never buffered whole)."""
    limit = cap if admission is None else min(cap, admission.room)
    total = 0
    with dest.open("wb") as out:
        async for chunk in chunks:
            total += len(chunk)
            if total > limit:
                if admission is not None:
                    raise admission.refusal(cap)
                raise ResourceExhausted(
                    f"the upload is over the {cap // (1024 * 1024)} MiB cap; make the bundle smaller"
                )
            out.write(chunk)
    if total == 0:
        raise InvalidArgument("the upload is empty: send the archive's bytes after the header")
    if admission is not None:
        admission.settle(total)
    return total


def refuse_suspended_owner(service: Service, principal: Principal) -> None:
    """PERMISSION_DENIED for an owner the organiser suspended (`arena owners suspend`): their token
    still reads, but submits and challenges nothing (docs/security.md)."""
    from arena.access.owners import OwnerSuspended, refuse_suspended

    if principal.role != "owner":
        return
    try:
        refuse_suspended(service.store, principal.owner)
    except OwnerSuspended as exc:
        raise PermissionDenied(str(exc)) from None


def submitter(service: Service, principal: Principal, name: str, owner: str = "") -> str:
    """Whose name the bot is registered under; refuses someone else's bot and non-admins naming an owner."""
    me = require_owner(principal, "submitting a bot")
    refuse_suspended_owner(service, principal)
    if owner and not principal.is_admin:
        raise PermissionDenied("only the admin may submit for another owner; leave owner empty")
    who = owner or me
    with service.store.read() as s:
        bot = bot_named(s, name)  # regardless of case: `Alice-Random` is `alice-random`
        check_spelling(bot, name)  # before the upload is read: FAILED_PRECONDITION naming the bot
        if bot is not None and not owner_of(bot.owner).same_as(owner_of(who)):
            raise PermissionDenied(f"bot {name!r} belongs to another owner; pick another name")
    return who


def admit(
    service: Service, principal: Principal, name: str = "", owner: str = "", size: int = 0
) -> Admission:
    """An upload let in before a byte of its body is read (blocking): the name and the owner when
    known, the declared `size` against the cap, one of the owner's upload slots and room in its disk
    quota (`arena.service.quota`), and last the upload budget, charged here. The caller closes the
    admission (it holds the upload's temporary folder) whatever happens next."""
    me = require_owner(principal, "submitting a bot")
    refuse_suspended_owner(service, principal)
    if name:
        submitter(service, principal, check_name(name), owner)
    cap = service.upload_cap
    if size > cap:
        raise ResourceExhausted(
            f"size {size}: over the {cap // (1024 * 1024)} MiB cap; make the bundle smaller"
        )
    admission = service.uploads.admit(service.store, me, cap, quota=not principal.is_admin)
    try:
        if size > admission.room:
            raise admission.refusal(cap)
        service.limiter.hit("upload", principal.key)
    except BaseException:
        admission.close()
        raise
    return admission


def submit_file(
    service: Service,
    principal: Principal,
    name: str,
    path: Path,
    owner: str = "",
    admission: Admission | None = None,
) -> pb.SubmitBotResponse:
    """Build and register the archive at `path` (blocking: the build runs in the sandbox). Runs on a
    build slot (`submit`); the upload budget was charged by `admit`, and the build's output is
    charged to `admission`'s disk quota before the version is registered (`Admission.charge_build`)."""
    from arena.sandbox.building import building_within
    from arena.workers.submit import submit_bundle

    check_name(name)
    who = submitter(service, principal, name, owner)
    accept, room = None, None
    if admission is not None:
        accept = functools.partial(admission.charge_build, service.store)
        room = admission.build_room(service.store)
    with unpacked(path), building_within(room):  # submit_bundle loads the same unpacked copy
        done = submit_bundle(
            service.store, path, name=name, owner=who, launcher=service.launcher, accept=accept
        )
    v = done.version
    return pb.SubmitBotResponse(version=version_info(v), new=done.new, build_log=v.build_log or "")


async def submit(
    service: Service, admission: Admission, principal: Principal, name: str, path: Path, owner: str = ""
) -> pb.SubmitBotResponse:
    """`submit_file` on one of the build slots (at most one build per owner at once); waits for a
    slot without holding a thread."""
    return await service.builds.run(
        admission.owner, functools.partial(submit_file, service, principal, name, path, owner, admission)
    )


async def submit_live(
    service: Service, admission: Admission, principal: Principal, name: str, path: Path, owner: str = ""
) -> AsyncIterator[pb.SubmitBotProgress]:
    """`submit`, yielding "waiting for a build slot" when it has to wait, then the build's output
    while it runs (the lines LiveLines shows, then `truncated` once), a heartbeat when it is quiet,
    and last the answer. Its caller has already checked, with `admit`, that the principal is the
    bot's owner or the admin."""
    from arena.sandbox.building import LiveLines, watching_builds

    loop = asyncio.get_running_loop()
    events: asyncio.Queue[pb.SubmitBotProgress | None] = asyncio.Queue()
    live, started = LiveLines(), time.monotonic()

    def send(event: pb.SubmitBotProgress | None) -> None:  # from the build's thread
        try:
            loop.call_soon_threadsafe(events.put_nowait, event)
        except RuntimeError:  # the server's loop has closed under a build still running: nobody listens
            pass

    def show(text: str) -> None:
        if not text:
            send(pb.SubmitBotProgress(running_seconds=int(time.monotonic() - started)))
            return
        lines = live.feed(text)
        shown = "".join(f"{line}\n" for line in lines if line is not None)
        if shown:
            send(pb.SubmitBotProgress(output=shown))
        if None in lines:
            send(pb.SubmitBotProgress(truncated=True))

    def build() -> pb.SubmitBotResponse:
        try:
            with watching_builds(show):
                return submit_file(service, principal, name, path, owner, admission)
        finally:
            send(None)  # after every piece of output: the queue is read in order

    def waiting() -> None:
        send(pb.SubmitBotProgress(output=WAITING.format(slots=service.builds.slots)))

    answer = asyncio.ensure_future(service.builds.run(admission.owner, build, on_wait=waiting))
    answer.add_done_callback(lambda _: send(None))  # ends the loop below when it ends before `build`
    try:
        while (event := await events.get()) is not None:
            yield event
        yield pb.SubmitBotProgress(done=await answer)
    finally:
        if not answer.done():  # the caller went away: a waiting build is dropped, a running one
            answer.cancel()  # finishes (and registers) unwatched
            answer.add_done_callback(lambda f: f.cancelled() or f.exception())


_UNPACKED: dict[Path, int] = {}  # an upload's unpacked copy in the bundle cache -> submits using it
_UNPACKING = threading.Lock()


@contextlib.contextmanager
def unpacked(archive: Path) -> Iterator[None]:
    """The uploaded archive unpacked (in the bundle cache, where `load_bundle` puts it), removed
    again once the submit is over whatever its outcome: the store keeps its own copy, and the copy
    would otherwise stay for every upload, counted in no quota. Two uploads of the same bytes share
    one copy, removed after the last."""
    from arena.sandbox.bundle import is_staged, load_bundle

    with _UNPACKING:
        bundle = load_bundle(archive)  # raises BundleError (and keeps nothing) for a bad archive
        folder = bundle.path.parent if is_staged(bundle) else None
        if folder is not None:
            _UNPACKED[folder] = _UNPACKED.get(folder, 0) + 1
    try:
        yield
    finally:
        if folder is not None:
            with _UNPACKING:
                _UNPACKED[folder] -= 1
                if not _UNPACKED[folder]:
                    del _UNPACKED[folder]
                    shutil.rmtree(folder, ignore_errors=True)


def upload_path(tmp: str | Path, fmt: str) -> Path:
    return Path(tmp) / f"upload.{check_format(fmt)}"


def _labels(s: Session, version_ids: set[int]) -> dict[int, str]:
    if not version_ids:
        return {}
    rows = s.execute(
        select(m.BotVersion.id, m.Bot.name, m.BotVersion.number)
        .join(m.Bot, m.Bot.id == m.BotVersion.bot_id)
        .where(m.BotVersion.id.in_(version_ids))
    )
    return {vid: f"{name}@{number}" for vid, name, number in rows}


def labels_for(s: Session, matches: list[m.Match]) -> dict[int, str]:
    return _labels(s, {v for x in matches for v in (x.version0_id, x.version1_id)})


def _bot(s: Session, name: str) -> m.Bot:
    bot = s.scalar(select(m.Bot).where(m.Bot.name == name))
    if bot is None:
        raise NotFound(f"no bot named {echo(name)}")
    return bot


def list_bots(
    service: Service, owner: str = "", include_retired: bool = False, limit: int = 0, page_token: str = ""
) -> pb.ListBotsResponse:
    """A page of bots in name order, at most `BOTS_PAGE` (docs/security.md: a page's bytes are bounded
    by construction); `page_token` is the last name of the page before, so pages never overlap."""
    size = min(limit or BOTS_PAGE, BOTS_PAGE)
    with service.store.read() as s:
        query = select(m.Bot).options(selectinload(m.Bot.versions)).order_by(m.Bot.name).limit(size + 1)
        if owner:
            query = query.where(m.Bot.owner == owner)
        if not include_retired:
            query = query.where(m.Bot.retired.is_(False))
        if page_token:
            query = query.where(m.Bot.name > page_token)
        found = list(s.scalars(query))
        page = found[:size]
        more = page[-1].name if len(found) > size else ""
        return pb.ListBotsResponse(bots=[bot_info(b) for b in page], next_page_token=more)


def get_bot(service: Service, name: str, recent: int = RECENT) -> pb.BotInfo:
    """A bot, its verdict counts over its revealed matches and its newest matches
    (`arena.ladder.queries`: the same reads as the web's bot page)."""
    from arena.ladder.queries import bot_record, recent_matches
    from arena.ladder.visibility import unrevealed_ids

    with service.store.read() as s:
        bot = _bot(s, name)
        out = bot_info(bot)
        ids = [v.id for v in bot.versions]
        counts = bot_record(s, bot.id, ids, shown=0).verdicts
        out.verdicts.extend(pb.VerdictCount(verdict=k, count=n) for k, n in sorted(counts.items()) if n)
        shown = recent_matches(s, ids, recent)
        hidden = unrevealed_ids(s, shown)
        labels = labels_for(s, shown)
        out.recent.extend(match_info(x, labels, revealed=x.id not in hidden) for x in shown)
        return out


def retire_bot(service: Service, principal: Principal, name: str) -> pb.BotInfo:
    with service.store.read() as s:
        owner = _bot(s, name).owner
    if not principal.owns(owner):
        raise PermissionDenied(f"bot {name!r} is not yours; only its owner or the admin may retire it")
    service.store.retire(name)
    return get_bot(service, name)


def bot_logs(
    service: Service, principal: Principal, name: str, match_id: int = 0, limit: int = 0
) -> pb.BotLogs:
    """Build logs and match logs of a bot: its owner and the admin only."""
    from arena.ladder.visibility import unrevealed_ids

    limit = min(limit or RECENT, 200)
    with service.store.read() as s:
        bot = _bot(s, name)
        if not principal.owns(bot.owner):
            raise PermissionDenied(f"the logs of {name!r} are shown only to its owner and the admin")
        out = pb.BotLogs(name=bot.name)
        out.builds.extend(
            pb.VersionBuildLog(version=v.number, build_ok=v.build_ok, log=shown_build_log(v.build_log or ""))
            for v in bot.versions[-VERSIONS_SHOWN:]
        )
        ids = {v.id for v in bot.versions}
        query = select(m.Match).where(
            m.Match.status == "done", or_(m.Match.version0_id.in_(ids), m.Match.version1_id.in_(ids))
        )
        if match_id:
            query = query.where(m.Match.id == check_id(match_id))
        matches = list(s.scalars(query.order_by(m.Match.id.desc()).limit(limit)))
        if match_id and not matches:
            raise NotFound(f"bot {name!r} played no finished match {match_id}")
        # A log may quote the bot's own hand, which the opponent of its duplicate twin holds while
        # that twin is played: an owner gets it once the twin is over too (the admin at once).
        held = set() if principal.is_admin else unrevealed_ids(s, matches)
        out.held = len(held)
        for x in matches:
            if x.id in held:
                continue
            for seat, vid in enumerate((x.version0_id, x.version1_id)):
                if vid not in ids:
                    continue
                log = s.get(m.MatchLog, (x.id, seat))
                entry = pb.MatchLogEntry(
                    match_id=x.id,
                    seat=seat,
                    verdict=str((x.verdicts or ["", ""])[seat]),
                    text=shown_log(log.text if log else ""),
                )
                if out.ByteSize() + entry.ByteSize() + 8 > LOGS_REPLY:  # 8: the entry's framing
                    out.left_out += 1
                else:
                    out.matches.append(entry)
        return out


def shown_log(text: str, most: int = LOG_SHOWN) -> str:
    """A match log as a reply carries it: whole, or its last `most` bytes after a line saying so."""
    data = text.encode()
    if len(data) <= most:
        return text
    tail = data[-(most - 200) :].decode(errors="ignore")
    cut = len(data) - len(tail.encode())
    return (
        f"[arena] the first {cut:,} bytes of this log are cut: a reply shows its last {most:,} bytes\n{tail}"
    )


def shown_build_log(text: str, most: int = BUILD_LOG_SHOWN) -> str:
    """A build log as a reply carries it: whole, or its first `most` bytes (a compiler names the real
    mistake first) and a line saying how much was cut."""
    data = text.encode()
    if len(data) <= most:
        return text
    head = data[: most - 200].decode(errors="ignore")
    cut = len(data) - len(head.encode())
    return f"{head}\n[arena] the last {cut:,} bytes of this build log are cut: a reply shows its first {most:,} bytes"

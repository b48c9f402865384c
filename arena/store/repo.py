"""The one repository API over the ladder's tables.

`Store` owns the engine. Callers that must change several facts atomically (recording a match with
its replay and rating changes) open `store.tx()` and call the session-level helpers in this module
and `arena.store.queue`; everything else uses the `Store` methods, each its own transaction.
Objects are returned detached (expire_on_commit=False, eager relations) so they can be read freely.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from arena.store.bundles import save_blob
from arena.store.db import (
    OPENED,
    READONLY_OPTION,
    StoreUnavailable,
    arena_home,
    database_url,
    make_engine,
    make_private,
    shown,
)
from arena.store.identity import filed_owner, name_key
from arena.store.migrate import upgrade
from arena.store.models import (
    Bot,
    BotVersion,
    Entry,
    Match,
    MatchLog,
    Notice,
    Owner,
    Replay,
    Season,
    SuspensionKind,
    utcnow,
)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: "$" would let a trailing newline in
#: How long after a bot is retired or suspended the jobs tell workers to stop its warm zygotes: well
#: past the 600 s after which a worker stops an unused zygote itself (arena.sandbox.warm.WARM_IDLE).
STOP_NOTICE = timedelta(hours=1)
NAME_LIMIT = 64  # the columns' width (String(64)), the same on SQLite and PostgreSQL
NAME_RULE = f"1-{NAME_LIMIT} characters from A-Z a-z 0-9 _ . -, starting with a letter or digit"


class StoreError(LookupError):
    """A missing or conflicting record; the message names it and says what to do."""


def first_line(exc: object) -> str:
    """The first line of a driver's message, at most 200 characters (drivers write paragraphs)."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


class BadName(StoreError, ValueError):
    """A bot, owner or season name outside the one rule, refused before the database sees it."""


def check_name(value: object, kind: str = "bot name") -> str:
    """`value` if it is a valid name; else BadName quoting at most 40 characters of it.

    The same rule on every database: SQLite would store 100,000 characters where PostgreSQL's
    String(64) refuses them with a driver error, so the check comes first."""
    if isinstance(value, str) and NAME_RE.match(value):
        return value
    if not isinstance(value, str):
        raise BadName(f"{kind} must be text, not {type(value).__name__}; use {NAME_RULE}")
    shown = ascii(value[:40]) + (f"... ({len(value)} characters)" if len(value) > 40 else "")
    why = "is too long" if len(value) > NAME_LIMIT else "is empty" if not value else "is not allowed"
    raise BadName(f"{kind} {shown} {why}; use {NAME_RULE}")


@dataclass(frozen=True)
class Submitted:
    version: BotVersion
    new: bool  # False when the same content was submitted before under this name


class Store:
    """The arena's persistent state (SQLite file by default, PostgreSQL by URL)."""

    def __init__(self, engine: Engine, home: Path) -> None:
        self.engine = engine
        self.home = home
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._readers = sessionmaker(
            engine.execution_options(**{READONLY_OPTION: True}), expire_on_commit=False
        )

    @classmethod
    def open(
        cls, url: str | None = None, *, home: str | Path | None = None, schema: str | None = None
    ) -> Store:
        """Connect and migrate to the newest schema."""
        from sqlalchemy.exc import DBAPIError

        target = database_url(url, home)
        engine = make_engine(target, schema=schema)  # StoreUnavailable for a URL we cannot use
        try:
            upgrade(engine)
        except DBAPIError as exc:
            engine.dispose()
            raise StoreUnavailable(
                f"cannot open the database {shown(target)!r}: {first_line(exc.orig)}; "
                "check that it runs and that --db or ARENA_DATABASE_URL names it"
            ) from None
        make_private(engine)
        OPENED.append(shown(target))
        return cls(engine, arena_home(home))

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def bundles_dir(self) -> Path:
        return self.home / "bundles"

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[Session]:
        """One transaction: commit on success, roll back on any exception."""
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session for spectators (web, standings): on SQLite it takes no write lock, so
        page loads never queue behind a running season. Anything written in it is rolled back."""
        with self._readers() as session:  # close() ends the transaction without committing it
            yield session

    # ---- bots ---------------------------------------------------------------------------------

    def add_version(
        self,
        name: str,
        owner: str,
        *,
        content_hash: str,
        path: str,
        language: str = "unknown",
        protocol: str = "grpc",
        build_ok: bool = True,
        build_log: str = "",
    ) -> Submitted:
        """Register a submission. The same content under the same name returns the existing version.

        A reserved owner name files the bot under the house (`arena.store.identity`); a live owner's
        name is filed in that owner's own spelling. A new version lifts a suspension for faults,
        never the organiser's (docs/ladder.md "Suspension")."""
        check_name(name, "bot name")
        check_name(owner, "owner")
        with self.tx() as s:
            owner = owner_spelling(s, filed_owner(owner))
            bot = bot_named(s, name)
            check_claim(bot, name, owner)
            if bot is None:
                bot = Bot(name=name, owner=owner)
                s.add(bot)
                s.flush()
            same = s.scalar(
                select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.content_hash == content_hash)
            )
            save_blob(s, content_hash, path)  # what a worker sharing no folder fetches (once per hash)
            if same is not None:
                return Submitted(same, False)
            number = (
                s.scalar(select(func.max(BotVersion.number)).where(BotVersion.bot_id == bot.id)) or 0
            ) + 1
            version = BotVersion(
                bot=bot,
                number=number,
                content_hash=content_hash,
                path=path,
                language=language,
                protocol=protocol,
                build_ok=build_ok,
                build_log=build_log,
            )
            s.add(version)
            bot.retired = False
            if bot.suspended and bot.suspension_kind == SuspensionKind.ORGANISER:
                s.add(
                    Notice(
                        bot_id=bot.id,
                        kind="still_suspended",
                        message=f"version {number} submitted; the organiser's suspension stays until "
                        "the organiser reinstates the bot",
                    )
                )
            elif bot.suspended:  # a new version is a fresh start after faults
                bot.suspended, bot.suspension_kind = False, None
                s.add(
                    Notice(
                        bot_id=bot.id,
                        kind="reinstated",
                        message=f"version {number} submitted; suspension lifted",
                    )
                )
            if not build_ok:
                s.add(Notice(bot_id=bot.id, kind="build_failed", message=f"version {number} failed to build"))
            s.flush()
            return Submitted(version, True)

    def bots(self, *, include_retired: bool = True) -> list[Bot]:
        with self.tx() as s:
            query = select(Bot).order_by(Bot.name)
            if not include_retired:
                query = query.where(Bot.retired.is_(False))
            bots = list(s.scalars(query))
            for bot in bots:
                _ = [v.bot for v in bot.versions]  # load while attached
            return bots

    def bot(self, name: str) -> Bot:
        with self.tx() as s:
            bot = find_bot(s, name)
            _ = [v.bot for v in bot.versions]
            return bot

    def version(self, ref: str) -> BotVersion:
        """Resolve `NAME` (its newest version) or `NAME@N`."""
        name, _, num = ref.partition("@")
        bot = self.bot(name)
        if not bot.versions:
            raise StoreError(f"bot {name!r} has no versions; submit one with `arena bots submit`")
        if not num:
            return bot.versions[-1]
        for v in bot.versions:
            if str(v.number) == num:
                return v
        raise StoreError(f"bot {name!r} has no version {num}; it has 1..{bot.versions[-1].number}")

    def version_by_id(self, version_id: int) -> BotVersion:
        with self.tx() as s:
            return s.get_one(BotVersion, version_id)

    def retire(self, name: str) -> None:
        with self.tx() as s:
            bot = find_bot(s, name)
            bot.retired = True
            bot.stopped_at = utcnow()
            deactivate_bot_entries(s, bot.id)

    def notices(self, name: str) -> list[Notice]:
        bot = self.bot(name)
        with self.tx() as s:
            return list(s.scalars(select(Notice).where(Notice.bot_id == bot.id).order_by(Notice.id)))

    # ---- matches (read side) --------------------------------------------------------------------

    def match(self, match_id: int) -> Match:
        with self.tx() as s:
            m = s.get(Match, match_id)
            if m is None:
                raise StoreError(f"no match {match_id}")
            return m

    def replay(self, match_id: int) -> bytes:
        with self.tx() as s:
            r = s.get(Replay, match_id)
            if r is None:
                raise StoreError(f"match {match_id} has no replay (not played yet?)")
            return r.data

    def match_log(self, match_id: int, seat: int) -> str:
        with self.tx() as s:
            log = s.get(MatchLog, (match_id, seat))
            return log.text if log else ""

    def bot_logs(self, name: str, last: int = 5) -> list[tuple[int, str, int, str]]:
        """(match id, version label, seat, text) of the bot's own seat in its `last` recorded matches."""
        bot = self.bot(name)
        ids = {v.id: v for v in bot.versions}
        with self.tx() as s:
            matches = list(
                s.scalars(
                    select(Match)
                    .where(
                        Match.status == "done", (Match.version0_id.in_(ids)) | (Match.version1_id.in_(ids))
                    )
                    .order_by(Match.id.desc())
                    .limit(last)
                )
            )
            out = []
            for m in matches:
                seat = 0 if m.version0_id in ids else 1
                log = s.get(MatchLog, (m.id, seat))
                out.append(
                    (
                        m.id,
                        ids[m.version0_id if seat == 0 else m.version1_id].label,
                        seat,
                        log.text if log else "",
                    )
                )
            return out

    def season(self, name: str) -> Season:
        with self.tx() as s:
            season = s.scalar(select(Season).where(Season.name == name))
            if season is None:
                raise StoreError(f"no season named {name!r}; create it with `arena season create {name}`")
            return season

    def seasons(self) -> list[Season]:
        with self.tx() as s:
            return list(s.scalars(select(Season).order_by(Season.id)))


def find_bot(s: Session, name: str) -> Bot:
    bot = s.scalar(select(Bot).where(Bot.name == name))
    if bot is None:
        raise StoreError(f"no bot named {name!r}; `arena bots list` shows the registered ones")
    return bot


def bot_named(s: Session, name: str) -> Bot | None:
    """The bot called `name` regardless of case (`Alice-Random` finds `alice-random`)."""
    return s.scalar(select(Bot).where(func.lower(Bot.name) == name_key(name)))


def check_spelling(bot: Bot | None, name: str) -> None:
    """StoreError naming the registered name when `bot`, the bot called `name` regardless of case,
    spells it otherwise."""
    if bot is not None and bot.name != name:
        raise StoreError(
            f"bot name {name!r} is taken by {bot.name!r} (names that differ only in case are the "
            f"same name); submit as {bot.name!r} if it is yours, or pick another name"
        )


def check_claim(bot: Bot | None, name: str, owner: str) -> None:
    """StoreError unless `owner` may submit under `name`, given `bot`, the bot of that name
    regardless of case: the name must be spelled as registered, and the bot must be `owner`'s."""
    check_spelling(bot, name)
    if bot is not None and name_key(bot.owner) != name_key(owner):
        raise StoreError(f"bot {name!r} belongs to {bot.owner!r}; pick another --name")


def owner_spelling(s: Session, owner: str) -> str:
    """`owner` as the owner of that name (regardless of case) spells it, so that its bots are filed
    under one spelling; unchanged when no owner has the name."""
    return s.scalar(select(Owner.name).where(func.lower(Owner.name) == name_key(owner))) or owner


def suspend_bot(s: Session, bot_id: int, reason: str, kind: SuspensionKind = SuspensionKind.FAULTS) -> None:
    """Suspend a bot (all its season entries stop being scheduled) and tell its owner why.

    `kind` says what lifts it: the owner's next version lifts a suspension for FAULTS (the ladder's),
    only the organiser's ReinstateBot lifts the ORGANISER's. The organiser suspending a bot already
    suspended for faults makes it the organiser's."""
    bot = s.get_one(Bot, bot_id)
    if bot.suspended and (kind == SuspensionKind.FAULTS or bot.suspension_kind == SuspensionKind.ORGANISER):
        return
    bot.suspended = True
    bot.suspension_kind = kind
    bot.suspension_reason = reason
    bot.stopped_at = utcnow()
    s.add(Notice(bot_id=bot_id, kind="suspended", message=reason))
    deactivate_bot_entries(s, bot_id)


def unplayable_paths(s: Session, now: datetime | None = None) -> tuple[str, ...]:
    """The stored bundles of bots retired or suspended in the last STOP_NOTICE that no playable bot
    shares (one bundle may be several bots' versions): a worker stops their warm zygotes (docs/sandbox.md
    "Warm start"). Only recent ones, so that every job does not carry every bot ever retired: a zygote
    left unused longer than that has been stopped by its worker anyway (WARM_IDLE)."""
    off = Bot.retired.is_(True) | Bot.suspended.is_(True)
    recent = Bot.stopped_at >= (now or utcnow()) - STOP_NOTICE
    stopped = set(s.scalars(select(BotVersion.path).join(Bot).where(off, recent)))
    if not stopped:
        return ()
    shared = set(s.scalars(select(BotVersion.path).join(Bot).where(~off, BotVersion.path.in_(stopped))))
    return tuple(sorted(stopped - shared))


def deactivate_bot_entries(s: Session, bot_id: int) -> None:
    ids = select(BotVersion.id).where(BotVersion.bot_id == bot_id)
    for entry in s.scalars(select(Entry).where(Entry.version_id.in_(ids), Entry.active.is_(True))):
        entry.active = False

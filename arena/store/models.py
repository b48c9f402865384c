"""The ladder's tables. One row per fact; a match's result, replay and rating changes are written together.

Bots have versions (one per distinct submitted content hash). A season enters bot versions as
`Entry` rows that carry the live Elo rating; matches point at entries (ladder) or only at versions
(compare). Rating changes are stored with the match that caused them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ColumnElement,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    cast,
    false,
    func,
    literal_column,
    or_,
    text,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from arena import limits


def utcnow() -> datetime:
    """Naive UTC, the same on SQLite and PostgreSQL."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class SuspensionKind(StrEnum):
    """Who suspended a bot, which says what lifts it (docs/ladder.md "Suspension")."""

    FAULTS = "faults"  # the ladder, for repeated faults: the owner's next version lifts it
    ORGANISER = "organiser"  # the organiser (SuspendBot): only the organiser lifts it (ReinstateBot)
    OWNER = "owner"  # its owner is suspended (SuspendOwner): ReinstateOwner lifts it


class Bot(Base):
    __tablename__ = "bots"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(limits.NAME.most), unique=True)
    owner: Mapped[str] = mapped_column(String(limits.NAME.most))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    suspended: Mapped[bool] = mapped_column(Boolean, default=False)
    # at most limits.SUSPENSION_REASON characters: a CHECK of migration 0008
    suspension_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # a SuspensionKind while suspended, else None
    suspension_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # when it was last retired or suspended: workers are told to stop its warm zygotes for a while
    stopped_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    versions: Mapped[list[BotVersion]] = relationship(back_populates="bot", order_by="BotVersion.number")


# Names are unique regardless of case (`Alice-Random` is `alice-random`): the name rule is ASCII, so
# SQL's lower() is the same on SQLite and PostgreSQL (migration 0007).
Index("uq_bots_name_key", func.lower(Bot.name), unique=True)


class BotVersion(Base):
    __tablename__ = "bot_versions"
    __table_args__ = (
        UniqueConstraint("bot_id", "number"),
        UniqueConstraint("bot_id", "content_hash"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(limits.HASH.most))
    path: Mapped[str] = mapped_column(Text)  # the stored copy of the bundle
    language: Mapped[str] = mapped_column(String(limits.LANGUAGE.most), default="unknown")
    protocol: Mapped[str] = mapped_column(String(limits.PROTOCOL.most), default="grpc")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    build_ok: Mapped[bool] = mapped_column(Boolean, default=True)
    build_log: Mapped[str] = mapped_column(Text, default="")
    # False: registered by `arena compare`; it enters no season until an organiser adds it
    ladder: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    bot: Mapped[Bot] = relationship(back_populates="versions", lazy="joined")

    @property
    def label(self) -> str:
        return f"{self.bot.name}@{self.number}"


class BundleBlob(Base):
    """A submitted bundle's files, once per content hash, as `arena.store.bundles.pack` writes them:
    a worker that shares no folder with the server fetches a bundle from here (migration 0009).
    Read by workers and the admin only; in no API answer (docs/security.md)."""

    __tablename__ = "bundle_blobs"
    content_hash: Mapped[str] = mapped_column(String(limits.HASH.most), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)  # bytes of `data`
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Owner(Base):
    """A person who may submit and manage bots through the API. Only a hash of the token is kept."""

    __tablename__ = "owners"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(limits.NAME.most), unique=True)
    token_hash: Mapped[str] = mapped_column(String(limits.HASH.most), unique=True)  # SHA-256 hex of the token
    # the first characters, to name a token in messages
    token_prefix: Mapped[str] = mapped_column(String(limits.TOKEN_PREFIX.most))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    rotated_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # set while the organiser suspends the owner (migration 0018): reads only, no submit or challenge
    suspended_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    suspension_reason: Mapped[str | None] = mapped_column(Text, nullable=True)


Index("uq_owners_name_key", func.lower(Owner.name), unique=True)


class Notice(Base):
    """A message for a bot's owner (suspension reasons, build failures)."""

    __tablename__ = "notices"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    kind: Mapped[str] = mapped_column(String(limits.NOTICE_KIND.most))
    message: Mapped[str] = mapped_column(Text)


class Season(Base):
    __tablename__ = "seasons"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(limits.NAME.most), unique=True)
    # draft running closing frozen
    status: Mapped[str] = mapped_column(String(limits.STATUS.most), default="draft")
    rules: Mapped[list] = mapped_column(JSON, default=list)  # ["flags=3", ...] for Rules.from_pairs
    time_control: Mapped[dict] = mapped_column(JSON, default=dict)  # {"move": 1.0, "bank": 10.0}
    duplicate: Mapped[bool] = mapped_column(Boolean, default=False)
    seed: Mapped[int] = mapped_column(BigInteger)
    scheduled: Mapped[int] = mapped_column(Integer, default=0)  # matches created so far (seed index)
    recorded: Mapped[int] = mapped_column(Integer, default=0)  # matches recorded so far (rating order)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    frozen_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    standings: Mapped[list | None] = mapped_column(JSON, nullable=True)  # frozen standings
    # {"anchors": {"random": 1000.0}, "pair_same_owner": false}; None: the defaults
    options: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    # `recorded` when the matchmaking last fitted the season for pairing (entries' pairing_elo); None: never
    pairing_fitted: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # `registry_revs.rev` when the matchmaking last found the season's entries in sync with the
    # registry (`arena.ladder.season_entries`); None: never. Equal: no registry check before a pairing
    synced_rev: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # the organiser paused it (migration 0018): no match is scheduled or started; running ones finish
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # corrections of its recorded results (voids, recomputes): part of the standings caches' key
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class RegistryRev(Base):
    """One row (id 1): a count of the changes to what decides a season's entries, bumped by database
    triggers (migration 0013) on every insert and delete of bots, bot versions and entries and on
    every update of the columns that rule (bots' retired and suspended; versions' bot, number,
    build_ok and ladder; entries' season, version and active). A pairing compares it with its
    season's `synced_rev` instead of reading the registry (issue #30). Not shown anywhere."""

    __tablename__ = "registry_revs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    rev: Mapped[int] = mapped_column(Integer, default=0)


class SeasonTally(Base):
    """A season's standings tally as some process last saved it (migration 0012): its results per
    pair of entries, each entry's last rating points and the fit's ratings, as of `recorded` results
    (`arena.ladder.tally_store`). A process starts from it and reads only the results recorded since,
    instead of the whole season. A cache of what the matches and rating changes already say: public
    figures (the standings show them), in no API answer as such (docs/security.md)."""

    __tablename__ = "season_tallies"
    # the season's id; no foreign key: saving this cache must never wait on the season's row, which
    # the runner holds FOR UPDATE while it pairs (a key check would), and seasons are never deleted
    season_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    recorded: Mapped[int] = mapped_column(Integer)  # season.recorded it is of
    data: Mapped[bytes] = mapped_column(LargeBinary)  # numpy .npz (no pickles)
    saved_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Entry(Base):
    """A bot version taking part in a season, with its live Elo rating and record."""

    __tablename__ = "entries"
    __table_args__ = (UniqueConstraint("season_id", "version_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    rating: Mapped[float] = mapped_column(Float, default=1500.0)
    start_rating: Mapped[float] = mapped_column(
        Float, default=1500.0, server_default="1500.0"
    )  # live Elo's start
    rated: Mapped[int] = mapped_column(Integer, default=0)  # matches that changed the rating
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    voids: Mapped[int] = mapped_column(Integer, default=0)
    last_scheduled: Mapped[int] = mapped_column(Integer, default=-1)  # season.scheduled when last paired
    # the season fit's rating the matchmaking pairs it on (arena.ladder.pairing_fit); None: its live Elo
    pairing_elo: Mapped[float | None] = mapped_column(Float, nullable=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    version: Mapped[BotVersion] = relationship(lazy="joined")


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (
        # migration 0010: the claim of a season's (or a kind's) oldest queued match, in id order; with
        # status first, also the open matches' reads (the running deck-mates, the open counts, the
        # expired leases): migration 0020 dropped (status, lease_expires), which no read needed
        Index("ix_matches_claim", "status", "kind", "season_id", "id"),
        # migration 0006: the reveal test (deck-mates by seed, by season and pair), a season's and a
        # bot's lists in id order (keyset pages), an entry's recent matches (the suspension check)
        Index("ix_matches_seed", "seed"),
        Index("ix_matches_season_pair", "season_id", "pair"),
        Index("ix_matches_season_order", "season_id", "id"),
        # migration 0016: after (version, id) the list filters' status and kind and the reveal
        # test's columns, so that a bot's sealed matches (`arena.ladder.visibility.sealed_done`) and
        # a bot-filtered list's capped count are read from these indexes alone (index-only scans),
        # not from a heap page per match; the id order is unchanged (id is unique)
        Index("ix_matches_version0", "version0_id", "id", "status", "kind", "seed", "season_id", "pair"),
        Index("ix_matches_version1", "version1_id", "id", "status", "kind", "seed", "season_id", "pair"),
        # migration 0019: and the other seat's entry, so the pairing's repeat cap counts an entry's
        # matches per opponent from the index alone (`arena.ladder.pairing_pick`)
        Index("ix_matches_entry0", "entry0_id", "record_seq", "entry1_id"),
        Index("ix_matches_entry1", "entry1_id", "record_seq", "entry0_id"),
        # migration 0006: a season's results in recording order from a point on (the standings' tally)
        Index("ix_matches_season_seq", "season_id", "record_seq"),
        # migration 0017: when the last match was recorded (the stuck-queue alert, arena.store.health)
        Index("ix_matches_finished", "finished_at"),
        # migration 0014: the matches each entry holds beyond its counters (queued, running, failed),
        # read by every pairing (`arena.ladder.pairing_pick`) from the index alone: it holds only those
        Index(
            "ix_matches_held",
            "season_id",
            "entry0_id",
            "entry1_id",
            "status",
            postgresql_where=text("status IN ('queued', 'running', 'failed')"),
            sqlite_where=text("status IN ('queued', 'running', 'failed')"),
        ),
        # migration 0016: the open matches' decks (seed, season and pair), a few hundred rows at any
        # size: the other side of `sealed_done`'s test, read from the index alone
        Index(
            "ix_matches_open_decks",
            "seed",
            "season_id",
            "pair",
            postgresql_where=text("status IN ('queued', 'running')"),
            sqlite_where=text("status IN ('queued', 'running')"),
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # no index of its own: ix_matches_season_pair, _order and _seq begin with it (migration 0020)
    season_id: Mapped[int | None] = mapped_column(ForeignKey("seasons.id"), nullable=True)
    # ladder final compare challenge
    kind: Mapped[str] = mapped_column(String(limits.KIND.most), default="ladder")
    # a challenge's owner
    requested_by: Mapped[str | None] = mapped_column(String(limits.NAME.most), nullable=True)
    pair: Mapped[int | None] = mapped_column(Integer, nullable=True)  # duplicate pair id (same seed)
    version0_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    version1_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    entry0_id: Mapped[int | None] = mapped_column(ForeignKey("entries.id"), nullable=True)
    entry1_id: Mapped[int | None] = mapped_column(ForeignKey("entries.id"), nullable=True)
    rules: Mapped[list] = mapped_column(JSON, default=list)
    time_control: Mapped[dict] = mapped_column(JSON, default=dict)
    seed: Mapped[int] = mapped_column(BigInteger)  # private until this match and its twin are over
    # hex; private likewise
    salt: Mapped[str] = mapped_column(String(limits.SALT.most), default="", server_default="")
    commitment: Mapped[str] = mapped_column(
        String(limits.HASH.most), default="", server_default=""
    )  # public from the start
    status: Mapped[str] = mapped_column(String(limits.STATUS.most), default="queued")  # queued running done
    lease_owner: Mapped[str | None] = mapped_column(String(limits.LEASE_OWNER.most), nullable=True)
    lease_expires: Mapped[float | None] = mapped_column(Float, nullable=True)  # epoch seconds
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # when last claimed to play
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    record_seq: Mapped[int | None] = mapped_column(Integer, nullable=True)  # order of recording
    winner: Mapped[int | None] = mapped_column(Integer, nullable=True)
    void: Mapped[bool] = mapped_column(Boolean, default=False)
    verdicts: Mapped[list] = mapped_column(JSON, default=list)
    verdict_details: Mapped[list] = mapped_column(JSON, default=list)
    lines: Mapped[list] = mapped_column(JSON, default=list)
    deals_played: Mapped[int] = mapped_column(Integer, default=0)
    duration: Mapped[float | None] = mapped_column(Float, nullable=True)
    # the organiser voided this played match, for this reason (public; migration 0018); None: not voided
    void_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the request id of the call that queued it (a challenge; migration 0018): the worker logs it
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)


#: Every match whose verdicts are not two OKs, or that is void (the open ones too: their verdicts
#: are still empty): about 1% of a ladder's history. The verdict filter of the match lists
#: (`arena.ladder.queries`) repeats this very condition, so that its rare verdicts walk this
#: partial index in id order instead of every match (migration 0015). The literal is inlined, not
#: bound: a planner matches a partial index's condition only against constants it can see.
UNUSUAL_OK = '\'["OK", "OK"]\''


def unusual(match: type[Match] = Match) -> ColumnElement[bool]:
    """True for a match of `ix_matches_unusual`: void, or its verdicts other than `["OK", "OK"]`."""
    return or_(match.void.is_(True), cast(match.verdicts, String) != literal_column(UNUSUAL_OK))


Index("ix_matches_unusual", Match.id, postgresql_where=unusual(), sqlite_where=unusual())


class Replay(Base):
    __tablename__ = "replays"
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class RatingChange(Base):
    __tablename__ = "rating_changes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id"), index=True)
    before: Mapped[float] = mapped_column(Float)
    after: Mapped[float] = mapped_column(Float)
    k: Mapped[float] = mapped_column(Float)
    score: Mapped[float] = mapped_column(Float)


class BotTally(Base):
    """A bot's finished matches against one opponent bot that ended with one verdict for it, and of
    those its wins, draws and losses (a void match is in `matches` only). Kept by the recorder
    (`arena.store.tallies`), so that a bot's page counts its results without reading its matches."""

    __tablename__ = "bot_tallies"
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    opponent_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(limits.VERDICT.most), primary_key=True)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)


class MatchLog(Base):
    """A seat's captured output for one match; shown only to that bot's owner."""

    __tablename__ = "match_logs"
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(Text, default="")


class WorkerDrain(Base):
    """A worker told to finish its current matches and take no new one (migration 0018). `name` is a
    lease owner's name or its start: a host, `host:pid`, or `host:pid:token` (`arena.store.queue.lease_owner`)."""

    __tablename__ = "worker_drains"
    name: Mapped[str] = mapped_column(String(limits.LEASE_OWNER.most), primary_key=True)
    reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    requested_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class AdminAction(Base):
    """One organiser's action: who (`actor`: the transport and address, or the local user), what,
    to what, when, and its detail (a reason, a count). The admin's log; in no public answer."""

    __tablename__ = "admin_actions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(200))
    detail: Mapped[str] = mapped_column(Text, default="", server_default="")

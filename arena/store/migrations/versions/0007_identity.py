"""who is who: reserved and case-insensitive names, the organiser's own principal, kinds of suspension

What the upgrade does, in this order:

1. `bots.suspension_kind` (`SuspensionKind`: "faults" or "organiser") is added. A bot suspended now
   gets "organiser" when its reason is the organiser's ("suspended by the organiser: ..."), else
   "faults" (the ladder's words).
2. Owners whose name is reserved (`admin`, `house`, `root`, ... below; case and the separators
   `_ . -` aside) or repeats an earlier owner's name but for case (`Alice` after `alice`) are
   renamed: the name gets the first free `-N` suffix (`admin-2`, `Alice-2`); the oldest owner of a
   name keeps it. Their tokens keep working. A case-duplicate owner's bots (filed under its exact
   spelling) and its challenges' `requested_by` follow it to the new name.
3. A reserved owner's bots are not handed to the renamed owner: before this change the organiser's
   own bots were filed under `admin` too, and the two cannot be told apart. So every bot filed under
   a reserved name goes to the house: `bots.owner` becomes `house`, which only the admin token
   manages (the organiser hands a bot back by asking its author to resubmit under a new name).
4. A bot filed under another spelling of a live owner's name (`ALICE` for `alice`) is filed under the
   owner's own spelling.
5. Bots whose names repeat an earlier bot's but for case are renamed like owners (`Alice-Random-2`),
   with a notice to the owner saying so. The oldest keeps the name. Past records, frozen standings
   and season anchors keep the name as it was.
6. Unique indexes on `lower(name)` of `bots` and `owners` make the database refuse the next
   case-duplicate (on SQLite and PostgreSQL alike: names are ASCII, see the name rule).

The downgrade drops the indexes and the column and files the house's bots under `admin` again (the
name the older code gives the organiser). The renames of steps 2, 4 and 5 stay: the older schema
accepts the new names.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07 10:45:00
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# arena.store.identity.RESERVED as of this migration, copied as a migration must be
RESERVED = frozenset(
    {
        "admin",
        "administrator",
        "arena",
        "elfern",
        "house",
        "moderator",
        "organiser",
        "organizer",
        "owner",
        "root",
        "staff",
        "superuser",
        "support",
        "system",
    }
)
HOUSE = "house"
OLD_ORGANISER = "admin"  # what the organiser's own bots were filed under before this revision
NAME_LIMIT = 64

bots = sa.table(
    "bots",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("owner", sa.String),
    sa.column("suspended", sa.Boolean),
    sa.column("suspension_reason", sa.Text),
    sa.column("suspension_kind", sa.String),
)
owners = sa.table("owners", sa.column("id", sa.Integer), sa.column("name", sa.String))
matches = sa.table("matches", sa.column("requested_by", sa.String))
notices = sa.table(
    "notices",
    sa.column("bot_id", sa.Integer),
    sa.column("created_at", sa.DateTime),
    sa.column("kind", sa.String),
    sa.column("message", sa.Text),
)


def key(name: str) -> str:
    return name.lower()


def reserved(name: str) -> bool:
    return re.sub(r"[._-]", "", name.lower()) in RESERVED


def free_name(name: str, taken: set[str]) -> str:
    """`name-N` for the smallest N >= 2 that no name in `taken` (keys) has and no rule reserves."""
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = name[: NAME_LIMIT - len(suffix)] + suffix
        if key(candidate) not in taken and not reserved(candidate):
            taken.add(key(candidate))
            return candidate
        n += 1


def _rename_owners(conn: sa.Connection) -> None:
    rows = list(conn.execute(sa.select(owners.c.id, owners.c.name).order_by(owners.c.id)))
    taken = {key(name) for _, name in rows}
    seen: set[str] = set()
    for owner_id, name in rows:
        if not reserved(name) and key(name) not in seen:
            seen.add(key(name))
            continue
        new = free_name(name, taken)
        conn.execute(owners.update().where(owners.c.id == owner_id).values(name=new))
        if not reserved(name):  # a case-duplicate: what it made goes with it (step 2)
            conn.execute(bots.update().where(bots.c.owner == name).values(owner=new))
            conn.execute(matches.update().where(matches.c.requested_by == name).values(requested_by=new))


def _house_and_spelling(conn: sa.Connection) -> None:
    for bot_id, owner in list(conn.execute(sa.select(bots.c.id, bots.c.owner))):
        if reserved(owner) and owner != HOUSE:
            conn.execute(bots.update().where(bots.c.id == bot_id).values(owner=HOUSE))
    for (name,) in list(conn.execute(sa.select(owners.c.name))):
        conn.execute(
            bots.update()
            .where(sa.func.lower(bots.c.owner) == key(name), bots.c.owner != name)
            .values(owner=name)
        )


def _rename_bots(conn: sa.Connection) -> None:
    rows = list(conn.execute(sa.select(bots.c.id, bots.c.name).order_by(bots.c.id)))
    taken = {key(name) for _, name in rows}
    seen: set[str] = set()
    now = datetime.now(UTC).replace(tzinfo=None)
    for bot_id, name in rows:
        if key(name) not in seen:
            seen.add(key(name))
            continue
        new = free_name(name, taken)
        conn.execute(bots.update().where(bots.c.id == bot_id).values(name=new))
        conn.execute(
            notices.insert().values(
                bot_id=bot_id,
                created_at=now,
                kind="renamed",
                message=f"renamed from {name!r} to {new!r}: bot names are unique regardless of case, "
                "and an older bot had this one",
            )
        )


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suspension_kind", sa.String(length=16), nullable=True))
    conn = op.get_bind()
    suspended = bots.c.suspended.is_(True)
    conn.execute(
        bots.update()
        .where(suspended, bots.c.suspension_reason.like("suspended by the organiser%"))
        .values(suspension_kind="organiser")
    )
    conn.execute(
        bots.update().where(suspended, bots.c.suspension_kind.is_(None)).values(suspension_kind="faults")
    )
    _rename_owners(conn)
    _house_and_spelling(conn)
    _rename_bots(conn)
    op.create_index("uq_bots_name_key", "bots", [sa.text("lower(name)")], unique=True)
    op.create_index("uq_owners_name_key", "owners", [sa.text("lower(name)")], unique=True)


def downgrade() -> None:
    op.drop_index("uq_owners_name_key", table_name="owners")
    op.drop_index("uq_bots_name_key", table_name="bots")
    # SQLite drops a plain column itself (3.35 and later): no copy of `bots`, whose rows other
    # tables point at (the batch mode's copy drops the table under them and fails its foreign keys)
    op.execute("ALTER TABLE bots DROP COLUMN suspension_kind")
    op.get_bind().execute(bots.update().where(bots.c.owner == HOUSE).values(owner=OLD_ORGANISER))

"""length limits on every stored string a caller can set, enforced by the database too

Each bounded column (the store's `String(N)` columns and `bots.suspension_reason`) gets a CHECK
constraint `length(col) <= N`, named `ck_<table>_<column>_length`. PostgreSQL already refused a
`varchar(N)` value over N; SQLite did not (a 5,000,000-character `language` was stored), and neither
bounded the `text` column. The figures are those of `arena.limits.COLUMNS` on the day of this
migration, copied here as a migration must be (a later change of a limit is a new migration);
tests/security/test_abuse_inputs.py checks that the migrated database and `arena.limits` agree.

Rows already over a limit: a free-text column (language, protocol, suspension reason, lease owner,
...) is cut to its maximum first, so the upgrade never fails on old data. The unique names and
hashes are not cut (two could become one); they were always held to 64 characters by the name rule,
so none can be over.

SQLite cannot add a constraint to a table, and alembic's batch mode (a copy of the table, then a
swap) fails here: foreign keys are on (`arena.store.db`), and dropping a table that other rows point
at leaves violations that are counted until the commit, even deferred. It would also copy every match.
So on SQLite the constraints are written into the table's definition in `sqlite_schema`, SQLite's own
procedure for changes that leave the stored rows as they are (https://sqlite.org/lang_altertable.html,
"making other kinds of table schema changes"): the rows already satisfy the checks (cut above), the
schema version is bumped so every connection reparses, and `PRAGMA integrity_check` must pass.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-07 10:45:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# (table, column) -> most characters: arena.limits.COLUMNS as of this migration
LIMITS: dict[str, dict[str, int]] = {
    "bots": {"name": 64, "owner": 64, "suspension_reason": 1000},
    "bot_versions": {"content_hash": 64, "language": 32, "protocol": 16},
    "owners": {"name": 64, "token_hash": 64, "token_prefix": 16},
    "notices": {"kind": 32},
    "seasons": {"name": 64, "status": 16},
    "matches": {
        "kind": 16,
        "requested_by": 64,
        "salt": 32,
        "commitment": 64,
        "status": 16,
        "lease_owner": 128,
    },
}
UNIQUE = {("bots", "name"), ("owners", "name"), ("owners", "token_hash"), ("seasons", "name")}


def name_of(table: str, column: str) -> str:
    return f"ck_{table}_{column}_length"


def _constraint(table: str, column: str, most: int) -> str:
    return f"CONSTRAINT {name_of(table, column)} CHECK (length({column}) <= {most})"


def _sqlite_rewrite(edit) -> None:  # (table, its CREATE TABLE) -> the new CREATE TABLE
    """Rewrite each bounded table's CREATE TABLE statement in place (see the docstring)."""
    bind = op.get_bind()
    version = bind.execute(sa.text("PRAGMA schema_version")).scalar_one()
    bind.execute(sa.text("PRAGMA writable_schema = ON"))
    try:
        for table in LIMITS:
            sql = bind.execute(
                sa.text("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = :t"), {"t": table}
            ).scalar_one()
            bind.execute(
                sa.text("UPDATE sqlite_schema SET sql = :sql WHERE type = 'table' AND name = :t"),
                {"sql": edit(table, sql), "t": table},
            )
        bind.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    finally:
        bind.execute(sa.text("PRAGMA writable_schema = OFF"))
    problems = [row[0] for row in bind.execute(sa.text("PRAGMA integrity_check"))]
    if problems != ["ok"]:
        raise RuntimeError(f"migration 0008: the SQLite store fails its integrity check: {problems[:3]}")


def _with_checks(table: str, sql: str) -> str:
    body = sql.rstrip().removesuffix(")").rstrip()
    added = [_constraint(table, c, most) for c, most in LIMITS[table].items()]
    return body + ", \n\t" + ", \n\t".join(added) + "\n)"


def _without_checks(table: str, sql: str) -> str:
    for column, most in LIMITS[table].items():
        sql = sql.replace(", \n\t" + _constraint(table, column, most), "")
    return sql


def upgrade() -> None:
    for table, columns in LIMITS.items():
        for column, most in columns.items():
            if (table, column) not in UNIQUE:
                op.execute(
                    f"UPDATE {table} SET {column} = substr({column}, 1, {most}) WHERE length({column}) > {most}"
                )
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rewrite(_with_checks)
        return
    for table, columns in LIMITS.items():
        for column, most in columns.items():
            op.create_check_constraint(name_of(table, column), table, f"length({column}) <= {most}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rewrite(_without_checks)
        return
    for table, columns in LIMITS.items():
        for column in columns:
            op.drop_constraint(name_of(table, column), table, type_="check")

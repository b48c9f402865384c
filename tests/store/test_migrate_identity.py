"""Migration 0007 (who is who) on a store that has the data the old rules let in: owners and bots whose
names differ only in case, an owner called `admin` beside the organiser's own bot filed under `admin`,
and suspensions of both kinds. Upgraded from 0006, down again, and up to the newest revision, on
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import IntegrityError

from arena.store.db import make_engine
from arena.store.migrate import alembic_config, upgrade

OWNERS = [(1, "alice"), (2, "Alice"), (3, "admin"), (4, "bob")]
# id, name, owner, suspension reason (None: not suspended)
BOTS = [
    (1, "alice-random", "alice", None),
    (2, "Alice-Random", "Alice", None),
    (3, "house-bot", "admin", "suspended by the organiser: it copies the house's moves"),
    (4, "crashy", "ALICE", "crashy@1 ended 3 of its last 5 matches with a fault (CRASH in 12, 13, 15)"),
    (5, "ALICE-RANDOM", "bob", None),
]


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    try:
        yield engine
    finally:
        engine.dispose()


def downgrade(engine: Engine, revision: str) -> None:
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


def _fill_at_0006(engine: Engine) -> None:
    with engine.begin() as conn:
        for oid, name in OWNERS:
            conn.execute(
                text(
                    "INSERT INTO owners (id, name, token_hash, token_prefix, created_at)"
                    " VALUES (:id, :name, :hash, 'elf_x', CURRENT_TIMESTAMP)"
                ),
                {"id": oid, "name": name, "hash": f"{oid:064d}"},
            )
        for bid, name, owner, reason in BOTS:
            conn.execute(
                text(
                    "INSERT INTO bots (id, name, owner, created_at, retired, suspended, suspension_reason)"
                    " VALUES (:id, :name, :owner, CURRENT_TIMESTAMP, false, :suspended, :reason)"
                ),
                {"id": bid, "name": name, "owner": owner, "suspended": reason is not None, "reason": reason},
            )
            conn.execute(
                text(
                    "INSERT INTO bot_versions (id, bot_id, number, content_hash, path, language, protocol,"
                    " created_at, build_ok, build_log, ladder)"
                    " VALUES (:id, :id, 1, :hash, '/b', 'python', 'grpc', CURRENT_TIMESTAMP, true, '', true)"
                ),
                {"id": bid, "hash": f"{bid:064d}"},
            )
        conn.execute(
            text(
                "INSERT INTO matches (id, kind, requested_by, version0_id, version1_id, rules, time_control,"
                " seed, salt, commitment, status, attempts, created_at, void, verdicts, verdict_details,"
                " lines, deals_played)"
                " VALUES (1, 'challenge', 'Alice', 2, 5, '[]', '{}', 7, '', '', 'queued', 0,"
                " CURRENT_TIMESTAMP, false, '[]', '[]', '[]', 0)"
            )
        )


def _rows(engine: Engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def _refused(engine: Engine, sql: str) -> bool:
    try:
        with engine.begin() as conn:
            conn.execute(text(sql))
    except IntegrityError:
        return True
    return False


ADD_BOT = (
    "INSERT INTO bots (id, name, owner, created_at, retired, suspended)"
    " VALUES ({id}, '{name}', 'bob', CURRENT_TIMESTAMP, false, false)"
)


def test_0007_renames_case_duplicates_files_admin_bots_under_the_house_and_keeps_suspension_kinds(
    engine: Engine,
) -> None:
    upgrade(engine, "0006")
    _fill_at_0006(engine)
    upgrade(engine, "0007")

    # the oldest of a name keeps it; a later case-duplicate and the reserved `admin` get `-2`
    assert _rows(engine, "SELECT id, name FROM owners ORDER BY id") == [
        (1, "alice"),
        (2, "Alice-2"),
        (3, "admin-2"),
        (4, "bob"),
    ]
    assert _rows(engine, "SELECT id, name, owner, suspended, suspension_kind FROM bots ORDER BY id") == [
        (1, "alice-random", "alice", False, None),
        (2, "Alice-Random-2", "Alice-2", False, None),  # its owner's rename follows it
        (3, "house-bot", "house", True, "organiser"),  # `admin` was the organiser's: now the house's
        (4, "crashy", "alice", True, "faults"),  # filed under the live owner's own spelling
        (5, "ALICE-RANDOM-3", "bob", False, None),
    ]
    assert _rows(engine, "SELECT requested_by FROM matches") == [("Alice-2",)]
    notices = _rows(engine, "SELECT bot_id, kind, message FROM notices ORDER BY bot_id")
    assert [(b, k) for b, k, _ in notices] == [(2, "renamed"), (5, "renamed")]
    assert "'Alice-Random' to 'Alice-Random-2'" in notices[0][2]

    # the database refuses the next case-duplicate, of a bot and of an owner
    assert _refused(engine, ADD_BOT.format(id=9, name="ALICE-random"))
    assert _refused(
        engine,
        "INSERT INTO owners (id, name, token_hash, token_prefix, created_at)"
        " VALUES (9, 'BOB', 'h9', 'elf_y', CURRENT_TIMESTAMP)",
    )

    downgrade(engine, "0006")
    assert _rows(engine, "SELECT owner FROM bots WHERE id = 3") == [("admin",)]  # the old code's name
    with engine.connect() as conn:
        columns = [c["name"] for c in inspect(conn).get_columns("bots")]
    assert "suspension_kind" not in columns
    assert not _refused(engine, ADD_BOT.format(id=9, name="ALICE-random"))  # the index is gone

    upgrade(engine)  # the newest revision keeps the rule, whatever came after 0007
    assert _rows(engine, "SELECT name FROM bots WHERE id = 9") == [("ALICE-random-4",)]
    assert _rows(engine, "SELECT owner, suspension_kind FROM bots WHERE id = 3") == [("house", "organiser")]
    assert _refused(engine, ADD_BOT.format(id=10, name="Alice-RANDOM"))

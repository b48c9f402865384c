"""The repository API and the lease queue, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select, text

from arena.store import Store, StoreError
from arena.store.bundles import content_hash, store_copy
from arena.store.models import Match, Season
from arena.store.queue import claim, lock_for_record, release, renew, requeue_abandoned


def _version(store: Store, name: str, owner: str = "o", digest: str | None = None):
    return store.add_version(name, owner, content_hash=digest or f"h-{name}", path=f"/b/{name}")


def test_versions_are_content_hashed(store: Store) -> None:
    first = store.add_version("alice", "al", content_hash="aaa", path="/x")
    again = store.add_version("alice", "al", content_hash="aaa", path="/x")
    second = store.add_version("alice", "al", content_hash="bbb", path="/y")
    assert first.new and not again.new and second.new
    assert again.version.id == first.version.id
    assert [v.number for v in store.bot("alice").versions] == [1, 2]
    assert store.version("alice").number == 2
    assert store.version("alice@1").content_hash == "aaa"
    with pytest.raises(StoreError, match="no version 7"):
        store.version("alice@7")


def test_names_and_owners_are_checked(store: Store) -> None:
    _version(store, "bob", owner="b")
    with pytest.raises(StoreError, match="belongs to 'b'"):
        store.add_version("bob", "mallory", content_hash="x", path="/x")
    with pytest.raises(StoreError, match="not allowed"):
        store.add_version("../etc", "m", content_hash="x", path="/x")
    with pytest.raises(StoreError, match="no bot named 'nobody'"):
        store.bot("nobody")


def test_retire_and_list(store: Store) -> None:
    _version(store, "a")
    _version(store, "b")
    store.retire("a")
    assert [b.name for b in store.bots()] == ["a", "b"]
    assert [b.name for b in store.bots(include_retired=False)] == ["b"]
    # a new submission brings a retired bot back
    store.add_version("a", "o", content_hash="new", path="/n")
    assert not store.bot("a").retired


def test_failed_build_is_kept_for_the_owner(store: Store) -> None:
    store.add_version("c", "o", content_hash="h", path="/c", build_ok=False, build_log="make: *** no rule")
    v = store.version("c")
    assert not v.build_ok and "no rule" in v.build_log
    assert [n.kind for n in store.notices("c")] == ["build_failed"]


def _queued_match(store: Store) -> int:
    a = _version(store, "qa").version
    b = _version(store, "qb").version
    with store.tx() as s:
        season = Season(name="q", seed=1)
        s.add(season)
        s.flush()
        m = Match(season_id=season.id, version0_id=a.id, version1_id=b.id, seed=5)
        s.add(m)
        s.flush()
        return m.id


def test_lease_claim_renew_release_and_record_guard(store: Store) -> None:
    match_id = _queued_match(store)
    with store.tx() as s:
        m = claim(s, "host:1:a", ttl=30)
        assert m is not None and m.id == match_id and m.attempts == 1
    with store.tx() as s:
        assert claim(s, "host:2:b") is None  # nothing else queued
        assert renew(s, "host:2:b", [match_id]) == 0  # not its lease
        assert renew(s, "host:1:a", [match_id]) == 1
        assert lock_for_record(s, "host:2:b", match_id) is None
        assert lock_for_record(s, "host:1:a", match_id) is not None
    with store.tx() as s:
        release(s, "host:1:a", match_id)
    with store.tx() as s:
        m = claim(s, "host:2:b")
        assert m is not None and m.attempts == 2
    with store.tx() as s:
        assert lock_for_record(s, "host:1:a", match_id) is None  # the old holder can no longer record


def test_expired_and_dead_leases_go_back_to_the_queue(store: Store) -> None:
    import socket
    import subprocess
    import sys

    match_id = _queued_match(store)
    with store.tx() as s:
        claim(s, "elsewhere:1:x", ttl=30)
    with store.tx() as s:
        assert requeue_abandoned(s) == 0  # lease still valid, owner on another host
        assert requeue_abandoned(s, now=time.time() + 60) == 1  # expired
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    with store.tx() as s:
        claim(s, f"{socket.gethostname()}:{dead.stdout.strip()}:y", ttl=600)
    with store.tx() as s:
        assert requeue_abandoned(s) == 1  # same host, pid gone: no need to wait for the lease
        assert s.get(Match, match_id).status == "queued"


def test_transaction_rolls_back_on_error(store: Store) -> None:
    with pytest.raises(RuntimeError), store.tx() as s:
        s.add(Season(name="rolled", seed=1))
        s.flush()
        raise RuntimeError("boom")
    with store.tx() as s:
        assert s.scalar(select(Season).where(Season.name == "rolled")) is None


def _head_revision() -> str:
    from alembic.script import ScriptDirectory

    from arena.store.migrate import alembic_config

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def test_migrations_are_idempotent_and_sqlite_uses_wal(database_url: str, tmp_path) -> None:
    first = Store.open(database_url, home=tmp_path)
    _version(first, "z")
    first.close()
    second = Store.open(database_url, home=tmp_path)  # upgrading again changes nothing, keeps data
    assert second.bot("z").versions[0].number == 1
    with second.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == _head_revision()
        if second.dialect == "sqlite":
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    second.close()


def test_bundle_hash_ignores_location_but_not_content(tmp_path) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    for d in (a, b):
        (d / "sub").mkdir(parents=True)
        (d / "bot.toml").write_text('run = ["python3", "bot.py"]\n')
        (d / "sub" / "x.py").write_text("print(1)\n")
    assert content_hash(a) == content_hash(b)
    (b / "sub" / "x.py").write_text("print(2)\n")
    assert content_hash(a) != content_hash(b)
    stored = store_copy(a, tmp_path / "store", content_hash(a))
    assert content_hash(stored) == content_hash(a)
    assert store_copy(a, tmp_path / "store", content_hash(a)) == stored


def test_migrations_match_the_models(store: Store) -> None:
    """A model change without its Alembic migration fails here (on each database)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from arena.store.models import Base

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_a_sqlite_store_is_readable_by_its_owner_only(tmp_path) -> None:
    """It holds seeds, salts and bots' logs (docs/security.md, "Files on disk")."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
        _version(store, "p")
        store.close()
    finally:
        os.umask(old)
    for name in ("arena.db", "arena.db-wal"):
        path = tmp_path / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    assert (tmp_path / "arena.db").exists()

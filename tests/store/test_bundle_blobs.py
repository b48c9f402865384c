"""Bundles in the database (`bundle_blobs`): stored once per content hash when a version is
registered, fetched by a worker into an empty cache of its own, and refused, leaving nothing behind,
when the stored copy is missing or does not hash to its name (BUNDLE_UNAVAILABLE)."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, text, update

from arena.sandbox.archive import MAX_BUNDLE_BYTES
from arena.store.bundles import BundleUnavailable, content_hash, fetch_bundle, pack, store_copy
from arena.store.models import BundleBlob

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_bots" / "python" / "random"


def _register(store, name: str = "random", src: Path = SAMPLE) -> str:
    digest = content_hash(src)
    stored = store_copy(src, store.bundles_dir, digest)
    store.add_version(name, "alice", content_hash=digest, path=str(stored))
    return digest


def _blobs(store) -> int:
    with store.read() as s:
        return s.scalar(select(func.count()).select_from(BundleBlob))


def _fetch(store, digest: str, cache: Path) -> Path:
    return fetch_bundle(store, digest, cache, max_bytes=MAX_BUNDLE_BYTES)


def test_registered_bundle_is_fetched_into_an_empty_cache(store, tmp_path: Path) -> None:
    digest = _register(store)
    _register(store, "random-twin")  # the same files under another name: still one blob
    assert _blobs(store) == 1
    cache = tmp_path / "worker-cache"
    got = _fetch(store, digest, cache)
    assert got == cache / digest
    assert content_hash(got) == digest
    assert (got / "bot.py").read_bytes() == (SAMPLE / "bot.py").read_bytes()
    assert sorted(os.listdir(cache)) == [digest]  # no temporary folder left


def test_pack_is_deterministic_and_keeps_links_and_modes(tmp_path: Path) -> None:
    a = tmp_path / "a"
    shutil.copytree(SAMPLE, a)
    (a / "run.sh").write_text("#!/bin/sh\n")
    (a / "run.sh").chmod(0o755)
    os.symlink("bot.py", a / "main.py")
    b = tmp_path / "b"
    shutil.copytree(a, b, symlinks=True)
    os.utime(b / "bot.py", (1, 1))
    assert pack(a) == pack(b)  # other mtimes, other folder: the same bytes
    with tarfile.open(fileobj=io.BytesIO(pack(a)), mode="r:gz") as tar:
        members = {m.name: m for m in tar}
    assert members["main.py"].issym() and members["main.py"].linkname == "bot.py"
    assert members["run.sh"].mode == 0o755 and members["bot.py"].mode == 0o644


def _refused(store, digest: str, cache: Path, words: str) -> None:
    with pytest.raises(BundleUnavailable) as err:
        _fetch(store, digest, cache)
    assert str(err.value).startswith("BUNDLE_UNAVAILABLE: ")
    assert words in str(err.value)
    assert not cache.exists() or os.listdir(cache) == []  # no half-written cache folder


def _set_blob(store, digest: str, data: bytes) -> None:
    with store.tx() as s:
        s.execute(update(BundleBlob).where(BundleBlob.content_hash == digest).values(data=data))


def test_a_tampered_blob_is_refused_and_leaves_nothing(store, tmp_path: Path) -> None:
    digest = _register(store)
    with store.read() as s:
        data = bytearray(s.scalar(select(BundleBlob.data)))
    data[len(data) // 2] ^= 0xFF  # one byte changed in the database row
    _set_blob(store, digest, bytes(data))
    # refused either as unreadable or by the hash of what it unpacks to (gzip's CRC is read last)
    _refused(store, digest, tmp_path / "cache", "the stored copy")
    _set_blob(store, digest, bytes(data[:100]))  # cut short
    _refused(store, digest, tmp_path / "cache", "does not unpack")
    # a well-formed archive of other files under this hash: unpacked, hashed, refused
    other = tmp_path / "other"
    shutil.copytree(SAMPLE, other)
    (other / "bot.py").write_text("print('not the registered bot')\n")
    _set_blob(store, digest, pack(other))
    _refused(store, digest, tmp_path / "cache", "does not hash to its name")


def test_a_missing_blob_is_refused(store, tmp_path: Path) -> None:
    digest = _register(store)
    with store.tx() as s:
        s.execute(delete(BundleBlob))
    _refused(store, digest, tmp_path / "cache", "no stored copy")


def test_an_archive_writing_through_a_link_is_refused(store, tmp_path: Path) -> None:
    digest = _register(store)
    outside = tmp_path / "outside"
    outside.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        link = tarfile.TarInfo("escape")
        link.type, link.linkname = tarfile.SYMTYPE, str(outside)
        tar.addfile(link)
        body = b"owned"
        member = tarfile.TarInfo("escape/planted")
        member.size = len(body)
        tar.addfile(member, io.BytesIO(body))
    _set_blob(store, digest, buf.getvalue())
    _refused(store, digest, tmp_path / "cache", "outside the bundle")
    assert os.listdir(outside) == []


def test_no_api_surface_reads_the_blob_table() -> None:
    """docs/security.md: the blobs are for workers and the admin only. No module behind a page, an API
    answer or a gRPC reply (web, service, access, proto) names the table or its model."""
    surfaces = [REPO / "arena" / part for part in ("web", "service", "access", "proto")]
    readers = [
        str(path.relative_to(REPO))
        for root in surfaces
        for path in root.rglob("*")
        if path.suffix in {".py", ".proto", ".html", ".js"}
        and (
            "BundleBlob" in path.read_text(errors="replace")
            or "bundle_blobs" in path.read_text(errors="replace")
        )
    ]
    assert readers == []
    assert (
        "bundle_blobs"
        in (REPO / "arena" / "store" / "migrations" / "versions" / "0009_bundle_blobs.py").read_text()
    )


def test_migration_0009_backfills_the_versions_whose_stored_copy_is_intact(
    database_url, tmp_path: Path
) -> None:
    from arena.store import Store
    from arena.store.db import make_engine
    from arena.store.migrate import upgrade

    intact = store_copy(SAMPLE, tmp_path / "bundles", content_hash(SAMPLE))
    changed = tmp_path / "changed"
    shutil.copytree(SAMPLE, changed)
    engine = make_engine(database_url)
    try:
        upgrade(engine, "0008")
        rows = [("kept", content_hash(SAMPLE), intact), ("gone", "a" * 64, tmp_path / "nowhere")]
        rows.append(("changed", content_hash(SAMPLE.parent / "greedy"), changed))  # not its hash
        with engine.begin() as conn:
            for n, (name, digest, path) in enumerate(rows, 1):
                conn.execute(
                    text(
                        "INSERT INTO bots (id, name, owner, created_at, retired, suspended) VALUES (:i, :n, 'o', CURRENT_TIMESTAMP, false, false)"
                    ),
                    {"i": n, "n": name},
                )
                conn.execute(
                    text(
                        "INSERT INTO bot_versions (bot_id, number, content_hash, path, language, protocol, created_at, build_ok, build_log, ladder) VALUES (:i, 1, :h, :p, 'python', 'grpc', CURRENT_TIMESTAMP, true, '', true)"
                    ),
                    {"i": n, "h": digest, "p": str(path)},
                )
        upgrade(engine)
    finally:
        engine.dispose()
    store = Store.open(database_url, home=tmp_path)
    try:
        with store.read() as s:
            assert s.scalars(select(BundleBlob.content_hash)).all() == [content_hash(SAMPLE)]
        got = _fetch(store, content_hash(SAMPLE), tmp_path / "cache")
        assert content_hash(got) == content_hash(SAMPLE)
    finally:
        store.close()

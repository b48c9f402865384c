"""`arena admin backup`: a consistent copy of a running store and its bundles, with a manifest.

The database is copied from one snapshot: SQLite's online backup API (one step, so the copy is the
file as of one instant while a season's writer goes on, under WAL), or `pg_dump` in its custom
format from a snapshot exported by a repeatable-read transaction that also counts the rows and lists
the bundles, so the manifest describes exactly what the dump holds. Bundle folders are
content-addressed and never change once stored, so copying them after the snapshot is consistent:
every version the snapshot names had its files written before its row.

The folder is private to the user who runs it (0700, files 0600): it holds everything the store does,
bots' sources and logs, hashed tokens and the matches' secret seeds (docs/security.md "Backups").
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, func, inspect, select, table, text
from sqlalchemy.engine import URL

from arena.bundlehash import tree_hash
from arena.store.bundles import store_copy
from arena.store.db import shown
from arena.store.migrate import stored_revision
from arena.store.models import Base, BotVersion

FORMAT = "elfern-arena-backup/1"
MANIFEST = "manifest.json"
SQLITE_FILE = "arena.db"
PG_DUMP_FILE = "arena.pgdump"
BUNDLES = "bundles"
CHUNK = 1 << 20

#: `progress(stage, done, total)`: called as long work advances (the CLI draws a bar per stage).
Progress = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    """The default progress callback: nothing to show."""


class Backend(StrEnum):
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


class BackupError(ValueError):
    """A backup that cannot be taken or used; the message names the folder or file and the fix."""


@dataclass
class Manifest:
    """What a backup folder holds, written as manifest.json beside the copies."""

    backend: Backend
    schema_revision: str | None
    database_file: str
    database_sha256: str
    database_bytes: int
    counts: dict[str, int]
    bundles: list[str]  # content hashes of the bundle folders copied under bundles/
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    source: str = ""  # the store's URL, password hidden
    pg_schema: str | None = None  # the PostgreSQL schema dumped (restored into the same one)
    arena_version: str = ""
    format: str = FORMAT

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields["backend"] = Backend(fields["backend"])
        return cls(**fields)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def table_names() -> list[str]:
    """The store's tables, parents first (the counts' order)."""
    return [t.name for t in Base.metadata.sorted_tables]


def count_rows(conn: Connection, names: list[str] | None = None) -> dict[str, int]:
    """Rows per table: `names` (a manifest's), else those of the store's tables that this database has
    (one at an older schema revision lacks the newer tables)."""
    if names is None:
        present = set(inspect(conn).get_table_names())
        names = [name for name in table_names() if name in present]
    return {name: int(conn.scalar(select(func.count()).select_from(table(name))) or 0) for name in names}


def version_bundles(conn: Connection) -> list[tuple[str, str]]:
    """(content hash, stored path) of every bot version, once per hash."""
    rows = conn.execute(select(BotVersion.content_hash, BotVersion.path).order_by(BotVersion.id))
    seen: dict[str, str] = {}
    for digest, path in rows:
        seen.setdefault(digest, path)
    return list(seen.items())


def arena_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("elfern-arena")
    except PackageNotFoundError:
        return "unknown"


def prepare_folder(dest: Path, *, force: bool) -> None:
    """`dest` as an empty folder only its owner may enter; BackupError for a non-empty one unless
    `force` (then the previous backup's files are replaced)."""
    if dest.exists() and not dest.is_dir():
        raise BackupError(f"backup folder {dest} is a file; give a new or empty folder")
    if dest.is_dir() and any(dest.iterdir()):
        if not force:
            raise BackupError(
                f"backup folder {dest} is not empty; give a new or empty folder, or --force to replace its backup"
            )
        for name in (MANIFEST, SQLITE_FILE, PG_DUMP_FILE):
            (dest / name).unlink(missing_ok=True)
        shutil.rmtree(dest / BUNDLES, ignore_errors=True)
    try:
        dest.mkdir(mode=0o700, parents=True, exist_ok=True)
        dest.chmod(0o700)
    except OSError as exc:
        raise BackupError(
            f"cannot create backup folder {dest} ({exc.strerror}); give a folder you can write"
        ) from None


def take_backup(engine: Engine, bundles_dir: Path, dest: Path, *, force: bool = False,
                progress: Progress = no_progress) -> Manifest:  # fmt: skip
    """Copy the store behind `engine` and its bundles into `dest`; the manifest written there."""
    dest = dest.resolve()
    prepare_folder(dest, force=force)
    if engine.dialect.name == Backend.SQLITE:
        manifest, versions = _sqlite_copy(engine, dest, progress)
    else:
        manifest, versions = _pg_dump(engine, dest, progress)
    manifest.bundles = copy_bundles(versions, bundles_dir, dest / BUNDLES, progress)
    manifest.source = shown(engine.url)
    manifest.arena_version = arena_version()
    write_manifest(dest, manifest)
    return manifest


def write_manifest(dest: Path, manifest: Manifest) -> None:
    path = dest / MANIFEST
    path.write_text(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    path.chmod(0o600)


def read_only_uri(path: str | Path) -> str:
    """A SQLite URI opening `path` read-only (any character in the name quoted)."""
    return f"{Path(path).resolve().as_uri()}?mode=ro"


def _sqlite_copy(engine: Engine, dest: Path, progress: Progress) -> tuple[Manifest, list[tuple[str, str]]]:
    """SQLite's online backup, in one step: a read snapshot under WAL, the writer not held up."""
    source = engine.url.database
    if not source or source == ":memory:":
        raise BackupError(
            "an in-memory SQLite store has nothing to back up; name a file in ARENA_DATABASE_URL"
        )
    out = dest / SQLITE_FILE
    progress("database", 0, 1)
    src = sqlite3.connect(read_only_uri(source), uri=True, timeout=60)
    dst = sqlite3.connect(out)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    out.chmod(0o600)
    progress("database", 1, 1)
    copy = create_engine(f"sqlite:///{out}")
    try:
        with copy.connect() as conn:
            revision, counts, bundles = stored_revision(conn), count_rows(conn), version_bundles(conn)
    finally:
        copy.dispose()
    manifest = Manifest(
        Backend.SQLITE, revision, SQLITE_FILE, file_sha256(out), out.stat().st_size, counts, []
    )
    return manifest, bundles


def libpq_target(url: URL) -> tuple[str, dict[str, str]]:
    """A libpq connection URI for `url` (no password in it: pg_dump's command line is visible to
    every user of the machine) and the environment that carries the password."""
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    plain = URL.create("postgresql", url.username, None, url.host, url.port, url.database, url.query)
    return plain.render_as_string(hide_password=False), env


def _pg_dump(engine: Engine, dest: Path, progress: Progress) -> tuple[Manifest, list[tuple[str, str]]]:
    """pg_dump (custom format) of the store's schema, from the snapshot the counts were read in."""
    out = dest / PG_DUMP_FILE
    target, env = libpq_target(engine.url)
    with engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
        snapshot = conn.scalar(text("SELECT pg_export_snapshot()"))
        schema = str(conn.scalar(text("SELECT current_schema()")))
        revision, counts, bundles = stored_revision(conn), count_rows(conn), version_bundles(conn)
        cmd = ["pg_dump", "--format=custom", f"--snapshot={snapshot}", f"--schema={schema}", "--no-owner",
               "--no-privileges", f"--file={out}", f"--dbname={target}"]  # fmt: skip
        run_pg_tool(cmd, env, "database", "dumping contents of table", len(counts), progress,
                    fix="check that pg_dump's major version is the server's")  # fmt: skip
    out.chmod(0o600)
    manifest = Manifest(Backend.POSTGRESQL, revision, PG_DUMP_FILE, file_sha256(out), out.stat().st_size, counts,
                        [], pg_schema=schema)  # fmt: skip
    return manifest, bundles


def run_pg_tool(cmd: list[str], env: dict[str, str], stage: str, marker: str, total: int, progress: Progress,
                *, fix: str) -> None:  # fmt: skip
    """Run pg_dump or pg_restore `--verbose`, advancing `stage` for each of its lines holding `marker`
    (one per table); BackupError with its first error line and `fix` if it fails."""
    try:
        proc = subprocess.Popen(
            [*cmd, "--verbose"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
    except FileNotFoundError:
        raise BackupError(
            f"{cmd[0]} is not installed; install the PostgreSQL client of the server's major version "
            "(apt install postgresql-client)"
        ) from None
    assert proc.stderr is not None  # stderr=PIPE
    done, errors = 0, []
    progress(stage, 0, total)
    with proc.stderr:
        for line in proc.stderr:
            if marker in line:
                done += 1
                progress(stage, min(done, total), total)
            elif "error" in line.lower():
                errors.append(line.strip())
    if proc.wait() != 0:
        raise BackupError(
            f"{cmd[0]} failed: {first_line(errors[0] if errors else f'exit {proc.returncode}')}; {fix}"
        )
    progress(stage, total, total)


def first_line(text_: str) -> str:
    lines = text_.strip().splitlines()
    return lines[0][:200] if lines else "no message"


def copy_bundles(
    versions: list[tuple[str, str]], bundles_dir: Path, out: Path, progress: Progress
) -> list[str]:
    """Copy each version's bundle folder (content hash, stored path) into `out/<hash>`, checking that the
    copy hashes to its name. A version whose folder is gone is still restorable from its blob in the
    database (bundle_blobs), so it is skipped; a folder that does not hash to its name is refused."""
    out.mkdir(mode=0o700, exist_ok=True)
    copied: list[str] = []
    for i, (digest, path) in enumerate(versions):
        progress("bundles", i, len(versions))
        folder = Path(path) if Path(path).is_dir() else bundles_dir / digest
        if not folder.is_dir():
            continue
        copy = store_copy(folder, out, digest)
        if tree_hash(copy) != digest:
            shutil.rmtree(copy, ignore_errors=True)
            raise BackupError(
                f"bundle {folder} does not hash to its name {digest[:12]}; it was changed on disk: "
                "run `arena admin verify-store` and resubmit that bot"
            )
        copied.append(digest)
    progress("bundles", len(versions), len(versions))
    return copied

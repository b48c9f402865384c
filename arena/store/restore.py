"""`arena admin restore`: a backup folder (arena.store.backup) put back into the configured store.

The folder is checked before anything is touched: its manifest is one of ours, its schema revision is
one this code knows (a newer one is refused, naming both revisions), and the database copy and each
bundle folder hash to what the manifest says. The store must be empty unless the caller forces it;
the servers and workers must be stopped (docs/deploy.md "Backups and restore"). After the copy the
store is migrated to this code's schema (a backup from an older release) and its row counts are
checked against the manifest.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from sqlalchemy import Engine, inspect, text, update

from arena.bundlehash import tree_hash
from arena.store.backup import (
    BUNDLES,
    FORMAT,
    MANIFEST,
    Backend,
    BackupError,
    Manifest,
    Progress,
    count_rows,
    file_sha256,
    first_line,
    libpq_target,
    no_progress,
    read_only_uri,
    run_pg_tool,
)
from arena.store.bundles import store_copy
from arena.store.db import make_private
from arena.store.migrate import check_known, upgrade
from arena.store.models import BotVersion

#: Tables whose rows make a store "in use": restoring over them needs --force.
USED_TABLES = ("owners", "bots", "seasons", "matches")


class BackupTampered(BackupError):
    """A backup whose files do not hash to its manifest: changed or damaged since it was taken."""


def read_manifest(src: Path) -> Manifest:
    path = src / MANIFEST
    if not path.is_file():
        raise BackupError(f"{src} holds no {MANIFEST}; give a folder written by `arena admin backup`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise BackupError(f"{path}: format {data.get('format')!r}, not {FORMAT}; not an arena backup")
        return Manifest.from_json(data)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        if isinstance(exc, BackupError):
            raise
        raise BackupError(
            f"{path} is not a backup manifest ({exc}); give a folder written by `arena admin backup`"
        ) from None


def check_backup(src: Path, progress: Progress = no_progress) -> Manifest:
    """The manifest of the backup in `src` once every file hashes to it; BackupTampered naming the
    first file that does not, StoreTooNew for a backup newer than this code."""
    src = src.resolve()
    manifest = read_manifest(src)
    check_known(manifest.schema_revision, f"the backup {src}")
    db = src / manifest.database_file
    progress("check database", 0, 1)
    if not db.is_file():
        raise BackupTampered(f"{db} is missing; the backup is incomplete: take a new one")
    if file_sha256(db) != manifest.database_sha256:
        raise BackupTampered(
            f"{db} does not match the sha256 in {MANIFEST}: changed since the backup; do not restore it"
        )
    progress("check database", 1, 1)
    for i, digest in enumerate(manifest.bundles):
        progress("check bundles", i, len(manifest.bundles))
        folder = src / BUNDLES / digest
        if not folder.is_dir() or tree_hash(folder) != digest:
            raise BackupTampered(
                f"bundle {folder} does not hash to its name: changed since the backup; do not restore it"
            )
    progress("check bundles", len(manifest.bundles), len(manifest.bundles))
    return manifest


def store_in_use(engine: Engine) -> dict[str, int]:
    """Rows in the tables that make a store in use (empty: nothing there to lose)."""
    with engine.connect() as conn:
        present = set(inspect(conn).get_table_names())
        found = {
            name: int(conn.scalar(text(f"SELECT count(*) FROM {name}")) or 0)
            for name in USED_TABLES
            if name in present
        }  # names from USED_TABLES
    return {k: v for k, v in found.items() if v}


def restore_backup(engine: Engine, bundles_dir: Path, src: Path, *, force: bool = False,
                   progress: Progress = no_progress) -> Manifest:  # fmt: skip
    """Put the backup in `src` into the store behind `engine` and its bundles under `bundles_dir`."""
    src = src.resolve()
    manifest = check_backup(src, progress)
    if manifest.backend != engine.dialect.name:
        raise BackupError(
            f"the backup {src} is of a {manifest.backend} store, the configured one is {engine.dialect.name}; "
            f"set ARENA_DATABASE_URL to a {manifest.backend} database"
        )
    used = store_in_use(engine)
    if used and not force:
        rows = ", ".join(f"{n} {t}" for t, n in used.items())
        raise BackupError(
            f"the store {engine.url.render_as_string(hide_password=True)!r} is not empty ({rows}); "
            "restore into an empty store, or --force to replace it (stop its servers and workers first)"
        )
    if manifest.backend == Backend.SQLITE:
        progress("restore database", 0, 1)
        _sqlite_restore(engine, src / manifest.database_file)
        progress("restore database", 1, 1)
    else:
        _pg_restore(engine, src / manifest.database_file, manifest, progress)
    with engine.connect() as conn:  # before any migration, which may add rows of its own
        counts = count_rows(conn, list(manifest.counts))
    differ = {t: (n, counts.get(t)) for t, n in manifest.counts.items() if counts.get(t) != n}
    if differ:
        raise BackupError(
            f"the restored store's row counts differ from the manifest: {differ}; restore again with --force"
        )
    upgrade(engine)  # a backup of an older release is brought to this code's schema
    for i, digest in enumerate(manifest.bundles):
        progress("restore bundles", i, len(manifest.bundles))
        bundles_dir.mkdir(parents=True, exist_ok=True)
        store_copy(src / BUNDLES / digest, bundles_dir, digest)
    progress("restore bundles", len(manifest.bundles), len(manifest.bundles))
    repoint(engine, bundles_dir, manifest.bundles)
    return manifest


def repoint(engine: Engine, bundles_dir: Path, digests: list[str]) -> None:
    """Versions name their bundle folder by path: after a restore under another ARENA_HOME, point
    each restored version at its folder there (a worker without it fetches the blob anyway)."""
    with engine.begin() as conn:
        for digest in digests:
            new = str(bundles_dir / digest)
            conn.execute(
                update(BotVersion)
                .where(BotVersion.content_hash == digest, BotVersion.path != new)
                .values(path=new)
            )


def _sqlite_restore(engine: Engine, copy: Path) -> None:
    """The copy written over the configured SQLite file through the backup API (its WAL handled)."""
    target = engine.url.database
    if not target or target == ":memory:":
        raise BackupError("cannot restore into an in-memory SQLite store; name a file in ARENA_DATABASE_URL")
    engine.dispose()
    src = sqlite3.connect(read_only_uri(copy), uri=True)
    dst = sqlite3.connect(target, timeout=60)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    make_private(engine)


def _pg_restore(engine: Engine, dump: Path, manifest: Manifest, progress: Progress) -> None:
    """pg_restore into the schema the dump was taken from, in one transaction (all or nothing).
    The schema itself is made here if missing and never dropped (`public` always exists, with its
    grants): the dump's own CREATE SCHEMA is left out of the restore."""
    with engine.connect() as conn:
        current = conn.scalar(
            text("SELECT current_schema()")
        )  # None: the search_path's schema is not made yet
    schema = str(current or manifest.pg_schema or "public")
    if manifest.pg_schema and schema != manifest.pg_schema:
        raise BackupError(
            f"the backup holds schema {manifest.pg_schema!r}, the configured store uses {schema!r}; "
            f"restore into a database whose search_path is {manifest.pg_schema!r}"
        )
    target, env = libpq_target(engine.url)
    listing = _restore_list(dump, env)
    with engine.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        for name in inspect(conn).get_table_names(
            schema=schema
        ):  # the store replaced (--force), or empty tables
            conn.execute(text(f'DROP TABLE IF EXISTS "{schema}"."{name}" CASCADE'))
    engine.dispose()
    with tempfile.NamedTemporaryFile("w", suffix=".list") as fh:
        fh.write(listing)
        fh.flush()
        cmd = ["pg_restore", "--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges",
               f"--use-list={fh.name}", f"--dbname={target}", str(dump)]  # fmt: skip
        run_pg_tool(cmd, env, "restore database", "processing data for table", len(manifest.counts), progress,
                    fix="the store is empty now: fix that and restore again")  # fmt: skip


def _restore_list(dump: Path, env: dict[str, str]) -> str:
    """The dump's table of contents without its schema entries (CREATE SCHEMA, COMMENT ON SCHEMA)."""
    try:
        done = subprocess.run(
            ["pg_restore", "--list", str(dump)], env=env, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise BackupError(
            "pg_restore is not installed; install the PostgreSQL client of the server's major version "
            "(apt install postgresql-client)"
        ) from None
    if done.returncode != 0:
        raise BackupError(f"pg_restore cannot read {dump}: {first_line(done.stderr)}; take a new backup")
    return "".join(
        line + "\n"
        for line in done.stdout.splitlines()
        if " SCHEMA - " not in line and " COMMENT - SCHEMA " not in line
    )

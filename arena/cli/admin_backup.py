"""`arena admin backup`, `restore` and `verify-store` (arena.store.backup, arena.store.restore,
arena.ladder.verify_store): progress bars on stderr, one line or `--json` on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from arena.cli.errors import ServiceLost, UserError


class DataWrong(click.ClickException):
    """The store or the backup does not hold what it should (mismatches, a tampered file): exit 1."""

    exit_code = 1


class StageBars:
    """A progress callback drawing one bar per stage on stderr (click hides it off a terminal)."""

    def __init__(self) -> None:
        self.stage = ""
        self.bar: Any = None
        self.done = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.stage, self.done = stage, 0
            self.bar = click.progressbar(length=max(total, 1), label=stage, file=sys.stderr).__enter__()
        if done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _emit(as_json: bool, summary: dict[str, Any], line: str) -> None:
    click.echo(json.dumps(summary, sort_keys=True) if as_json else line)


def _local(command: str) -> None:
    from arena.cli.remote import store_only

    store_only(f"admin {command}")


json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")


@click.command("backup")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace the backup already in FOLDER.")
@json_option
def backup(folder: Path, force: bool, as_json: bool) -> None:
    """Copy the store (a consistent snapshot, taken while the server runs) and its bundles into FOLDER,
    with a manifest of schema revision, row counts and hashes. FOLDER is made private (0700)."""
    from arena.cli.ladder_common import open_store
    from arena.store.backup import BackupError, take_backup

    _local("backup")
    store = open_store()
    bars = StageBars()
    try:
        manifest = take_backup(store.engine, store.bundles_dir, folder, force=force, progress=bars)
    except BackupError as exc:
        raise UserError(str(exc)) from None
    finally:
        bars.close()
        store.close()
    summary = manifest.to_json() | {"folder": str(folder.resolve())}
    rows = manifest.counts.get("matches", 0)
    _emit(
        as_json,
        summary,
        f"backup in {folder}: schema {manifest.schema_revision}, {rows} matches, "
        f"{len(manifest.bundles)} bundle folders, {manifest.database_bytes} bytes of {manifest.backend}",
    )


@click.command("restore")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--force", is_flag=True, help="Replace a store that is not empty (stop its servers and workers first)."
)
@json_option
def restore(folder: Path, force: bool, as_json: bool) -> None:
    """Restore the backup in FOLDER into the configured store (ARENA_DATABASE_URL, else
    $ARENA_HOME/arena.db) after checking every hash of its manifest. Stop the servers first."""
    from arena.store.backup import BackupError
    from arena.store.db import StoreUnavailable, arena_home, database_url, make_engine
    from arena.store.migrate import StoreTooNew
    from arena.store.restore import BackupTampered, restore_backup

    _local("restore")
    if not folder.is_dir():
        raise UserError(
            f"backup folder {folder} does not exist; give a folder written by `arena admin backup`"
        )
    bars = StageBars()
    try:
        engine = make_engine(database_url())
        try:
            manifest = restore_backup(engine, arena_home() / "bundles", folder, force=force, progress=bars)
        finally:
            engine.dispose()
    except BackupTampered as exc:
        raise DataWrong(str(exc)) from None
    except (BackupError, StoreTooNew) as exc:
        raise UserError(str(exc)) from None
    except StoreUnavailable as exc:
        raise ServiceLost(str(exc)) from None
    finally:
        bars.close()
    summary = manifest.to_json() | {"folder": str(folder.resolve())}
    _emit(
        as_json,
        summary,
        f"restored {folder} (taken {manifest.created_at}): {manifest.counts.get('matches', 0)} matches, "
        f"{len(manifest.bundles)} bundle folders",
    )


@click.command("verify-store")
@json_option
def verify_store(as_json: bool) -> None:
    """Check the store: every replay re-simulates to its recorded result, every bundle matches its
    hash, every season's ratings re-derive from its results. Exit 1 naming each mismatch."""
    from arena.cli.ladder_common import open_store
    from arena.ladder.verify_store import verify_store as audit_store

    _local("verify-store")
    store = open_store()
    bars = StageBars()
    try:
        audit = audit_store(store, progress=bars)
    finally:
        bars.close()
        store.close()
    summary = {
        "ok": audit.ok,
        "replays": audit.replays,
        "bundles": audit.bundles,
        "seasons": audit.seasons,
        "problems": audit.problems,
    }
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
    else:
        for p in audit.problems:
            click.echo(p)
    counted = f"{audit.replays} replays, {audit.bundles} bundles, {audit.seasons} seasons"
    if not audit.ok:
        raise DataWrong(f"{len(audit.problems)} mismatches in {counted}")
    if not as_json:
        click.echo(f"store ok: {counted} checked")

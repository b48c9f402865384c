"""`arena admin`: the organiser's operations on the store itself (run on the server's machine)."""

from __future__ import annotations

import json

import click

from arena.cli import admin_backup
from arena.cli.remote import Remote, remote_options


@click.group()
def admin() -> None:
    """Back up, restore and audit the store (local store only; run where the server runs), and read
    the organiser's log (`log`, also against a remote server with the admin token).

    Exit codes: 0 done; 1 the data is wrong (verify-store found mismatches, or a backup failed its
    hash check); 2 a mistake to fix (the message names it; a backup newer than this arena); 3 the
    database cannot be reached, or is newer than this arena.
    """


admin.add_command(admin_backup.backup)
admin.add_command(admin_backup.restore)
admin.add_command(admin_backup.verify_store)


@admin.command("log")
@click.option(
    "--limit", type=click.IntRange(1, 200), default=50, show_default=True, help="Newest actions to show."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@remote_options
def log(limit: int, as_json: bool, remote: Remote | None) -> None:
    """The organiser's log, newest first: who paused, requeued, voided, recomputed, suspended or
    drained what, and when (remotely: ListAdminActions, admin)."""
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        got = remote.call("ListAdminActions", pb.ListAdminActionsRequest(limit=limit))
        rows = [
            {
                "id": a.id,
                "at": a.at,
                "actor": a.actor,
                "action": a.action,
                "target": a.target,
                "detail": a.detail,
            }
            for a in got.actions
        ]
    else:
        from arena.cli.ladder_common import open_store
        from arena.store.audit import recent_actions

        with open_store().read() as s:
            rows = [a.to_dict() for a in recent_actions(s, limit)]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        click.echo("no organiser's action yet")
    for r in rows:
        click.echo(f"{r['at']}  {r['action']:<16} {r['target']:<28} {r['actor']}  {r['detail']}")

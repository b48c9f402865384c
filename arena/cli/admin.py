"""`arena admin`: the organiser's operations on the store itself (run on the server's machine)."""

from __future__ import annotations

import click

from arena.cli import admin_backup


@click.group()
def admin() -> None:
    """Back up, restore and audit the store (local store only; run where the server runs).

    Exit codes: 0 done; 1 the data is wrong (verify-store found mismatches, or a backup failed its
    hash check); 2 a mistake to fix (the message names it; a backup newer than this arena); 3 the
    database cannot be reached, or is newer than this arena.
    """


admin.add_command(admin_backup.backup)
admin.add_command(admin_backup.restore)
admin.add_command(admin_backup.verify_store)

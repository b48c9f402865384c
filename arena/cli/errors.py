"""User-facing errors: one line that names the bad input and the fix, never a traceback."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """Raise for any mistake the user can fix; click prints `Error: <message>` and exits 2."""

    exit_code = 2

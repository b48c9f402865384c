"""`arena sandbox ...`: inspect the bot sandbox on this machine."""

from __future__ import annotations

import sys

import click

from arena.cli.errors import UserError


@click.group()
def sandbox() -> None:
    """The bot sandbox: see what it enforces on this machine."""


@sandbox.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def check(as_json: bool) -> None:
    """Run probe bots in the bwrap sandbox and show what is enforced.

    Probes try the network (TCP to a listener on the host's 127.0.0.1, IPv6, netlink, DNS), write
    and read outside their bundle, look at other processes, fork, allocate and spin. Exits 1 when an
    essential isolation fails, 0 otherwise (warnings, such as a missing seccomp filter, do not fail).
    """
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
    from arena.sandbox.check import rows_json, run_checks

    try:
        launcher = BwrapLauncher()
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None
    if as_json:
        rows = run_checks(launcher)
        click.echo(rows_json(rows))
    else:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        with console.status("running probe bots in the sandbox..."):
            rows = run_checks(launcher)
        table = Table(
            title=f"bwrap sandbox ({'root: a uid per bot' if launcher.privileged else 'unprivileged'})"
        )
        for col in ("area", "check", "result", "detail"):
            table.add_column(col)
        for r in rows:
            result = (
                "[green]enforced[/]"
                if r.ok
                else ("[red]NOT ENFORCED[/]" if r.essential else "[yellow]missing[/]")
            )
            table.add_row(r.area, r.check, result, r.detail)
        console.print(table)
        failed = [r.check for r in rows if r.essential and not r.ok]
        console.print(
            f"[red]essential isolation failing: {', '.join(failed)}[/]"
            if failed
            else "[green]every essential isolation holds[/]"
        )
    if any(r.essential and not r.ok for r in rows):
        sys.exit(1)

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
@click.option(
    "--allow-weak-limits",
    is_flag=True,
    help="Exit 0 even when memory or pids can only be capped by rlimits here (no per-bot cgroup).",
)
def check(as_json: bool, allow_weak_limits: bool) -> None:
    """Run probe bots in the bwrap sandbox and show what is enforced.

    Probes try the network (TCP to a listener on the host's 127.0.0.1, IPv6, netlink, DNS), write
    and read outside their bundle, look at other processes, fork, allocate and spin. It also reports
    the cgroup version found (v1, v2, hybrid or none) and which limits a cgroup enforces and which only
    an rlimit, and every bot language it can run here (its runtime's version, run in the sandbox), and
    which are missing and why. A missing language does not change the exit status. Exits 1 when an essential isolation fails, or when memory or pids cannot be capped per
    bot by a cgroup (unless --allow-weak-limits); 0 otherwise (a missing seccomp filter only warns).
    """
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
    from arena.sandbox.check import enforcement, rows_json, run_checks, weak_limits
    from arena.sandbox.check_languages import language_rows

    try:
        launcher = BwrapLauncher()
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None
    if as_json:
        rows = run_checks(launcher)
        click.echo(rows_json(rows, language_rows(launcher)))
    else:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        with console.status("running probe bots in the sandbox..."):
            rows = run_checks(launcher)
            languages = language_rows(launcher)
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
        limits = Table(title="limits: how each is enforced here")
        for col in ("limit", "by", "how"):
            limits.add_column(col)
        for row in enforcement():
            limits.add_row(row["limit"], row["by"], row["how"])
        console.print(limits)
        langs = Table(title="languages: each runtime's version, run in the sandbox")
        for col in ("language", "runs here", "version, or why not"):
            langs.add_column(col)
        for lang in languages:
            ok = "[green]yes[/]" if lang.ok else "[yellow]no[/]"
            langs.add_row(lang.language, ok, lang.version or lang.detail)
        console.print(langs)
        console.print(
            f"[red]essential isolation failing: {', '.join(failed)}[/]"
            if failed
            else "[green]every essential isolation holds[/]"
        )
    weak = weak_limits(rows)
    if weak:
        from arena.sandbox import cgroups

        click.echo(
            f"{'warning' if allow_weak_limits else 'error'}: {' and '.join(weak)} cannot be capped per bot "
            f"by a cgroup here (cgroup {cgroups.detect().version}; rlimits only). "
            f"{cgroups.detect().reason or ''}".rstrip()
            + ("" if allow_weak_limits else " Pass --allow-weak-limits to accept this."),
            err=True,
        )
    if any(r.essential and not r.ok for r in rows) or (weak and not allow_weak_limits):
        sys.exit(1)

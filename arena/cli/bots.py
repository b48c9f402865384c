"""`arena bots`: submit, list, show and retire bots. Each submission is a content-hashed version."""

from __future__ import annotations

import getpass
import json

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import SANDBOX_HELP, open_store, user_errors


@click.group()
def bots() -> None:
    """Register bots for the ladder and inspect them (build logs, suspensions)."""


@bots.command("submit")
@click.argument("path", type=click.Path(exists=True))
@click.option("--name", required=True, help="The bot's ladder name (letters, digits, _ . -).")
@click.option("--owner", default=None, help="Who the bot belongs to (default: your user name).")
@click.option(
    "--sandbox",
    "launcher",
    default="bwrap",
    show_default=True,
    help="Where the build step runs. " + SANDBOX_HELP,
)
def submit(path: str, name: str, owner: str | None, launcher: str) -> None:
    """Validate, build and register the bundle at PATH (a directory, .tar.gz, .tgz or .zip)."""
    from arena.workers.submit import submit_bundle

    store = open_store()
    with user_errors():
        done = submit_bundle(store, path, name=name, owner=owner or getpass.getuser(), launcher=launcher)
    v = done.version
    if not done.new:
        click.echo(f"{name}@{v.number} unchanged (same content {v.content_hash[:12]}); nothing new submitted")
        return
    click.echo(f"submitted {name}@{v.number} ({v.language}, content {v.content_hash[:12]})")
    if not v.build_ok:
        tail = "\n".join(v.build_log.strip().splitlines()[-15:])
        raise UserError(f"{name}@{v.number}: build FAILED; it will not play. Build log tail:\n{tail}")


@bots.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--all", "show_all", is_flag=True, help="Include retired bots.")
def list_(as_json: bool, show_all: bool) -> None:
    """Registered bots with their newest version and state."""
    rows = []
    for bot in open_store().bots(include_retired=show_all):
        latest = bot.versions[-1] if bot.versions else None
        state = (
            "retired"
            if bot.retired
            else "suspended"
            if bot.suspended
            else ("build failed" if latest and not latest.build_ok else "active")
        )
        rows.append(
            {
                "name": bot.name,
                "owner": bot.owner,
                "version": latest.number if latest else None,
                "language": latest.language if latest else "",
                "state": state,
                "hash": latest.content_hash[:12] if latest else "",
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        click.echo("no bots yet; submit one with `arena bots submit PATH --name NAME`")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("bot", "owner", "version", "language", "state", "content")
    for r in rows:
        table.add_row(r["name"], r["owner"], str(r["version"]), r["language"], r["state"], r["hash"])
    Console().print(table)


@bots.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(name: str, as_json: bool) -> None:
    """A bot's versions, build logs and the notices its owner was sent (e.g. why it was suspended)."""
    store = open_store()
    with user_errors():
        bot = store.bot(name)
        notices = store.notices(name)
    data = {
        "name": bot.name,
        "owner": bot.owner,
        "retired": bot.retired,
        "suspended": bot.suspended,
        "suspension_reason": bot.suspension_reason,
        "versions": [
            {
                "number": v.number,
                "hash": v.content_hash,
                "language": v.language,
                "protocol": v.protocol,
                "build_ok": v.build_ok,
                "build_log": v.build_log,
                "path": v.path,
                "submitted": v.created_at.isoformat(timespec="seconds"),
            }
            for v in bot.versions
        ],
        "notices": [
            {"at": n.created_at.isoformat(timespec="seconds"), "kind": n.kind, "message": n.message}
            for n in notices
        ],
    }
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    state = "retired" if bot.retired else "SUSPENDED" if bot.suspended else "active"
    click.echo(f"{bot.name} (owner {bot.owner}): {state}")
    if bot.suspended:
        click.echo(f"  {bot.suspension_reason}")
    for v in data["versions"]:
        build = "built" if v["build_ok"] else "BUILD FAILED"
        click.echo(
            f"  @{v['number']}  {v['submitted']}  {v['language']}/{v['protocol']}  {v['hash'][:12]}  {build}"
        )
        if v["build_log"].strip():
            for line in v["build_log"].strip().splitlines()[-10:]:
                click.echo(f"      | {line}")
    if notices:
        click.echo("notices for the owner:")
        for n in data["notices"]:
            click.echo(f"  {n['at']}  {n['kind']}: {n['message']}")


@bots.command("retire")
@click.argument("name")
def retire(name: str) -> None:
    """Stop scheduling NAME in every season (its results stay; a new submission brings it back)."""
    with user_errors():
        open_store().retire(name)
    click.echo(f"{name} retired")


@bots.command("logs")
@click.argument("name")
@click.option("--last", type=click.IntRange(1), default=5, show_default=True, help="How many recent matches.")
def logs(name: str, last: int) -> None:
    """NAME's own output in its recent matches (its Log lines and verdicts; never the opponent's)."""
    store = open_store()
    with user_errors():
        entries = store.bot_logs(name, last)
    if not entries:
        click.echo(f"{name} has no recorded match logs yet")
    for match_id, label, seat, text in entries:
        click.echo(f"match {match_id} ({label}, seat {seat}):")
        for line in (text or "(no output)").splitlines():
            click.echo(f"  {line}")

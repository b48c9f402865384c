"""`arena bots`: submit, list, show, logs and retire bots. Each submission is a content-hashed version.

Every subcommand also works against a remote `arena serve` (`--server`, `--api-token`); the remote
halves live in arena/cli/bots_remote.py and print the same shapes."""

from __future__ import annotations

import getpass
import json

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import SANDBOX_HELP, open_store, user_errors
from arena.cli.remote import Remote, remote_options

LIST_DEFAULT = 100  # bots `arena bots list` prints unless --limit says otherwise
LIST_MOST = 10_000


@click.group()
def bots() -> None:
    """Register bots for the ladder and inspect them (build logs, suspensions).

    Every subcommand works on the local store, or with --server (ARENA_SERVER) and --api-token
    (ARENA_API_TOKEN) against a remote `arena serve`, e.g. from a bot author's own machine:

    \b
    export ARENA_SERVER=arena.example.org:50051 ARENA_API_TOKEN=elf_...
    arena bots submit ./mybot --name mybot
    arena bots logs mybot
    """


@bots.command("submit")
@click.argument("path", type=click.Path(exists=True))
@click.option("--name", required=True, help="The bot's ladder name (letters, digits, _ . -).")
@click.option(
    "--owner",
    default=None,
    help="Who the bot belongs to (default: your user name; remotely: the token's owner, and only the "
    "admin token may name another).",
)
@click.option(
    "--sandbox",
    "launcher",
    default="bwrap",
    show_default=True,
    help="Where the build step runs (local store only; a server builds in its own sandbox). " + SANDBOX_HELP,
)
@remote_options
def submit(path: str, name: str, owner: str | None, launcher: str, remote: Remote | None) -> None:
    """Validate, build and register the bundle at PATH (a directory, .tar.gz, .tgz or .zip).

    Remotely a folder is packed as a .tar.gz (without __pycache__, .git, ...) and streamed to the
    server in 64 KiB chunks; the server builds it in its sandbox before answering.
    """
    submit_one(path, name, owner, launcher, remote)


def submit_one(path: str, name: str, owner: str | None, launcher: str, remote: Remote | None) -> None:
    """`arena bots submit`'s work, locally or remotely (`arena bots house` submits through it too)."""
    from arena.workers.submit import submit_bundle

    if remote is not None:
        from arena.cli.bots_remote import submit_remote

        submit_remote(remote, path, name, owner)
        return
    from arena.sandbox.building import watching_builds

    store = open_store()
    with user_errors(), watching_builds(BuildEcho()):
        done = submit_bundle(store, path, name=name, owner=owner or getpass.getuser(), launcher=launcher)
    v = done.version
    if not done.new:
        click.echo(f"{name}@{v.number} unchanged (same content {v.content_hash[:12]}); nothing new submitted")
        return
    click.echo(f"submitted {name}@{v.number} ({v.language}, content {v.content_hash[:12]})")
    if not v.build_ok:
        raise UserError(
            f"{name}@{v.number}: build FAILED; it will not play. {failed_build(name, v.build_log)}"
        )


def failed_build(name: str, log: str) -> str:
    """A failed build's first error lines, and the command that prints its whole log."""
    from arena.sandbox.buildlog import summary

    text = summary(log, f"arena bots show {name} --json", 15)
    return text[:1].upper() + text[1:]


class BuildEcho:
    """Shows a build's output on stderr while it runs, prefixed `build | `, capped as LiveLines caps
    it (the whole log is kept: `arena bots show NAME`), with a line every few quiet seconds."""

    def __init__(self) -> None:
        import time

        from arena.sandbox.building import LiveLines

        self.live = LiveLines()
        self.started = time.monotonic()

    def __call__(self, text: str) -> None:
        import time

        if not text:
            self.beat(time.monotonic() - self.started)
            return
        for line in self.live.feed(text):
            self.line(line)

    @staticmethod
    def beat(seconds: float) -> None:
        click.echo(f"build: still running ({seconds:.0f} s)", err=True)

    @staticmethod
    def line(line: str | None) -> None:
        """One line of the build's output, or None: the rest is not shown live."""
        if line is None:
            click.echo("build: more output not shown here; `arena bots show NAME` has the log", err=True)
        else:
            click.echo(f"build | {line}", err=True)


@bots.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--all", "show_all", is_flag=True, help="Include retired bots.")
@click.option(
    "--limit",
    type=click.IntRange(1, LIST_MOST),
    default=LIST_DEFAULT,
    show_default=True,
    help="At most this many bots, in name order.",
)
@click.option("--after", default="", help="Start after this bot name (the next page of a longer list).")
@remote_options
def list_(as_json: bool, show_all: bool, limit: int, after: str, remote: Remote | None) -> None:
    """Registered bots with their newest version and state, in name order, a page at a time.

    When more bots follow, the line `more: arena bots list --after NAME` on stderr says how to
    list them (stdout stays the rows, or the JSON list with --json)."""
    from arena.cli.bots_remote import list_remote
    from arena.cli.remote import client_for

    rows, more = list_remote(client_for(remote), show_all, limit, after)
    print_bots(rows, as_json)
    if more:
        click.echo(f"more: arena bots list --after {more}" + (" --all" if show_all else ""), err=True)


def print_bots(rows: list[dict], as_json: bool) -> None:
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
@remote_options
def show(name: str, as_json: bool, remote: Remote | None) -> None:
    """A bot's versions, build logs and the notices its owner was sent (e.g. why it was suspended).

    Remotely: its versions, state, verdict counts and recent matches; build logs only with its
    owner's token or the admin's (notices and stored paths stay on the server).
    """
    if remote is not None:
        from arena.cli.bots_remote import show_remote

        print_show(show_remote(remote, name), as_json)
        return
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
                "content_hash": v.content_hash,
                "language": v.language,
                "protocol": v.protocol,
                "build_ok": v.build_ok,
                "build_log": v.build_log,
                "path": v.path,
                "created_at": v.created_at.isoformat(timespec="seconds"),
            }
            for v in bot.versions
        ],
        "notices": [
            {"at": n.created_at.isoformat(timespec="seconds"), "kind": n.kind, "message": n.message}
            for n in notices
        ],
    }
    print_show(data, as_json)


def print_show(data: dict, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    state = "retired" if data["retired"] else "SUSPENDED" if data["suspended"] else "active"
    click.echo(f"{data['name']} (owner {data['owner']}): {state}")
    if data["suspended"]:
        click.echo(f"  {data['suspension_reason']}")
    for v in data["versions"]:
        build = "built" if v["build_ok"] else "BUILD FAILED"
        click.echo(
            f"  @{v['number']}  {v['created_at']}  {v['language']}/{v['protocol']}  {v['content_hash'][:12]}  {build}"
        )
        if (v["build_log"] or "").strip() and not v["build_ok"]:
            click.echo("      " + failed_build(data["name"], v["build_log"]).replace("\n", "\n      | "))
        elif (v["build_log"] or "").strip():
            for line in v["build_log"].strip().splitlines()[-10:]:
                click.echo(f"      | {line}")
    if data.get("verdicts"):
        click.echo("verdicts: " + ", ".join(f"{k} {n}" for k, n in data["verdicts"].items()))
    for r in data.get("recent", [])[:10]:
        click.echo(f"  match {r['id']}  {r['kind']}  {r['status']}  {' vs '.join(r['versions'])}")
    if data["notices"]:
        click.echo("notices for the owner:")
        for n in data["notices"]:
            click.echo(f"  {n['at']}  {n['kind']}: {n['message']}")


@bots.command("retire")
@click.argument("name")
@remote_options
def retire(name: str, remote: Remote | None) -> None:
    """Stop scheduling NAME in every season (its results stay; a new submission brings it back).

    Remotely: only the bot's owner (its token) or the admin may retire it.
    """
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        remote.call("RetireBot", pb.RetireBotRequest(name=name))
        click.echo(f"{name} retired")
        return
    with user_errors():
        open_store().retire(name)
    click.echo(f"{name} retired")


@bots.command("logs")
@click.argument("name")
@click.option(
    "--last", type=click.IntRange(1, 200), default=5, show_default=True, help="How many recent matches."
)
@click.option("--match", "match_id", type=click.IntRange(1), default=None, help="Only this match.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: build logs and match logs.")
@remote_options
def logs(name: str, last: int, match_id: int | None, as_json: bool, remote: Remote | None) -> None:
    """NAME's own output in its recent matches (its Log lines and verdicts; never the opponent's).

    Remotely only the bot's owner (its token) and the admin may read them; anyone else gets
    PERMISSION_DENIED.
    """
    if remote is not None or as_json or match_id is not None:
        from arena.cli.bots_remote import logs_via

        logs_via(remote, name, last, match_id, as_json)
        return
    store = open_store()
    with user_errors():
        entries = store.bot_logs(name, last)
    if not entries:
        click.echo(f"{name} has no recorded match logs yet")
    for number, label, seat, text in entries:
        click.echo(f"match {number} ({label}, seat {seat}):")
        for line in (text or "(no output)").splitlines():
            click.echo(f"  {line}")


from arena.cli.bots_house import house  # noqa: E402 - attached after the group it joins

bots.add_command(house)

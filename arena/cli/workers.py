"""`arena workers`: the workers playing matches now, and draining one before it is taken down."""

from __future__ import annotations

import json

import click

from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import Remote, remote_options


@click.group()
def workers() -> None:
    """List the workers holding matches, and drain one: it finishes its current matches and takes no
    new one (a host, host:pid or a whole worker name, as `list` shows them).

    \\b
    arena workers list
    arena workers drain box2 --reason "kernel upgrade"   # every worker of host box2
    arena workers undrain box2

    Every subcommand also works against a remote `arena serve` (--server, with the admin token as
    --api-token): ListWorkers, DrainWorker, UndrainWorker. The players of `arena serve --workers`
    see a drain within a couple of seconds; Celery workers (`arena worker`) are drained by their
    runner (`arena season run --executor celery`), which claims for them.
    """


def _rows(remote: Remote | None) -> list[dict]:
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        got = remote.call("ListWorkers", pb.ListWorkersRequest())
        return [
            {
                "name": w.name,
                "running": w.running,
                "draining": w.draining,
                "drained_by": w.drained_by,
                "reason": w.reason,
            }
            for w in got.workers
        ]
    from arena.store.drains import workers as listed

    with open_store().read() as s:
        return [w.to_dict() for w in listed(s)]


@workers.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@remote_options
def list_(as_json: bool, remote: Remote | None) -> None:
    """Workers holding matches now (their lease names), and every drain (remotely: ListWorkers, admin)."""
    rows = _rows(remote)
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        click.echo("no worker holds a match now, and none is drained")
    for r in rows:
        state = (
            f"draining ({r['drained_by']}: {r['reason'] or 'no reason'})"
            if r["draining"]
            else "taking matches"
        )
        click.echo(f"{r['name']:<48} {r['running']:>3} running  {state}")


def _drain(name: str, reason: str, remote: Remote | None, on: bool) -> None:
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        remote.call(
            "DrainWorker" if on else "UndrainWorker", pb.DrainWorkerRequest(worker=name, reason=reason)
        )
        return
    from arena.store import drains
    from arena.store.audit import Action, local_actor, record_action

    with user_errors(), open_store().tx() as s:
        name = drains.check_worker(name)
        if on:
            drains.drain(s, name, reason)
        else:
            drains.undrain(s, name)
        record_action(s, local_actor(), Action.DRAIN if on else Action.UNDRAIN, f"worker {name}", reason)


@workers.command("drain")
@click.argument("name")
@click.option("--reason", default="", help="Why (the organiser's log and `arena workers list` show it).")
@remote_options
def drain(name: str, reason: str, remote: Remote | None) -> None:
    """Drain worker NAME (a host, host:pid, or a whole name): it finishes the matches it holds and
    takes no new one until `undrain` (remotely: DrainWorker, admin)."""
    _drain(name, reason, remote, True)
    click.echo(
        f"draining {name}: it finishes its current matches and takes no new one; "
        f"`arena workers list` shows when it holds none"
    )


@workers.command("undrain")
@click.argument("name")
@remote_options
def undrain(name: str, remote: Remote | None) -> None:
    """Let drained worker NAME take matches again (remotely: UndrainWorker, admin)."""
    _drain(name, "", remote, False)
    click.echo(f"{name} takes matches again")

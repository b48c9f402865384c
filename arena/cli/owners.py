"""`arena owners`: the organiser's list of people who may submit bots, each with an API token."""

from __future__ import annotations

import json

import click

from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import Remote, remote_options


@click.group()
def owners() -> None:
    """Create owners and manage their API tokens (only a hash of each token is stored).

    Hand the printed token to the owner: with it they submit bots, read their own logs and
    challenge other bots from their own machine (ARENA_API_TOKEN, or logging in on the web).

    Every subcommand also works against a remote `arena serve` (--server, with the admin token as
    --api-token): AddOwner, RotateOwner, RevokeOwner and ListOwners.
    """


def _print_token(name: str, token: str, what: str) -> None:
    click.echo(f"{what} {name}. Their API token (shown once, only its hash is kept):")
    click.echo(token)
    click.echo("They use it as ARENA_API_TOKEN, or log in with it on the web page.", err=True)


def _manage(remote: Remote, method: str, name: str):  # a protobuf message
    from arena.proto import arena_pb2 as pb

    return remote.call(method, pb.OwnerRequest(name=name))


@owners.command("add")
@click.argument("name")
@remote_options
def add(name: str, remote: Remote | None) -> None:
    """Create owner NAME and print its new token once (remotely: AddOwner, with the admin token).

    NAME may not be another owner's in other case (`Carol` beside `carol`) nor a reserved name
    (admin, house, root, system, organiser and the like: docs/security.md "Identity")."""
    if remote is not None:
        _print_token(name, _manage(remote, "AddOwner", name).token, "created owner")
        return
    from arena.access.owners import add_owner

    with user_errors():
        token = add_owner(open_store(), name)
    _print_token(name, token, "created owner")


@owners.command("rotate")
@click.argument("name")
@remote_options
def rotate(name: str, remote: Remote | None) -> None:
    """Give NAME a new token; the old one stops working at once (also lifts a revocation)."""
    if remote is not None:
        _print_token(name, _manage(remote, "RotateOwner", name).token, "new token for")
        return
    from arena.access.owners import rotate_owner

    with user_errors():
        token = rotate_owner(open_store(), name)
    _print_token(name, token, "new token for")


@owners.command("revoke")
@click.argument("name")
@remote_options
def revoke(name: str, remote: Remote | None) -> None:
    """Make NAME's token stop working; its bots stay registered (`rotate` hands out a new one)."""
    if remote is not None:
        _manage(remote, "RevokeOwner", name)
    else:
        from arena.access.owners import revoke_owner

        with user_errors():
            revoke_owner(open_store(), name)
    click.echo(f"revoked the token of {name}; `arena owners rotate {name}` issues a new one")


@owners.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@remote_options
def list_(as_json: bool, remote: Remote | None) -> None:
    """Owners, their token's first characters, state and number of bots (remotely: ListOwners, admin)."""
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        rows = [
            {
                "name": o.name,
                "token_prefix": o.token_prefix,
                "created_at": o.created_at,
                "rotated_at": o.rotated_at or None,
                "revoked": o.revoked,
                "bots": o.bots,
                "suspended": o.suspended,
                "suspension_reason": o.suspension_reason,
            }
            for o in remote.pages("ListOwners", pb.ListOwnersRequest(), "owners")
        ]
    else:
        from arena.access.owners import list_owners

        rows = [o.to_dict() for o in list_owners(open_store())]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        click.echo("no owners yet; create one with `arena owners add NAME`")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("owner", "token", "state", "bots", "created")
    for r in rows:
        table.add_row(
            str(r["name"]),
            f"{r['token_prefix']}…",
            "revoked" if r["revoked"] else "suspended" if r["suspended"] else "active",
            str(r["bots"]),
            str(r["created_at"]),
        )
    Console().print(table)


def _suspend(name: str, reason: str, remote: Remote | None, on: bool) -> int | None:
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        method = "SuspendOwner" if on else "ReinstateOwner"
        remote.call(method, pb.SuspendOwnerRequest(name=name, reason=reason))
        return None
    from arena.access.owners import suspend_owner
    from arena.store.audit import Action, local_actor, record_action

    store = open_store()
    with user_errors():
        changed = suspend_owner(store, name, reason, on=on)
    with store.tx() as s:
        action = Action.SUSPEND_OWNER if on else Action.REINSTATE_OWNER
        record_action(
            s, local_actor(), action, f"owner {name}", f"{changed} bots; {reason or 'no reason given'}"
        )
    return changed


@owners.command("suspend")
@click.argument("name")
@click.option(
    "--reason", default="", help="Why (shown to the owner and on their bots' pages; at most 500 characters)."
)
@remote_options
def suspend(name: str, reason: str, remote: Remote | None) -> None:
    """Suspend owner NAME: every bot of theirs stops being scheduled (running matches finish); their
    token still reads (their bots, logs, replays) but cannot submit or challenge (remotely:
    SuspendOwner, admin)."""
    if len(reason) > 500:
        from arena.cli.errors import UserError

        raise UserError(f"--reason is {len(reason)} characters long; at most 500")
    changed = _suspend(name, reason, remote, True)
    bots = f" and {changed} of their bots" if changed is not None else " and their bots"
    click.echo(f"suspended owner {name}{bots}; `arena owners reinstate {name}` lifts it")


@owners.command("reinstate")
@click.argument("name")
@click.option("--reason", default="", help="A note for the owner and the organiser's log.")
@remote_options
def reinstate(name: str, reason: str, remote: Remote | None) -> None:
    """Reinstate owner NAME: submitting and challenging work again, and the bots the owner's
    suspension stopped play again (a bot the organiser suspended on its own stays suspended)
    (remotely: ReinstateOwner, admin)."""
    changed = _suspend(name, reason, remote, False)
    bots = f"; {changed} of their bots play again" if changed is not None else ""
    click.echo(f"reinstated owner {name}{bots}")

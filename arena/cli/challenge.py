"""`arena challenge MYBOT OPPONENT`: queue an unrated match between your bot and any active bot.

Remotely it is the server's Challenge call (your token must own MYBOT; rate-limited per owner).
Locally the same operation queues the match in the local store as the admin; the server's match
workers play challenges (kind "challenge", never rated, listed by `arena matches --kind challenge`).
"""

from __future__ import annotations

import json

import click

from arena.cli.errors import UserError
from arena.cli.remote import Remote, client_for, remote_options, with_remote


def time_control(text: str | None):  # a referee_pb2.TimeControl
    """`move=1s,bank=10s` -> TimeControl with only the given clocks set (the rest: the server's defaults)."""
    from arena.cli.ladder_common import parse_time
    from arena.proto import referee_pb2

    if not text:
        return referee_pb2.TimeControl()
    seconds = parse_time(text)
    given = {part.split("=", 1)[0].strip() for part in text.split(",") if "=" in part}
    ms = {f"{k}_ms": int(round(float(v) * 1000)) for k, v in seconds.items() if k in given}
    return referee_pb2.TimeControl(**ms)


@click.command()
@click.argument("my_bot", metavar="MYBOT")
@click.argument("opponent")
@click.option("--deals", type=click.IntRange(1, 200), default=None, help="Play exactly N deals.")
@click.option(
    "--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s), e.g. --rules scoring=altenburg."
)
@click.option("--time", "time_text", default=None, metavar="move=1s,bank=10s", help="Clocks of the match.")
@click.option("--json", "as_json", is_flag=True, help="Print the queued match as JSON.")
@remote_options
def challenge(
    my_bot: str,
    opponent: str,
    deals: int | None,
    rules: tuple[str, ...],
    time_text: str | None,
    as_json: bool,
    remote: Remote | None,
) -> None:
    """Queue an unrated match between your bot MYBOT and OPPONENT (any active bot).

    It never changes ratings; follow it with `arena matches --kind challenge` or `arena watch ID`.
    """
    from arena.cli.ladder_common import parse_rules
    from arena.cli.matches import match_row
    from arena.proto import arena_pb2 as pb

    if my_bot == opponent:
        raise UserError("OPPONENT: a bot cannot challenge itself; pick another bot")
    request = pb.ChallengeRequest(
        my_bot=my_bot,
        opponent=opponent,
        rules=parse_rules(rules, None),
        deals=deals or 0,
        time_control=time_control(time_text),
    )
    match = client_for(remote).call("Challenge", request).match
    row = match_row(match)
    if as_json:
        click.echo(json.dumps(row, indent=1))
        return
    where = f" --server {remote.where.given}" if remote is not None else ""
    click.echo(
        f"challenge queued: match {match.id}, {' vs '.join(match.players)} (unrated, {match.status}); "
        f"deck commitment {match.commitment[:16]}…"
    )
    if remote is not None:
        click.echo(f"follow it: `arena watch {match.id}{where}` or `arena matches --kind challenge{where}`")
    else:
        click.echo(
            "follow it: `arena matches --kind challenge` (queued in the local store; match workers play it)"
        )


challenge.help = with_remote(challenge.help, "Locally it queues the match in the local store.")

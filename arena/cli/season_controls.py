"""The organiser's controls of `arena season`: pause, resume, requeue, void and recompute, each on
the local store or, with --server and the admin token, on a remote `arena serve` (PauseSeason,
ResumeSeason, RequeueFailed, VoidMatch, RecomputeRatings). Each is written in the organiser's log
(`arena admin log`); docs/deploy.md has a runbook for each."""

from __future__ import annotations

import json

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import Remote, remote_options


def _actor() -> str:
    from arena.store.audit import local_actor

    return local_actor()


def _pause(name: str, remote: Remote | None, on: bool) -> None:
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        remote.call("PauseSeason" if on else "ResumeSeason", pb.SeasonRequest(name=name))
    else:
        from arena.ladder.controls import pause_season

        with user_errors():
            pause_season(open_store(), name, _actor(), on=on)
    if on:
        click.echo(
            f"season {name} paused: no match starts, running ones finish; the standings say so. "
            f"`arena season resume {name}` goes on"
        )
    else:
        click.echo(f"season {name} resumed: the workers schedule its matches again")


@click.command("pause")
@click.argument("name")
@remote_options
def pause(name: str, remote: Remote | None) -> None:
    """Pause season NAME: nothing of it is scheduled or started, running matches finish and are
    recorded; public on its standings (remotely: PauseSeason, admin)."""
    _pause(name, remote, True)


@click.command("resume")
@click.argument("name")
@remote_options
def resume(name: str, remote: Remote | None) -> None:
    """Resume a paused season NAME (remotely: ResumeSeason, admin)."""
    _pause(name, remote, False)


@click.command("requeue")
@click.argument("name", required=False, default="")
@click.option(
    "--match", "match_id", type=click.IntRange(1), default=None, help="Requeue this one failed match."
)
@click.option("--json", "as_json", is_flag=True, help="Print the requeued ids as JSON.")
@remote_options
def requeue(name: str, match_id: int | None, as_json: bool, remote: Remote | None) -> None:
    """Put the failed matches of season NAME (or one, --match ID) back in the queue with their
    attempts counted afresh (remotely: RequeueFailed, admin). `arena matches list --status failed`
    shows them; fix what failed them first (a worker's disk, a launcher) or they fail again."""
    if not name and match_id is None:
        raise UserError("give a season NAME, or --match ID; e.g. `arena season requeue autumn`")
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        ids = list(
            remote.call(
                "RequeueFailed", pb.RequeueFailedRequest(season=name, match_id=match_id or 0)
            ).match_ids
        )
    else:
        from arena.ladder.controls import requeue_failed

        with user_errors():
            ids = requeue_failed(open_store(), _actor(), season=name, match_id=match_id or 0)
    if as_json:
        click.echo(json.dumps({"requeued": ids}))
    elif ids:
        click.echo(
            f"requeued {len(ids)} failed match{'es' * (len(ids) != 1)}: {', '.join(map(str, ids[:20]))}"
        )
    else:
        click.echo("no failed match to requeue")


@click.command("void")
@click.argument("match_id", type=click.IntRange(1))
@click.option("--reason", required=True, help="Why (shown publicly with the match; at most 500 characters).")
@remote_options
def void(match_id: int, reason: str, remote: Remote | None) -> None:
    """Void played match MATCH_ID for --reason: its result stops counting, its season's ratings are
    recomputed from the remaining results (what `arena season verify` checks), its bots' records
    corrected, and the match shows as void with the reason (remotely: VoidMatch, admin)."""
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        season = remote.call("VoidMatch", pb.VoidMatchRequest(match_id=match_id, reason=reason)).season
    else:
        from arena.ladder.controls import void_match
        from arena.store.models import Season

        store = open_store()
        with user_errors():
            m = void_match(store, match_id, reason, _actor())
        with store.read() as s:
            season = s.get_one(Season, m.season_id).name if m.season_id else ""
    where = f"; season {season}'s ratings recomputed (`arena standings {season}`)" if season else ""
    click.echo(f"match {match_id} voided: {reason.strip()}{where}")


@click.command("recompute")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
@remote_options
def recompute(name: str, as_json: bool, remote: Remote | None) -> None:
    """Recompute season NAME's live ratings, records and rating changes from its stored results, as
    `arena season verify` replays them (remotely: RecomputeRatings, admin)."""
    if remote is not None:
        from arena.proto import arena_pb2 as pb

        got = remote.call("RecomputeRatings", pb.SeasonRequest(name=name))
        done = {
            k: getattr(got, k) for k in ("season", "entries", "changed_entries", "changed_ratings", "results")
        }
    else:
        from arena.ladder.controls import recompute_ratings

        with user_errors():
            done = recompute_ratings(open_store(), name, _actor()).to_dict()
    if as_json:
        click.echo(json.dumps(done, sort_keys=True))
        return
    click.echo(
        f"season {name}: {done['results']} results replayed; {done['changed_entries']} of {done['entries']} "
        f"entries and {done['changed_ratings']} rating changes corrected"
    )


COMMANDS = (pause, resume, requeue, void, recompute)

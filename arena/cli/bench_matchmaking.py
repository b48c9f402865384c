"""`arena bench matchmaking`: the ladder's matchmaking rule against the rule before it, side by side
(arena/bench/matchmaking.py)."""

from __future__ import annotations

from collections.abc import Callable

import click

from arena.cli.bench_report import emit, json_option, with_progress


def _size(text: str) -> tuple[int, int]:
    try:
        bots, games = (int(x) for x in text.split("x"))
    except ValueError:
        raise click.BadParameter(f"{text!r}: write BOTSxGAMES, e.g. 30x60 (30 bots, 60 games each)") from None
    if not (4 <= bots <= 2000 and 2 <= games <= 1000):
        raise click.BadParameter(f"{text!r}: bots must be 4-2000 and games per bot 2-1000")
    return bots, games


@click.command("matchmaking")
@click.option(
    "--size",
    "sizes",
    multiple=True,
    default=("30x60", "200x100"),
    show_default=True,
    help="A field to simulate, BOTSxGAMES (bots, games per bot); repeat for several.",
)
@click.option(
    "--seeds", type=click.IntRange(1, 1000), default=20, show_default=True, help="Seasons per size and rule."
)
@click.option(
    "--first-seed", type=click.IntRange(0), default=0, show_default=True, help="The first season's seed."
)
@json_option
def matchmaking(sizes: tuple[str, ...], seeds: int, first_seed: int, as_json: bool) -> None:
    """The ladder's matchmaking (the least certain result, a repeat cap, within reach) against the
    rule before it (Halite's: nearest rating plus a random offset), on simulated seasons.

    Each seed's field (true ratings N(1500, 200)) is played once under each rule, paired on the fit
    as the ladder pairs. Per rule: the Spearman rank correlation of the final fit with the true order
    (mean ± sd over the seeds, and the new rule's paired gain with its standard error and the seeds
    it won and lost), the 95% intervals' coverage overall and of the top and bottom tenth (target
    93-97%), the share of bots whose rank by win rate is off their rank in the table by more than a
    tenth of the field (W-D-L contradicting the table), and the distinct opponents a bot met.
    """
    from arena.bench.matchmaking import run

    parsed = tuple(_size(s) for s in sizes)

    def work(progress: Callable[[float], None]) -> dict:
        return run(progress, parsed, seeds, first_seed)

    r = with_progress("matchmaking benchmark", work, as_json)
    rows = []
    for g in r["sizes"]:
        for rule in (r["baseline"], r["new"]):
            x = g["rules"][rule]
            rows.append(
                (
                    f"{g['bots']} bots x {g['games_per_bot']} games, {rule}",
                    f"{x['spearman_mean']:.4f}",
                    f"± {x['spearman_sd']:.4f} Spearman; coverage {x['coverage']:.3f}, extremes "
                    f"{x['coverage_extremes']:.3f} ({x['cases']:,} cases); contradicted {x['contradicted']:.3f}; "
                    f"{x['opponents']} opponents a bot",
                )
            )
        rows.append(
            (
                f"{g['bots']} bots, {r['new']} - {r['baseline']}",
                f"{g['spearman_gain_mean']:+.4f}",
                f"± {g['spearman_gain_se']:.4f} (se); better on {g['seeds_better']} of "
                f"{g['seeds'][1] - g['seeds'][0] + 1} seeds, worse on {g['seeds_worse']}",
            )
        )
    emit(
        r,
        as_json,
        f"matchmaking benchmark: {seeds} seeds a size, seeds {first_seed}-{first_seed + seeds - 1}",
        rows,
        "coverage target 0.93-0.97; contradicted: share of bots whose win-rate rank is off their rank by > a tenth of the field",
    )

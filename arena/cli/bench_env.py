"""`arena bench env`: the training environments' steps per second against the engine's own playout."""

from __future__ import annotations

import click

from arena.cli.bench_report import emit, json_option, with_progress

LABELS = {
    "engine_playout": "engine     Deal.playout (baseline)",
    "engine_cards": "engine     Match.play, card by card",
    "pettingzoo": "pettingzoo elfern_v0 step + last",
    "gymnasium": "gymnasium  Elfern-v0 step, vs random",
    "openspiel": "openspiel  python_elfern apply + tensor",
}


@click.command("env")
@click.option("--seconds", type=click.FloatRange(0.5, 600), default=5.0, show_default=True,
              help="CPU seconds to spend in total, shared by the variants.")  # fmt: skip
@json_option
def env(seconds: float, as_json: bool) -> None:
    """Steps per second of the training environments (docs/training.md), one card a step, against the
    engine's own random playout in cards per second, measured in the same run on one core.

    Needs the `rl` extra (gymnasium, pettingzoo, open_spiel).
    """
    from arena.extras import MissingExtra

    try:
        from arena.bench.env import run  # imports gymnasium, pettingzoo and pyspiel when it runs
        from arena.env import gym_env, openspiel_game, pettingzoo_env  # noqa: F401  (the rl extra)
    except ImportError as exc:
        raise MissingExtra("rl", "arena bench env", exc.name or "gymnasium") from exc

    r = with_progress("environment benchmark", lambda progress: run(seconds, progress=progress), as_json)
    rows = [
        (label, f"{r['steps_per_s'][name]:,} steps/s", f"{r['vs_engine_playout'][name]}x playout")
        for name, label in LABELS.items()
    ]
    emit(
        r, as_json, f"environment benchmark: random legal cards, {r['rules']}, {r['cpu_seconds']} CPU s", rows
    )

"""`arena compare BOT_A BOT_B`: is A better than B? Duplicate pairs until the SPRT decides."""

from __future__ import annotations

import json
import math
import sys

import click

from arena.cli.ladder_common import (
    SANDBOX_HELP,
    check_launcher,
    open_store,
    parse_rules,
    parse_time,
    user_errors,
)


@click.command()
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: A is this many Elo better.")
@click.option("--elo1", type=float, default=30.0, show_default=True, help="H1: A is this many Elo better.")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True, help="False-positive rate.")
@click.option("--beta", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True, help="False-negative rate.")
@click.option("--max-pairs", type=click.IntRange(1), default=300, show_default=True, help="Give up (inconclusive) after this many pairs.")
@click.option("--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s) for the matches.")
@click.option("--time", "time_text", default=None, metavar="move=1s,bank=10s", help="Time control per match.")
@click.option("--format", "fmt", default=None, metavar="flags=N|deals=N", help="Match format.")
@click.option("--seed", type=int, default=None, help="Seed of the pair seeds (default: random).")
@click.option("--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core).")
@click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def compare(bot_a: str, bot_b: str, elo0: float, elo1: float, alpha: float, beta: float, max_pairs: int,
            rules: tuple[str, ...], time_text: str | None, fmt: str | None, seed: int | None,
            concurrency: int | None, launcher: str, as_json: bool) -> None:
    """Play paired (duplicate) matches of BOT_A against BOT_B until a sequential probability ratio test
    decides between H0 (A is ELO0 better) and H1 (A is ELO1 better). Bots are NAME or NAME@VERSION.

    Defaults as fishtest: elo0=0, elo1=30, alpha=beta=0.05; each pair is a pentanomial observation.
    """
    from arena.cli.ladder_common import run_with_progress
    from arena.ladder.compare import CompareRun
    from arena.ladder.sprt import Sprt
    from arena.workers.execute import run_job
    from arena.workers.pool import default_concurrency

    store = open_store()
    with user_errors():
        a, b = store.version(bot_a), store.version(bot_b)
    if a.id == b.id:
        raise click.UsageError(f"{bot_a} and {bot_b} are the same version; compare two different ones")
    pairs = parse_rules(rules, fmt)
    tc = parse_time(time_text)
    check_launcher(launcher)
    conc = concurrency or default_concurrency()
    sprt = Sprt(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, pairs=True)
    source = CompareRun(store, a, b, rules=pairs, time_control=tc, sprt=sprt, max_pairs=max_pairs, seed=seed,
                        launcher=launcher, parallel_pairs=max(1, conc // 2))
    label = f"{a.label} vs {b.label}"
    try:
        run_with_progress(source, run_job, concurrency=conc, label=label, total=None, quiet=as_json)
    except KeyboardInterrupt:
        source.cleanup()
        click.echo("\ninterrupted; the pairs played so far are shown below", err=True)
        _report(source, as_json)
        sys.exit(130)
    source.cleanup()
    _report(source, as_json)


def _report(source, as_json: bool) -> None:  # noqa: ANN001
    st = source.sprt.state()
    verdict = {"H1": f"H1 accepted: {source.a.label} is stronger (by at least ~{source.sprt.elo1:g} Elo)",
               "H0": f"H0 accepted: {source.a.label} is not {source.sprt.elo1:g} Elo stronger",
               None: f"inconclusive after {st.n} pairs (LLR {st.llr:.2f} within [{st.lower:.2f}, {st.upper:.2f}])"}[
        st.verdict]

    def show(x: float) -> str:
        return ("+inf" if x > 0 else "-inf") if math.isinf(x) else f"{x:+.1f}"

    if as_json:
        click.echo(json.dumps({"a": source.a.label, "b": source.b.label, "verdict": st.verdict, "llr": st.llr,
                               "bounds": [st.lower, st.upper], "pairs": st.n, "voided_pairs": source.voided_pairs,
                               "pentanomial": source.sprt.counts, "elo": st.elo,
                               "elo_ci95": [None if math.isinf(x) else x for x in (st.elo_low, st.elo_high)]},
                              indent=1))
        return
    click.echo(verdict)
    click.echo(f"Elo difference {show(st.elo)} (95% {show(st.elo_low)} .. {show(st.elo_high)}), "
               f"{st.n} pairs, pentanomial {source.sprt.counts}, LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}]"
               + (f", {source.voided_pairs} void pairs not counted" if source.voided_pairs else ""))

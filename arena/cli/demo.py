"""`arena demo`: the main job. A short sandboxed ladder season of every sample bot, on an SQLite store
under ./var/: submit and build the bots, play the season with a live progress bar, close it with a
final duplicate round robin, then print the standings and where the replays are.

`arena demo --match` is the quick look: one in-process match printed deal by deal (demo_match.py).
"""

from __future__ import annotations

import getpass
import os
import shutil
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click

from arena.cli.demo_match import greedy_player, match_demo, play_demo, random_player  # noqa: F401 (re-exported)
from arena.cli.errors import UserError
from arena.cli.ladder_common import warm_option

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"


def sample_bundles(root: Path = SAMPLES) -> list[Path]:
    """Every folder under sample_bots/ that holds a bot.toml (not inside node_modules or build output)."""
    found = []
    for manifest in sorted(root.rglob("bot.toml")):
        parts = set(manifest.relative_to(root).parts)
        if parts & {"node_modules", "build", "__pycache__", ".npm-cache"}:
            continue
        found.append(manifest.parent)
    return found


def _launcher() -> str:
    from arena.workers.execute import bwrap_available

    if bwrap_available():
        return "bwrap"
    cmd = "apt-get install -y bubblewrap" if os.geteuid() == 0 else "sudo apt-get install -y bubblewrap"
    click.echo(
        f"note: the bwrap sandbox is not available here; running the trusted sample bots unsandboxed "
        f"(--sandbox local). To sandbox them: `{cmd}` (or `make setup`).",
        err=True,
    )
    return "local"


@click.command()
@click.option(
    "--match", "one_match", is_flag=True, help="Instead: one in-process match printed deal by deal."
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=1,
    show_default=True,
    help="The season seed (with --match: the match seed).",
)
@click.option(
    "-r", "--rule", "rules", multiple=True, metavar="NAME=VALUE", help="A rules option (see docs/engine.md)."
)
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="With --match: write elfern/1 JSON."
)
@click.option(
    "--matches",
    type=click.IntRange(2),
    default=None,
    help="Ladder matches before the final round robin (default: 2 per bot).",
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("var"),
    show_default=True,
    help="Where the SQLite store, bundles and replays go.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=None,
    help="Matches at once (default: two per core; a match keeps a core busy about half of the time).",
)
@click.option("--sandbox", "launcher", default=None, help="bwrap (default when available) or local.")
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="NAME",
    help="Only this sample bot (repeat; default: every bot.toml under sample_bots/).",
)
@warm_option
@click.pass_context
def demo(
    ctx: click.Context,
    one_match: bool,
    seed: int,
    rules: tuple[str, ...],
    out: str | None,
    matches: int | None,
    home: Path,
    concurrency: int | None,
    launcher: str | None,
    only: tuple[str, ...],
    warm: bool | None,
) -> None:
    """Run a short sandboxed season of the sample bots and print the standings (a few minutes)."""
    if one_match:
        ctx.invoke(match_demo, seed=seed, rules=rules, out=out)
        return
    if out:
        raise UserError("--out belongs to `arena demo --match`; a season's replays go under --home")
    from arena.cli.ladder_common import (
        apply_warm,
        check_launcher,
        parse_rules,
        run_with_progress,
        warn_weak_limits,
    )
    from arena.ladder.export import export_replays
    from arena.ladder.runner import SeasonRun
    from arena.ladder.seasons import close_season, create_season, maybe_finish_close, start_season
    from arena.ladder.standings import verify_ratings
    from arena.store import Store
    from arena.workers.execute import run_job

    launcher = check_launcher(launcher) if launcher else warn_weak_limits(_launcher())
    apply_warm(warm, launcher)
    pairs = parse_rules(rules, None)
    concurrency = concurrency or 2 * (os.cpu_count() or 1)
    bundles = _chosen(only)  # a bad --only is refused before anything is written
    home = home.resolve()
    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    warm_note = ", warm start of Python bots" if os.environ.get("ARENA_WARM_START") == "1" else ""
    click.echo(f"Elfern Arena demo: store {home / 'arena.db'}, {launcher} sandbox{warm_note}")

    click.echo("1. submitting and building the sample bots ...")
    names = []
    # Builds run one per core: most of a cold demo's first minute is compilers (tsc, cargo, javac).
    width = max(len(_sample_name(path, fallback=True)) for path in bundles)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = pool.map(lambda path: _submit_sample(store, path, launcher), bundles)
        for path, name, done, error in results:
            if done is None:
                click.echo(f"   skipped {path.relative_to(SAMPLES.parent)}: {error}", err=True)
                continue
            v = done.version
            status = "built" if v.build_ok else "BUILD FAILED (see `arena bots show " + name + "`)"
            click.echo(f"   {name:<{width}} {v.language:<10} @{v.number} {status}")
            if v.build_ok:
                names.append(name)
    if len(names) < 2:
        raise UserError(
            "fewer than two sample bots could be built; run `make setup` and see `arena bots list`"
        )

    anchors = {DEMO_ANCHOR: DEMO_ANCHOR_ELO} if DEMO_ANCHOR in names else {}
    season = _fresh_season(store, create_season, seed, pairs, anchors)
    start_season(store, season)
    goal = matches or 2 * len(names)
    click.echo(
        f"2. season {season}: {len(names)} bots, duplicate pairs, {goal} ladder matches, then the final"
        + (f" (anchor: {DEMO_ANCHOR} = {DEMO_ANCHOR_ELO:g} Elo)" if anchors else "")
    )
    try:
        source = SeasonRun(store, season, matches=goal, launcher=launcher)
        run_with_progress(source, run_job, concurrency=concurrency, label=f"ladder {season}", total=goal)
        pending = close_season(store, season)
        click.echo(f"3. closing: final duplicate round robin, {pending} matches")
        final = SeasonRun(store, season, launcher=launcher)
        run_with_progress(final, run_job, concurrency=concurrency, label=f"final {season}", total=pending)
    except KeyboardInterrupt:
        click.echo(
            f"\ninterrupted; nothing recorded is lost. Continue with `ARENA_HOME={home} arena season run "
            f"{season} --matches {goal}` and `arena season close {season}`",
            err=True,
        )
        sys.exit(130)
    maybe_finish_close(store, season)
    for bot in dict.fromkeys(source.suspended + final.suspended):
        click.echo(f"   suspended {bot}: `arena bots show {bot}` says why", err=True)

    click.echo("4. standings")
    from arena.cli.standings import standings as standings_cmd

    os.environ["ARENA_HOME"] = str(home)
    os.environ.pop("ARENA_DATABASE_URL", None)
    ctx.invoke(standings_cmd, season=season, as_json=False, los=False)
    problems = verify_ratings(store, season)
    out_dir, count = export_replays(store, season)
    rel = os.path.relpath(out_dir)
    example = sorted(out_dir.glob("final-*"))[:1] or sorted(out_dir.iterdir())[:1]
    click.echo(
        f"ratings recomputed from the {count} stored replays: "
        f"{'identical' if not problems else f'{len(problems)} MISMATCHES'}"
    )
    click.echo(f"replays: {rel}/ ({count} files; also inside {os.path.relpath(home / 'arena.db')})")
    if example:
        click.echo(f"   watch one:   arena replay show {os.path.relpath(example[0])}")
        click.echo(
            f"   check one:   arena replay export --json {os.path.relpath(example[0])} --out m.json "
            f"&& arena replay verify m.json"
        )
    click.echo(
        f"   in a browser: ARENA_HOME={os.path.relpath(home)} arena web   (standings, matches, replay viewer)"
    )
    click.echo(f"   more:         ARENA_HOME={os.path.relpath(home)} arena standings {season} --los")
    if shutil.which("arena") is None:
        click.echo("   (`arena` is .venv/bin/arena: `source .venv/bin/activate` puts it on your PATH)")
    if problems:
        raise UserError("stored ratings differ from the replays; see `arena season verify " + season + "`")


def _chosen(only: tuple[str, ...]) -> list[Path]:
    """The sample bundles the demo plays: all of them, or those named by --only (each must exist)."""
    from arena.sandbox.bundle import BundleError, load_bundle

    every = sample_bundles()
    if not only:
        return every
    by_name = {}
    for path in every:
        try:
            by_name[load_bundle(path).name] = path
        except BundleError:
            continue
    unknown = [name for name in only if name not in by_name]
    if unknown:
        raise UserError(f"--only {unknown[0]}: no such sample bot; choose from {', '.join(sorted(by_name))}")
    return [by_name[name] for name in dict.fromkeys(only)]


def _sample_name(path: Path, fallback: bool = False) -> str:
    """The name a sample bot registers under (its bot.toml's, not its folder's); with `fallback`,
    the folder's name for a bundle that does not load (submitting it then says why)."""
    from arena.sandbox.bundle import BundleError, load_bundle

    try:
        return load_bundle(path).name
    except BundleError:
        if fallback:
            return path.name
        raise


def _submit_sample(store: Any, path: Path, launcher: str) -> tuple[Path, str, Any, str]:
    """Submit and build one sample bundle as its own owner: (path, name, Submitted or None, error)."""
    from arena.sandbox.bundle import BundleError
    from arena.store import StoreError
    from arena.workers.submit import submit_bundle

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            name = _sample_name(path)
            owner = f"{getpass.getuser()}-{name}"
            return path, name, submit_bundle(store, path, name=name, owner=owner, launcher=launcher), ""
        except (BundleError, StoreError) as exc:
            return path, "", None, str(exc)


DEMO_ANCHOR, DEMO_ANCHOR_ELO = "random", 1000.0  # fixed, so demo standings compare across runs


def _fresh_season(store, create_season, seed: int, pairs: list[str], anchors: dict[str, float]) -> str:
    """A new season name each run: demo, demo-2, demo-3, ..."""
    taken = {s.name for s in store.seasons()}
    name, n = "demo", 1
    while name in taken:
        n += 1
        name = f"demo-{n}"
    create_season(store, name, rules=["flags=1", *pairs], duplicate=True, seed=seed + n, anchors=anchors)
    return name

"""`arena compare BOT_A BOT_B`: is A better than B? Duplicate pairs until the SPRT decides."""

from __future__ import annotations

import getpass
import json
import re
import sys
from pathlib import Path

import click

from arena.cli.errors import UserError
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
@click.option(
    "--alpha",
    type=click.FloatRange(0.0001, 0.5),
    default=0.05,
    show_default=True,
    help="False-positive rate.",
)
@click.option(
    "--beta", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True, help="False-negative rate."
)
@click.option(
    "--max-pairs",
    type=click.IntRange(1),
    default=2000,
    show_default=True,
    help="Give up (inconclusive) after this many pairs (the default lets a test at elo1 reach its power).",
)
@click.option("--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s) for the matches.")
@click.option("--time", "time_text", default=None, metavar="move=1s,bank=10s", help="Time control per match.")
@click.option("--format", "fmt", default=None, metavar="flags=N|deals=N", help="Match format.")
@click.option("--seed", type=int, default=None, help="Seed of the pair seeds (default: random).")
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core)."
)
@click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def compare(
    bot_a: str,
    bot_b: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_pairs: int,
    rules: tuple[str, ...],
    time_text: str | None,
    fmt: str | None,
    seed: int | None,
    concurrency: int | None,
    launcher: str,
    as_json: bool,
) -> None:
    """Play paired (duplicate) matches of BOT_A against BOT_B until a sequential probability ratio test
    decides between H0 (A is ELO0 better) and H1 (A is ELO1 better).

    BOT_A and BOT_B are each a registered NAME or NAME@VERSION, or a PATH to a bundle: a directory
    holding bot.toml, a .tar.gz/.tgz or a .zip. A path is built (in --sandbox) and submitted as
    `arena bots submit` does, under its folder name (archive suffix dropped; characters other than
    letters, digits, _ . - become -) and owned by you; the same content reuses the same version.
    When an argument is both an existing path and a bot name, the path wins only if it is a bundle
    (has bot.toml, or is an archive); otherwise the name is used.

    Defaults as fishtest: elo0=0, elo1=30, alpha=beta=0.05; each pair is a pentanomial observation.
    """
    from arena.cli.ladder_common import run_with_progress
    from arena.ladder.compare import CompareRun
    from arena.ladder.sprt import Sprt
    from arena.workers.execute import run_job
    from arena.workers.pool import default_concurrency

    pairs = parse_rules(rules, fmt)  # the user's option mistakes first, before any bundle is built
    tc = parse_time(time_text)
    check_launcher(launcher)
    store = open_store()
    a = _resolve(store, bot_a, launcher)
    b = _resolve(store, bot_b, launcher)
    if a.id == b.id:
        raise click.UsageError(
            f"{bot_a} and {bot_b} are the same version ({a.label}); compare two different ones"
        )
    conc = concurrency or default_concurrency()
    sprt = Sprt(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, pairs=True)
    source = CompareRun(
        store,
        a,
        b,
        rules=pairs,
        time_control=tc,
        sprt=sprt,
        max_pairs=max_pairs,
        seed=seed,
        launcher=launcher,
        parallel_pairs=max(1, conc // 2),
    )
    label = f"{a.label} vs {b.label}"
    if not as_json:
        e = sprt.expected_pairs()
        click.echo(
            f"expected length: ~{e['elo1']:.0f} pairs if A is {elo1:g} Elo better, ~{e['elo0']:.0f} if "
            f"{elo0:g}, up to ~{e['midpoint']:.0f} in between (limit {max_pairs}; assumes a pair score sd "
            "of 0.3, less with draws or well-matched pairs)",
            err=True,
        )
    try:
        run_with_progress(source, run_job, concurrency=conc, label=label, total=None, quiet=as_json)
    except KeyboardInterrupt:
        source.cleanup()
        click.echo("\ninterrupted; the pairs played so far are shown below", err=True)
        _report(source, as_json)
        sys.exit(130)
    source.cleanup()
    _report(source, as_json)


def _is_bundle(path: Path) -> bool:
    """A directory with a manifest, or an archive file: what `arena bots submit` accepts."""
    from arena.sandbox.archive import is_archive
    from arena.sandbox.bundle import MANIFEST

    return (path.is_dir() and (path / MANIFEST).is_file()) or (path.is_file() and is_archive(path))


def _bundle_bot_name(path: Path) -> str:
    """The ladder name a bundle path is submitted under: its folder (or archive) name, sanitised."""
    from arena.sandbox.archive import ARCHIVE_SUFFIXES

    base = path.resolve().name
    for suffix in ARCHIVE_SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", base).lstrip("_.-")[:64]
    return name or "bundle"


def _resolve(store, arg: str, launcher: str):  # lazily imported types
    """BOT_A/BOT_B -> a built version: a bundle path is submitted (content-hashed), else a name is looked up."""
    from arena.sandbox.archive import ARCHIVE_SUFFIXES
    from arena.store import StoreError

    path = Path(arg).expanduser()
    if _is_bundle(path):
        return _submit_path(store, path, arg, launcher)
    try:
        version = store.version(arg)
    except StoreError as exc:
        if path.is_dir():
            raise UserError(
                f"{arg}: directory has no bot.toml and no bot is registered under that name; "
                "give a bundle folder (with bot.toml), a .tar.gz/.zip, or NAME[@VERSION]"
            ) from None
        if path.exists():
            raise UserError(
                f"{arg}: not a bot bundle (expected a folder with bot.toml, .tar.gz, .tgz or .zip) "
                "and no bot is registered under that name"
            ) from None
        if "/" in arg or path.name.lower().endswith(ARCHIVE_SUFFIXES):
            raise UserError(f"{arg}: no such bundle path (and no bot by that name); check the path") from None
        raise UserError(f"{exc}; give NAME[@VERSION] or a path to a bundle") from None
    if not version.build_ok:
        raise UserError(f"{version.label} failed to build; see `arena bots show {arg.partition('@')[0]}`")
    return version


def _submit_path(store, path: Path, arg: str, launcher: str):
    """Submit the bundle at `path` as `arena bots submit PATH --name <folder>` would, under your user."""
    from arena.store import StoreError
    from arena.store.identity import filed_owner, name_key
    from arena.workers.submit import submit_bundle

    name, owner = _bundle_bot_name(path), filed_owner(getpass.getuser())  # `root`: the house's, as stored
    try:
        existing = store.bot(name)
    except StoreError:
        existing = None
    if existing is not None and name_key(existing.owner) != name_key(owner):
        raise UserError(
            f"{arg}: its folder name makes the bot name {name!r}, which belongs to {existing.owner!r}; "
            f"rename the folder, or `arena bots submit {arg} --name OTHER` and compare OTHER"
        )
    with user_errors():
        done = submit_bundle(store, path, name=name, owner=owner, launcher=launcher)
    v = done.version
    if not v.build_ok:
        from arena.cli.bots import failed_build

        raise UserError(
            f"{arg}: {name}@{v.number} build FAILED; nothing compared. {failed_build(name, v.build_log)}"
        )
    if done.new:  # a version made for a test enters no season until an organiser adds it
        from arena.store.models import BotVersion

        with store.tx() as s:
            s.get_one(BotVersion, v.id).ladder = False
    state = "submitted as new version" if done.new else "unchanged content, reusing"
    click.echo(f"{arg}: {state} {name}@{v.number} (content {v.content_hash[:12]})", err=True)
    return v


def _report(source, as_json: bool) -> None:
    from arena.cli.compare_report import report_json, report_lines

    if as_json:
        a, b = source.a, source.b
        versions = {"a": a.label, "b": b.label, "a_content": a.content_hash, "b_content": b.content_hash}
        data = report_json(source.sprt, versions, source.max_pairs, source.voided_pairs)
        click.echo(json.dumps(data, indent=1))
        return
    for line in report_lines(source.sprt, source.a.label, source.b.label, source.voided_pairs):
        click.echo(line)

"""`arena play BOT_A BOT_B`: one match between two bot bundles, with progress, a result and a replay."""

from __future__ import annotations

import functools
import json
import math
import os
import secrets
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import click

from arena.cli.errors import UserError

REPLAY_SUFFIX = ".replay"
# Exit statuses, so that an author's CI can use `arena play` as a check (UserError exits 2)
EXIT_CLEAN = 0  # the match completed with no fault verdict
EXIT_FAULT = 1  # a seat got a fault verdict (TIMEOUT, CRASH, ILLEGAL_MOVE, ...), or it did not complete


def make_launcher(name: str) -> Any:
    """The launcher named by --sandbox, or a UserError saying why it cannot be used here."""
    from arena.sandbox.launchers import LauncherUnavailable, get_launcher

    if name == "local":
        click.echo(
            "warning: --sandbox local runs bots without any isolation; use it only for bots you trust",
            err=True,
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return get_launcher(name, warn=False)
    except LauncherUnavailable as exc:
        raise UserError(str(exc)) from None


def parse_rules(pairs: tuple[str, ...], flags: int | None, deals: int | None):
    from arena.engine import Rules, RulesError

    items = [p.strip() for raw in pairs for p in raw.split(",") if p.strip()]
    if flags is not None and deals is not None:
        raise UserError("--flags and --deals exclude each other: play to F flags, or exactly N deals")
    if flags is not None:
        items.append(f"flags={flags}")
    if deals is not None:
        items.append(f"max_deals={deals}")
    try:
        return Rules.from_pairs(items)
    except RulesError as exc:
        raise UserError(f"--rules: {exc}") from None


def load(path: str):
    """A bundle folder, or where none is, a house bot by name (`random`: sample_bots/python/random),
    so that `arena play . random` works from a bot's own folder wherever it lives."""
    from arena.cli.bots_house import house_bot
    from arena.sandbox.bundle import BundleError, load_bundle

    sample = None if Path(path).exists() else house_bot(path)
    try:
        return load_bundle(sample or path)
    except BundleError as exc:
        raise UserError(str(exc)) from None


def replay_path(out: str | None, match_id: str) -> Path:
    """--out, else a new file in `$ARENA_HOME/replays` (./var/replays without ARENA_HOME)."""
    from arena.replay.record import replay_dir

    if out:
        return Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return replay_dir() / f"{stamp}-{match_id}{REPLAY_SUFFIX}"


def write_private(path: Path, data: bytes) -> None:
    """The full record holds both bots' logs and output: a new folder is 0700 and the file 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def deal_stats(record) -> dict[str, Any]:
    """Deals won per seat, and seat 0's deal score as a win rate and Elo estimate with a 95% interval."""
    wins = [0, 0]
    ties = 0
    for d in record.deals:
        if not d.HasField("outcome"):
            continue
        if d.outcome.winner < 0:
            ties += 1
        else:
            wins[d.outcome.winner] += 1
    n = wins[0] + wins[1] + ties
    out: dict[str, Any] = {"deals_won": wins, "standoffs": ties}
    if n:
        score = (wins[0] + 0.5 * ties) / n
        half = 1.96 * math.sqrt(max(score * (1 - score), 0.25 / n) / n)
        out["score"] = round(score, 4)
        out["elo"] = round(_elo(score, n), 1)
        out["elo_interval"] = [round(_elo(score - half, n), 1), round(_elo(score + half, n), 1)]
    return out


def _elo(p: float, n: int) -> float:
    p = min(max(p, 0.5 / n), 1 - 0.5 / n)
    return -400 * math.log10(1 / p - 1)


@click.command()
@click.argument("bot_a", type=click.Path(file_okay=False))
@click.argument("bot_b", type=click.Path(file_okay=False), required=False)
@click.option(
    "--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Match seed (default: random, printed)."
)
@click.option(
    "--rules",
    "rule_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="A rules option, e.g. --rules scoring=altenburg (repeat, or separate with commas).",
)
@click.option(
    "--flags", type=click.IntRange(1), default=None, help="Play until a bot has F flags (4 lines each)."
)
@click.option(
    "--deals", type=click.IntRange(1), default=None, help="Play exactly N deals instead (a draw is possible)."
)
@click.option(
    "--time",
    "time_text",
    default="move=1s,bank=10s",
    show_default=True,
    metavar="SPEC",
    help="Clocks: move=1s,bank=10s,startup=10s (any subset).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object: winner, verdicts, lines, replay, ..."
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the replay here (default $ARENA_HOME/replays/, else ./var/replays/).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "docker", "local"]),
    default="bwrap",
    show_default=True,
    help="How bots run: bwrap (isolated, the default), docker, or local processes (no isolation).",
)
@click.option(
    "--remote",
    is_flag=True,
    help="Play BOT_A against a bot you start yourself: prints an address and a token, then waits.",
)
@click.option(
    "--listen",
    default="127.0.0.1:0",
    show_default=True,
    metavar="HOST:PORT",
    help="With --remote: the TCP address to listen on as well as the Unix socket.",
)
def play(
    bot_a, bot_b, seed, rule_pairs, flags, deals, time_text, as_json, out, sandbox, remote, listen
) -> None:
    """Play one match between two bot bundles (folders with a bot.toml) and write its replay. A name
    with no such folder is a house bot (`arena bots house`): random, greedy, tactician, pimc, ismcts.

    \b
    Examples:
      arena play sample_bots/python/tactician sample_bots/python/random --seed 1
      arena play mybot sample_bots/python/tactician --deals 200
      arena play . random                                  # from your bot's folder, anywhere
      arena play sample_bots/python/tactician --remote      # then run your own bot with the printed values

    Exit status: 0 when the match completed with no fault verdict; 1 when a seat got one (TIMEOUT,
    CRASH, ILLEGAL_MOVE, ...) or the match was cut short (SHUTDOWN, ABORTED); 2 for a usage error.

    The replay, with each bot's Log lines and its stdout/stderr (the last 64 KiB), goes to
    $ARENA_HOME/replays/ (else ./var/replays/); `arena replay show last --seat N --logs` prints them.
    """
    from arena.referee import TimeControl, TimeControlError

    if remote and bot_b:
        raise UserError("--remote plays BOT_A against your own bot: give only one bundle")
    if not remote and not bot_b:
        raise UserError("give two bot bundles (BOT_A BOT_B), or one with --remote")
    try:
        tc = TimeControl.parse(time_text)
    except TimeControlError as exc:
        raise UserError(f"--time: {exc}") from None
    if remote and "startup" not in time_text:
        tc = TimeControl(startup=600.0, move=tc.move, bank=tc.bank)  # time to start a debugger
    rules = parse_rules(rule_pairs, flags, deals)
    bundles = (load(bot_a), None if remote else load(bot_b))
    launcher = make_launcher(sandbox)
    if seed is None:
        seed = secrets.randbits(32)
    from rich.console import Console

    err = Console(stderr=True)
    outcome = _run(bundles, rules, seed, tc, launcher, remote, listen, as_json, err)
    path = replay_path(out, outcome.match_id)
    try:
        write_private(path, outcome.replay_bytes)
    except OSError as exc:
        raise UserError(f"cannot write the replay to {path}: {exc.strerror}; choose another --out") from None
    names = [p.name for p in outcome.record.players]
    summary = {
        "match_id": outcome.match_id,
        "seed": seed,
        "players": names,
        "winner": outcome.winner,
        "winner_name": None if outcome.winner is None else names[outcome.winner],
        "void": outcome.void,
        "verdicts": list(outcome.verdicts),
        "details": list(outcome.verdict_details),
        "private_details": [*outcome.record.result.private_details, "", ""][:2],  # your bots' own output
        "lines": list(outcome.lines),
        "flags": list(outcome.flags),
        "deals_played": outcome.deals_played,
        "end_reason": outcome.end_reason,
        "failed_at": dict(zip(("deal", "trick", "turn"), outcome.failed_at, strict=True)),
        "rules": rules.to_dict(),
        "time_control": tc.describe(),
        "replay": str(path),
        **deal_stats(outcome.record),
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        _print_summary(summary, bot_a, bot_b, rule_pairs, flags, deals, time_text, sandbox)
    clean = outcome.end_reason == "COMPLETED" and all(v == "OK" for v in outcome.verdicts)
    sys.exit(EXIT_CLEAN if clean else EXIT_FAULT)


def _run(bundles, rules, seed, tc, launcher, remote, listen, as_json, err):
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    from arena.workers.match import play_match

    def on_ready(addresses: tuple[list[str], list[str]], tokens: tuple[str, str]) -> None:
        if not remote:
            return
        seat = bundles.index(None)  # the remote seat: its own socket and TCP listener take only its token
        unix, tcp = addresses[seat]
        other = bundles[1 - seat]
        # soft_wrap: the address, token and command lines are printed whole, never cut at the
        # terminal's (or, off a terminal, rich's 80-column) width, so they can be copied or parsed
        say = functools.partial(err.print, soft_wrap=True, highlight=False)
        say(f"[bold]Waiting for your bot[/] (seat {seat}) to play {escape(other.name)} (seat {1 - seat}).")
        say(f"  ARENA_ADDRESS={tcp}   (or {unix})")
        say(f"  ARENA_TOKEN={tokens[seat]}")
        say("Run it, for example:")
        say(f"  ARENA_ADDRESS={tcp} ARENA_TOKEN={tokens[seat]} python3 mybot/bot.py")
        say(f"It must join within {tc.startup:g} s; clocks then run at {tc.describe()}.")
        if as_json:  # machine-readable too, on stdout, before the result
            click.echo(
                json.dumps({"address": tcp, "unix_address": unix, "token": tokens[seat], "seat": seat})
            )
        sys.stdout.flush()

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    total = rules.max_deals
    if total:
        columns.append(BarColumn())
    progress = Progress(*columns, console=err, transient=True, disable=as_json and not remote)
    task = progress.add_task("starting the bots...", total=total)

    def on_event(ev: dict[str, Any]) -> None:
        kind = ev["event"]
        if kind == "started":
            progress.update(task, description=f"{ev['names'][0]} vs {ev['names'][1]}: dealing")
        elif kind == "deal_start":
            progress.update(task, description=f"deal {ev['deal']}")
        elif kind == "deal_end":
            a, b = ev["lines"]
            progress.update(task, advance=1, description=f"deal {ev['deal']} done, lines {a}-{b}")

    with progress:
        return play_match(
            bundles, rules=rules, seed=seed, time_control=tc, launcher=launcher, on_event=on_event,
            tcp=listen if remote else None, on_ready=on_ready, pause_idle=True,  # fair clocks: docs/sandbox.md
        )  # fmt: skip


def deals_text(finished: int, failed_deal: int) -> str:
    """`3 deal(s) played`, or for a match a verdict ended mid-deal `0 deal(s) finished, ended in
    deal 1`: the deal it died in, not a count of finished deals that reads as "none"."""
    if failed_deal > finished:
        return f"{finished} deal(s) finished, ended in deal {failed_deal}"
    return f"{finished} deal(s) played"


def _print_summary(s: dict[str, Any], bot_a, bot_b, rule_pairs, flags, deals, time_text, sandbox) -> None:
    from rich.console import Console
    from rich.markup import escape

    from arena.engine.cards import labels_in
    from arena.verdicts import Verdict

    con = Console(soft_wrap=True)
    a, b = s["players"]
    if s["void"]:
        why = {"SHUTDOWN": "the referee shut down", "ABORTED": "the match was aborted"}.get(
            s["end_reason"], "both bots failed"
        )
        head = f"[yellow]void match[/] ({why})"
    elif s["winner"] is None:
        head = "[yellow]draw[/]"
    else:
        head = f"[bold green]{escape(s['winner_name'])}[/] (seat {s['winner']}) wins"
    con.print(f"{escape(a)} vs {escape(b)}: {head}")
    con.print(
        f"  lines {s['lines'][0]}-{s['lines'][1]}, flags {s['flags'][0]}-{s['flags'][1]}, "
        f"{deals_text(s['deals_played'], s['failed_at']['deal'])}, "
        f"deals won {s['deals_won'][0]}-{s['deals_won'][1]}"
        + (f", {s['standoffs']} standoff(s)" if s["standoffs"] else "")
    )
    if s.get("elo") is not None and s["deals_played"] >= 10:
        lo, hi = s["elo_interval"]
        con.print(
            f"  {escape(a)} per deal: score {s['score']:.3f}, Elo {s['elo']:+.0f} (95% {lo:+.0f} .. {hi:+.0f})"
        )
    for seat, verdict in enumerate(s["verdicts"]):
        if verdict == "OK" or s["end_reason"] in ("SHUTDOWN", "ABORTED"):
            continue
        at = s["failed_at"]
        con.print(
            f"[bold red]{verdict}[/] for {escape(s['players'][seat])} (seat {seat})"
            + (f" at deal {at['deal']}, trick {at['trick']}, turn {at['turn']}" if at["turn"] else "")
        )
        detail = s["details"][seat]
        con.print(escape(labels_in(detail) if verdict == Verdict.ILLEGAL_MOVE else detail), highlight=False)
        if s["private_details"][seat]:  # what the bot sent and its last output: yours, so shown here
            con.print(escape(s["private_details"][seat]), highlight=False)
        q = shlex.quote  # the line is pasted into a shell: a path with a space must stay one word
        again = ["arena play", q(bot_a), q(bot_b) if bot_b else "--remote", "--seed", str(s["seed"])]
        again += [f"--rules {q(p)}" for p in rule_pairs]
        again += [f"--flags {flags}"] if flags else []
        again += [f"--deals {deals}"] if deals else []
        again += [f"--time {q(time_text)}"] if time_text != "move=1s,bank=10s" else []
        again += [f"--sandbox {sandbox}"] if sandbox != "bwrap" else []
        con.print(f"  reproduce: {' '.join(again)}")
    con.print(f"  replay: {s['replay']}   (arena replay show {s['replay']} --seat 0)")

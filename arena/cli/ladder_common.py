"""Helpers shared by the ladder commands (bots, season, standings, compare): opening the store,
turning store errors into one-line user errors, and the live progress bar of a pool run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from arena.cli.errors import UserError

SANDBOX_HELP = "How bots run: bwrap (sandbox, default), docker, or local (no isolation; trusted bots only)."


WARM_HELP = (
    "Warm start of Python bots (bwrap as root, with memory and pids cgroups): a zygote per bot version "
    "imports the runtime once and forks each match's bot, in the match's own uid and cgroup "
    '(docs/sandbox.md "Warm start"). Default: on where it works (bwrap as root with those cgroups; '
    "elsewhere every bot starts cold, silently); ARENA_WARM_START=1 or 0 sets the default."
)


def warm_option(f):  # a click decorator
    return click.option("--warm/--no-warm", default=None, help=WARM_HELP)(f)


def apply_warm(warm: bool | None, launcher: str) -> None:
    """--warm/--no-warm: set ARENA_WARM_START for this process and the workers it starts (they
    inherit it); a warning when --warm cannot work here. Neither given: ARENA_WARM_START decides if
    set, else the warm start is on wherever it works (it halves a Python match's CPU:
    docs/sandbox.md "Warm start"), and off without a word elsewhere."""
    import os

    if warm is None:
        if os.environ.get("ARENA_WARM_START") not in ("0", "1"):
            from arena.sandbox.bwrap import warm_unavailable

            works = launcher == "bwrap" and warm_unavailable() is None
            os.environ["ARENA_WARM_START"] = "1" if works else "0"
        return
    if warm and launcher != "bwrap":
        raise UserError(f"--warm needs the bwrap sandbox, not --sandbox {launcher}; drop --warm or use bwrap")
    os.environ["ARENA_WARM_START"] = "1" if warm else "0"
    if warm:
        from arena.sandbox.bwrap import warm_unavailable

        reason = warm_unavailable()
        if reason:
            click.echo(f"warning: --warm: {reason}; every bot starts cold", err=True)


def open_store():  # lazily imported type
    """The store named by ARENA_DATABASE_URL (else $ARENA_HOME/arena.db), migrated."""
    from arena.cli.errors import ServiceLost
    from arena.store import Store, StoreUnavailable

    try:
        return Store.open()
    except StoreUnavailable as exc:
        raise ServiceLost(str(exc)) from None


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Store and bundle errors are the user's to fix: one line, no traceback."""
    from arena.cli.errors import ServiceLost
    from arena.sandbox.bundle import BundleError
    from arena.sandbox.launchers import LauncherUnavailable
    from arena.store import StoreError, StoreUnavailable

    try:
        yield
    except (StoreError, BundleError, LauncherUnavailable) as exc:
        raise UserError(str(exc)) from None
    except StoreUnavailable as exc:
        raise ServiceLost(str(exc)) from None


def check_launcher(name: str) -> str:
    """Fail early, in one line, when the chosen sandbox cannot run here."""
    import warnings

    from arena.sandbox.launchers import LauncherUnavailable, get_launcher

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            get_launcher(name, warn=False)
    except LauncherUnavailable as exc:
        raise UserError(str(exc)) from None
    if name == "local":
        startup_warning("--sandbox local runs bots without any isolation; use it only for bots you trust")
    return warn_weak_limits(name)


def startup_warning(line: str) -> None:
    """A warning at a command's start: `warning: LINE` on stderr, or with `--log-format json` a log
    record like every other line of a long-running command (a log shipper reads JSON only)."""
    import os

    from arena.logs import FORMAT_ENV, configure

    if os.environ.get(FORMAT_ENV, "").lower() == "json":
        import logging

        configure(default="info")
        logging.getLogger("arena.cli").warning("%s", line)
        return
    click.echo(f"warning: {line}", err=True)


def warn_weak_limits(name: str = "bwrap") -> str:
    """Say, once at start, when the bwrap sandbox cannot cap memory or pids per bot with a cgroup."""
    if name == "bwrap":
        from arena.sandbox import cgroups

        line = cgroups.weak_limits_warning()
        if line:
            startup_warning(line.removeprefix("warning: "))
    return name


def parse_time(text: str | None) -> dict:
    """`move=1s,bank=10s` -> the referee's TimeControl fields, validated."""
    from dataclasses import asdict

    from arena.referee import TimeControl, TimeControlError

    if not text:
        return {}
    try:
        return asdict(TimeControl.parse(text))
    except TimeControlError as exc:
        raise UserError(f"--time: {exc}") from None


def parse_format(text: str | None) -> list[str]:
    """`flags=N` or `deals=N` -> rules pairs."""
    if not text:
        return []
    key, _, value = text.partition("=")
    if key not in ("flags", "deals") or not value.isdigit() or int(value) < 1:
        raise UserError(f"--format {text!r}: use flags=N (first to N flags) or deals=N (exactly N deals)")
    return [f"flags={value}"] if key == "flags" else [f"max_deals={value}"]


def parse_rules(pairs: tuple[str, ...], fmt: str | None) -> list[str]:
    """Validated "key=value" rules pairs (the format folded in), as stored with the season."""
    from arena.engine import Rules, RulesError

    items = [p.strip() for raw in pairs for p in raw.split(",") if p.strip()] + parse_format(fmt)
    try:
        Rules.from_pairs(items)
    except RulesError as exc:
        raise UserError(f"--rules: {exc}") from None
    return items


EXECUTOR_HELP = "local: a pool of processes here (default); celery: Celery workers via ARENA_BROKER_URL."


def executor_factory(name: str):
    """None for the local pool, else a factory the pool calls with its concurrency."""
    if name == "local":
        return None
    if name == "celery":
        from arena.extras import require

        require("celery", "--executor celery")  # else one line naming the extra (arena/cli/__init__.py)
        import redis

        from arena.workers.celery_app import CeleryExecutor, broker_url

        try:
            redis.Redis.from_url(broker_url(), socket_connect_timeout=3).ping()
        except redis.exceptions.RedisError as exc:
            raise UserError(
                f"--executor celery: cannot reach the broker at {broker_url()} ({exc}); "
                "set ARENA_BROKER_URL and start `arena worker`"
            ) from None
        return lambda _n: CeleryExecutor()
    raise UserError(f"--executor {name!r}: use local or celery")


LINE_WIDTH = 80  # the progress line fits an 80-column terminal
LABEL_WIDTH = 16
BAR_WIDTH = 8


def progress_tail(done: int, total: int | None, running: int, rate: float, status: str, *, width: int) -> str:
    """The progress line after its bar: done/target, running, rate per minute, ETA (from the rate:
    `-:--:--` while unknown), then `status` cut to what is left of `width`."""
    if total is not None and rate > 0:
        left = max(total - done, 0) * 60.0 / rate
        eta = f"{int(left // 3600)}:{int(left % 3600 // 60):02d}:{int(left % 60):02d}"
    else:
        eta = "-:--:--"
    line = f"{done}/{total if total is not None else '?'} run {running} {rate:.1f}/min ETA {eta}"
    room = width - len(line) - 1
    if status and room > 3:
        line += " " + (status if len(status) <= room else status[: room - 1] + "…")
    return line


def run_with_progress(
    source,
    execute,
    *,
    concurrency: int | None,
    label: str,
    target_done: int = 0,
    total: int | None = None,
    quiet: bool = False,
    executor: str = "local",
):
    """Run the pool under a live bar of at most LINE_WIDTH columns: matches done/target, running,
    rate per minute, ETA, and the source's `status_line()` in what is left. `target_done` is how many
    the season already had, `total` the goal in the same count (None: open-ended); a source's
    `target()`, when it gives one, replaces it as the run goes (an --until-stable estimate)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    from arena.workers.pool import run_pool

    factory = executor_factory(executor)
    if quiet:
        return run_pool(source, execute, concurrency=concurrency, executor_factory=factory)
    head = label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…"
    columns = [TextColumn(head), BarColumn(bar_width=BAR_WIDTH), TextColumn("{task.fields[tail]}")]
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        first = progress_tail(target_done, total, 0, 0.0, "", width=LINE_WIDTH - len(head) - BAR_WIDTH - 2)
        task = bar.add_task(label, total=total, completed=target_done, tail=first)

        def update(p) -> None:
            status = getattr(source, "status_line", lambda: "")()  # e.g. how many bots are settled
            goal = getattr(source, "target", lambda: None)() or total  # an estimate may move
            done = target_done + p.done
            tail = progress_tail(
                done, goal, p.running, p.rate, status, width=LINE_WIDTH - len(head) - BAR_WIDTH - 2
            )
            bar.update(task, completed=done, total=goal, tail=tail)

        return run_pool(
            source, execute, concurrency=concurrency, on_progress=update, executor_factory=factory
        )

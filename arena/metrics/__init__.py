"""The arena's Prometheus metrics: where events are counted, and the switch that turns counting on.

Counting is off unless a long-running command serves `/metrics` (`--metrics HOST:PORT` on
`arena serve`, `arena web` and `arena worker`): `prepare()` then makes a folder for
prometheus_client's multiprocess mode and names it in the environment, so that the processes the
command starts (the server's players, the pool's match processes, Celery's children) count into
the same folder, and the command's listener (`arena.metrics.expose`) adds them all up. Everywhere
else (`arena play`, tests, the benches) the hooks below cost one dict lookup and import nothing.

The hooks take only closed sets as labels (a match's kind, a verdict, a limit's name, a transport):
a value outside its set is counted as `other`, so no bot name, match id or path can grow the label
sets. Every metric is defined once, in `arena.metrics.families`. Like arena.logs this sits at the
bottom of the package: every layer may count, and it imports nothing of the arena but verdicts.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from enum import StrEnum
from types import ModuleType
from typing import Any, TypeVar, cast

from arena.verdicts import Verdict

DIR_ENV = "ARENA_METRICS_DIR"  # set: this process and its children count into that folder
PROMETHEUS_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own switch, set to the same folder
OTHER = "other"
F = TypeVar("F", bound=Callable[..., Any])


class Kind(StrEnum):
    """A recorded match's kind (`Match.kind`)."""

    LADDER = "ladder"
    CHALLENGE = "challenge"
    FINAL = "final"
    COMPARE = "compare"


class Transport(StrEnum):
    """Where a live stream is open: gRPC's WatchMatch or the web's server-sent events."""

    GRPC = "watch-grpc"
    WEB = "watch-web"


_defs: ModuleType | None = None
_checked = False


def closed(value: str, allowed: Iterable[str]) -> str:
    """`value` if it is one of `allowed`, else `other`: labels stay in a closed set."""
    return value if value in allowed else OTHER


def prepare(folder: str | None = None) -> str:
    """Turn counting on for this process and every process it starts from now on; the folder.

    Call before anything imports prometheus_client (it picks its multiprocess mode on import).
    Without `folder`, a fresh temporary one, which `discard` removes when the command ends."""
    global _checked, _defs
    where = folder or tempfile.mkdtemp(prefix="arena-metrics-")
    os.environ[DIR_ENV] = where
    os.environ[PROMETHEUS_ENV] = where
    _checked, _defs = False, None
    return where


def discard(folder: str) -> None:
    """Remove the counting folder `prepare` made (the command is ending)."""
    shutil.rmtree(folder, ignore_errors=True)
    for name in (DIR_ENV, PROMETHEUS_ENV):
        if os.environ.get(name) == folder:
            del os.environ[name]


def defs() -> ModuleType | None:
    """The metric definitions when counting is on in this process, else None."""
    global _checked, _defs
    if not _checked:
        _checked = True
        if os.environ.get(DIR_ENV):
            try:
                from arena.metrics import families as loaded

                _defs = loaded
            except ImportError:  # the [metrics] extra is missing: nothing is counted
                _defs = None
    return _defs


def match_recorded(kind: str, verdicts: Iterable[str]) -> None:
    """A match's result was stored (the recorder, after its transaction)."""
    d = defs()
    if d is None:
        return
    d.MATCHES_RECORDED.labels(closed(kind, set(Kind))).inc()
    for verdict in verdicts:
        d.VERDICTS.labels(closed(verdict, set(Verdict))).inc()


def match_played(seconds: float) -> None:
    """A worker finished playing a match (recorded or not: the recorder counts those)."""
    d = defs()
    if d is not None:
        d.MATCHES_PLAYED.inc()
        d.MATCH_SECONDS.observe(seconds)


def build_done(seconds: float, ok: bool) -> None:
    """A bot's build ended, in `seconds`, with a bundle (`ok`) or an error."""
    d = defs()
    if d is not None:
        d.BUILDS.labels("ok" if ok else "error").inc()
        d.BUILD_SECONDS.observe(seconds)


def rate_limited(limit: str, limits: Iterable[str]) -> None:
    """A call or request was refused by the rate limit `limit` (one of `limits`, the budgets' names)."""
    d = defs()
    if d is not None:
        d.RATE_LIMITED.labels(closed(limit, set(limits))).inc()


def fit_done(seconds: float) -> None:
    """The ratings fit (Bradley–Terry) of a season's standings took `seconds`."""
    d = defs()
    if d is not None:
        d.FIT_SECONDS.observe(seconds)


def stream_opened(transport: str, by: int = 1) -> None:
    """A live stream opened (`by` 1) or closed (`by` -1) on `transport`."""
    d = defs()
    if d is not None:
        d.LIVE_STREAMS.labels(closed(transport, set(Transport))).inc(by)


def timed(hook: Callable[[float], None]) -> Callable[[F], F]:
    """Decorate a function so that each call that returns reports its seconds to `hook`."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            answer = fn(*args, **kwargs)
            hook(time.perf_counter() - started)
            return answer

        return cast(F, call)

    return wrap

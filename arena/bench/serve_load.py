"""`arena bench serve --load`: does a public server keep serving, and keep its ladder playing, while
its users push every limit?

A real `arena serve` (gRPC on TCP, the web in the same process, `--workers W` playing a ladder season
of sample bots in the sandbox) runs as a child process on its own SQLite store. Then two phases of
the same length, in one run:
1. **no load**: the ladder alone; the matches it records per minute are the same run's baseline;
2. **load**: spectators (pages, JSON, gRPC reads, live streams), owners (their bot, logs, one upload,
   one challenge) and one hostile owner (uploads whose builds sleep, the longest challenges it may
   ask for, token guesses, many live streams, log reads as fast as it can), all at once
   (arena/bench/load_clients.py).

It reports p50 and p99 per call, the errors (the target is none), the ladder's rate under load
against the baseline (target: at least 80%), the p99 of public reads (target: 200 ms) and the
server's RSS at the start, halfway and the end of the load (target: flat, at most 20 MiB more at the
end than halfway, once its caches and pools are warm). Beside them, what tells a slow server from
a starved one: the cores each part used in each phase (arena/bench/cpu_share.py: the server, its
ladder, the callers, the kernel's threads and the rest of the machine), how many of the server's
threads waited for a core, and the callers' own loop lag, which is inside every latency.

The server runs as a session of its own, as a service does: under Linux's autogroup scheduling a
child in the bench's session would share one scheduling entity with the callers.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import secrets
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from arena.bench.child import free_port, rss_kib, start, stop
from arena.bench.cpu_share import cores, sample
from arena.bench.load_clients import SLOW_BUILD, Target, loopback_transport, run_callers

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
STEADY_CI = (
    0.01  # `arena serve --stable-ci`: no season settles within the bench, so the ladder has work throughout
)
LADDER_BOTS = ("random", "greedy", "tactician")  # the house bots of the season
RULES = ["max_deals=2"]  # short matches: many results a minute, so the rates compare
TARGET_RATE = 0.80  # the ladder's rate under load, against the same run's unloaded rate
TARGET_P99_MS = 200.0  # public reads under load
TARGET_RSS_GROWTH_MIB = 20.0  # "flat": the server's RSS grows at most this over the load's second half


@dataclass(frozen=True)
class LoadPlan:
    seconds: float = 60.0  # each phase
    spectators: int = 20
    owners: int = 5
    hostile: bool = True
    workers: int = 2
    sandbox: str = "bwrap"
    players_nice: int = 10  # the server's `--players-nice`


def _archive(folder: Path, build: str | None = None) -> bytes:
    """A .tar.gz of a sample bot's folder; with `build`, its bot.toml gains that build step."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            data = path.read_bytes()
            if path.name == "bot.toml" and build is not None:
                data += f'\nbuild = ["sh", "-c", {json.dumps(build)}]\n'.encode()
            info = tarfile.TarInfo(f"bot/{path.relative_to(folder)}")
            info.size, info.mode = len(data), path.stat().st_mode & 0o777
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _prepare(home: Path, plan: LoadPlan) -> tuple[dict[str, tuple[str, str]], tuple[str, str], list[str]]:
    """The store: the house bots, each owner with a bot of its own, the hostile owner's bot, and a
    running season that all of them are entered in."""
    from arena.access.owners import add_owner
    from arena.ladder.seasons import create_season, start_season
    from arena.referee import TimeControl
    from arena.store import Store
    from arena.workers.submit import submit_bundle

    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    bots: list[str] = []
    for name in LADDER_BOTS:
        submit_bundle(store, SAMPLES / name, name=name, owner=f"house-{name}", launcher=plan.sandbox)
        bots.append(name)
    owners: dict[str, tuple[str, str]] = {}
    for i in range(plan.owners):
        owner, bot = f"author{i + 1}", f"author{i + 1}-bot"
        token = add_owner(store, owner)
        submit_bundle(store, SAMPLES / "random", name=bot, owner=owner, launcher=plan.sandbox)
        owners[owner] = (token, bot)
        bots.append(bot)
    token = add_owner(store, "mallory")
    submit_bundle(store, SAMPLES / "random", name="mallory-bot", owner="mallory", launcher=plan.sandbox)
    bots.append("mallory-bot")
    clocks = asdict(TimeControl.parse("move=1s,bank=10s"))
    create_season(store, "load", rules=RULES, duplicate=True, time_control=clocks)
    start_season(store, "load")
    store.engine.dispose()
    return owners, (token, "mallory-bot"), bots


def _recorded(url: str) -> Callable[[], int]:
    """A reader of the season's recorded matches, from the bench's own connection to the store."""
    from arena.store import Store
    from arena.store import models as m

    store = Store.open(url)

    def count() -> int:
        with store.tx() as s:
            return int(s.scalar(select(func.count()).select_from(m.Match).where(
                m.Match.kind == "ladder", m.Match.status == "done")) or 0)  # fmt: skip

    return count


def _running(url: str) -> Callable[[], list[int]]:
    from arena.store import Store
    from arena.store import models as m

    store = Store.open(url)

    def ids() -> list[int]:
        with store.tx() as s:
            return list(s.scalars(select(m.Match.id).where(m.Match.status == "running").limit(8)))

    return ids


def _start(home: Path, plan: LoadPlan, token_file: Path) -> tuple[subprocess.Popen, str, str]:
    import httpx

    port, web = free_port(), free_port()
    env = {**os.environ, "ARENA_HOME": str(home), "ARENA_DATABASE_URL": f"sqlite:///{home / 'arena.db'}"}
    args = ["serve", "--unix", "", "--tcp", f"127.0.0.1:{port}", "--web", f"127.0.0.1:{web}",
            "--workers", str(plan.workers), "--players-nice", str(plan.players_nice), "--stable-ci", str(STEADY_CI), "--sandbox", plan.sandbox, "--admin-token-file", str(token_file),
            "--replays", str(home / "replays")]  # fmt: skip

    def healthy() -> bool:
        try:
            return asyncio.run(_healthz(f"http://127.0.0.1:{web}/healthz"))
        except httpx.HTTPError:
            return False

    proc = start(args, home, env, healthy, wait=90, session=True)
    return proc, f"127.0.0.1:{port}", f"http://127.0.0.1:{web}"


async def _healthz(url: str) -> bool:
    import httpx

    async with httpx.AsyncClient(transport=loopback_transport("127.0.0.1"), timeout=2) as web:
        return (await web.get(url)).status_code == 200


def _ladder_rate(recorded: Callable[[], int], seconds: float) -> tuple[int, float]:
    """Matches recorded during the next `seconds`, and that as a rate per minute."""
    before, started = recorded(), time.monotonic()
    time.sleep(seconds)
    done = recorded() - before
    return done, done * 60.0 / (time.monotonic() - started)


def _warm_up(recorded: Callable[[], int], proc: subprocess.Popen, limit: float = 120.0) -> None:
    """Wait until the ladder has recorded its first match: the bots' first starts are not the rate."""
    deadline = time.monotonic() + limit
    while recorded() == 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the ladder recorded no match; the server's log says why")
        time.sleep(0.25)


def run(plan: LoadPlan, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Both phases against one child `arena serve`; the figures and the targets."""
    step = progress or (lambda _f: None)
    with tempfile.TemporaryDirectory(prefix="arena-bench-load-") as folder:
        home = Path(folder)
        owners, hostile, bots = _prepare(home, plan)
        step(0.1)
        admin = home / "admin-token"
        admin.write_text(secrets.token_urlsafe(24))
        admin.chmod(0o600)
        url = f"sqlite:///{home / 'arena.db'}"
        proc, grpc_address, web_url = _start(home, plan, admin)
        try:
            recorded = _recorded(url)
            _warm_up(recorded, proc)
            step(0.2)
            idle_rss = rss_kib(proc.pid)
            cpu = [sample(proc.pid)]
            base_done, base_rate = _ladder_rate(recorded, plan.seconds)
            cpu.append(sample(proc.pid))
            step(0.5)
            target = Target(
                grpc_address=grpc_address,
                web_url=web_url,
                bots=bots,
                owners=owners,
                hostile=hostile,
                upload=_archive(SAMPLES / "random"),
                slow_upload=_archive(SAMPLES / "random", build=f"sleep {min(SLOW_BUILD, plan.seconds):g}"),
                running=_running(url),
            )
            start_rss, before, began = rss_kib(proc.pid), recorded(), time.monotonic()
            mid: list[int] = []  # the RSS halfway through the load: caches and pools are warm by then
            sampler = threading.Timer(plan.seconds / 2, lambda: mid.append(rss_kib(proc.pid)))
            sampler.start()
            tally = asyncio.run(run_callers(target, plan.seconds, plan.spectators, plan.owners, plan.hostile))
            sampler.cancel()
            cpu.append(sample(proc.pid))
            loaded_done = recorded() - before
            loaded_rate = loaded_done * 60.0 / (time.monotonic() - began)
            end_rss = rss_kib(proc.pid)
            alive = proc.poll() is None
            step(1.0)
        finally:
            stop(proc)
    ratio = loaded_rate / base_rate if base_rate else 0.0
    p99 = tally.public_reads_p99()
    mid_rss = mid[0] if mid else start_rss
    growth = (end_rss - mid_rss) / 1024
    return {
        "plan": plan.__dict__,
        "server_alive": alive,
        "errors": tally.errors(),
        "ladder_unloaded_per_min": round(base_rate, 1),
        "ladder_loaded_per_min": round(loaded_rate, 1),
        "ladder_matches": {"unloaded": base_done, "loaded": loaded_done},
        "ladder_ratio": round(ratio, 3),
        "public_reads_p99_ms": p99,
        "callers_loop_lag": tally.loop_lag(),
        "rss_idle_mib": round(idle_rss / 1024, 1),
        "rss_load_start_mib": round(start_rss / 1024, 1),
        "rss_load_mid_mib": round(mid_rss / 1024, 1),
        "rss_load_end_mib": round(end_rss / 1024, 1),
        "cpu_cores": {"unloaded": cores(cpu[0], cpu[1]), "loaded": cores(cpu[1], cpu[2])},
        "targets": {
            "errors": 0,
            "ladder_ratio": TARGET_RATE,
            "public_reads_p99_ms": TARGET_P99_MS,
            "rss_growth_mib": TARGET_RSS_GROWTH_MIB,
        },
        "met": {
            "errors": tally.errors() == 0,
            "ladder_ratio": ratio >= TARGET_RATE,
            "public_reads_p99_ms": p99 is not None and p99 <= TARGET_P99_MS,
            "rss_flat": growth <= TARGET_RSS_GROWTH_MIB,
        },
        "calls": tally.report(),
    }

"""`arena bench sandbox`: what the sandbox costs, and how fair the clocks are under load.

1. Launch overhead, in one run, interleaved round by round so drifting load hits every variant
   alike: a bare `python -c ...` process start (the baseline) against the same program started as
   a bundle by each available launcher (local, bwrap, docker when an engine answers), and by bwrap
   with the whole virtualenv bound (`bwrap-venv`, the runtime before the lean prefix). Two programs:
   `pass` (pure start-up) and `import grpc, arena.sdk` (what every Python bot pays first). Each
   launch's CPU (its cgroup's under bwrap, which holds the chain from its cgroup join on; else this process's
   waited-for children's) is kept beside its wall time: on a loaded machine only CPU compares.
2. Fair clocks: real sandboxed matches between a "worker" bot, which burns a fixed amount of CPU
   per move (measured with process_time, so its work is constant), and a "ponderer", which also
   spins in a background thread while its opponent thinks. The figure is the time the referee
   charged the worker per move, with 1 and with 2 concurrent matches, without pausing the bot that
   is not on move, pausing it on every move (`always`: the design before), and pausing it once it
   has pondered (`pondering`: MatchRunner(pause_idle=True) -> BwrapProcess.pause/resume today).
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORK_MS = 20
WORKER = f"""
import time
from arena.sdk import Bot, run


class Worker(Bot):
    def play(self, view):
        end = time.process_time() + {WORK_MS} / 1000
        while time.process_time() < end:
            pass
        return view.legal[0]


run(Worker())
"""
PONDERER = """
import threading
from arena.sdk import Bot, run


def ponder():
    x = 0
    while True:
        x += 1


threading.Thread(target=ponder, daemon=True).start()


class Ponderer(Bot):
    def play(self, view):
        return view.legal[0]


run(Ponderer())
"""
PAUSE_MODES = ("off", "always", "pondering")  # the idle bot: never, on every move, once it pondered
PROGRAMS = {"pass": "pass\n", "import grpc, arena.sdk": "import grpc, arena.sdk\n"}


def write_bundle(root: Path, name: str, code: str, protocol: str = "grpc") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bot.py").write_text(code)
    toml = f'name = "{name}"\nlanguage = "python"\nrun = ["python3", "bot.py"]\nprotocol = "{protocol}"\n'
    (root / "bot.toml").write_text(toml)
    root.chmod(0o755)
    return root


def available_launchers() -> dict[str, Any]:
    from arena.sandbox.bwrap import BwrapLauncher
    from arena.sandbox.launchers import LauncherUnavailable, get_launcher

    found: dict[str, Any] = {}
    for name in ("local", "bwrap", "docker"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found[name] = get_launcher(name, warn=False)
        except LauncherUnavailable:
            pass
    if "bwrap" in found:
        found["bwrap-venv"] = BwrapLauncher(full_venv=True)
    return found


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (blind to what bwrap's pid namespace never reaps)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_launch(launcher: Any, bundle: Any, sock: Path) -> tuple[float, float, float]:
    """(seconds until the bot exited, CPU seconds of the launch, seconds kill() took to clean up)."""
    from arena.sandbox.launcher import LaunchSpec

    c0, t0 = children_cpu(), time.perf_counter()
    proc = launcher.launch(LaunchSpec(bundle, sock))
    while proc.exit_status() is None:
        time.sleep(0.0005)
    t1 = time.perf_counter()
    in_cgroup = proc.cpu_seconds() if getattr(proc, "cgroup", None) is not None else None
    proc.kill()
    # bwrap's sandboxed tree is not waited for by this process: its CPU is read from its cgroup
    cpu = in_cgroup if in_cgroup is not None else children_cpu() - c0
    if proc.exit_status() != 0:
        raise RuntimeError(f"{launcher.name}: the bench bot failed: {proc.output_tail(5)}")
    return t1 - t0, cpu, time.perf_counter() - t1


def launch_overhead(rounds: int = 10, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    from arena.sandbox.bundle import load_bundle

    launchers = available_launchers()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        Path(tmp).chmod(0o755)
        sock = Path(tmp) / "referee.sock"  # bound into the sandbox like a referee's; nobody connects
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(sock))
        bundles = {
            label: load_bundle(write_bundle(Path(tmp) / f"p{i}", f"p{i}", code))
            for i, (label, code) in enumerate(PROGRAMS.items())
        }
        samples: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        cleanup: dict[str, list[float]] = {}
        steps = rounds * len(PROGRAMS) * (1 + len(launchers))
        done = 0
        for _ in range(rounds):
            for label, code in PROGRAMS.items():
                c0, t0 = children_cpu(), time.perf_counter()
                subprocess.run([sys.executable, "-c", code], check=True)
                samples.setdefault((label, "bare"), []).append(time.perf_counter() - t0)
                cpu.setdefault((label, "bare"), []).append(children_cpu() - c0)
                done += 1
                for name, launcher in launchers.items():
                    took, used, cleaned = _time_launch(launcher, bundles[label], sock)
                    samples.setdefault((label, name), []).append(took)
                    cpu.setdefault((label, name), []).append(used)
                    cleanup.setdefault(name, []).append(cleaned)
                    done += 1
                if progress:
                    progress(done / steps)
        listener.close()
    for (label, name), values in samples.items():
        med = statistics.median(values)
        bare = statistics.median(samples[(label, "bare")])
        used, bare_cpu = statistics.median(cpu[(label, name)]), statistics.median(cpu[(label, "bare")])
        results.setdefault(label, {})[name] = {
            "median_ms": med * 1000,
            "overhead_ms": (med - bare) * 1000,
            "ratio": med / bare,
            "cpu_ms": used * 1000,
            "cpu_overhead_ms": (used - bare_cpu) * 1000,
        }
    results["cleanup_ms"] = {name: statistics.median(v) * 1000 for name, v in cleanup.items()}
    results["launchers"] = list(launchers)
    results["rounds"] = rounds
    return results


def _charged_per_move(outcome: Any, seat: int) -> float:
    timing = outcome.record.timing
    return timing.think_total_us[seat] / max(1, timing.moves[seat]) / 1000


def fair_clocks(deals: int = 2, progress: Callable[[float], None] | None = None) -> list[dict[str, Any]]:
    """Per-move time charged to the worker, by scenario."""
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher
    from arena.workers.match import play_match

    launcher = HandleKeeper(BwrapLauncher())
    rows: list[dict[str, Any]] = []
    scenarios = [(opp, n, pause) for opp in ("worker", "ponderer") for pause in PAUSE_MODES for n in (1, 2)]
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        Path(tmp).chmod(0o755)
        worker = load_bundle(write_bundle(Path(tmp) / "worker", "worker", WORKER))
        ponderer = load_bundle(write_bundle(Path(tmp) / "ponderer", "ponderer", PONDERER))
        tc = TimeControl(startup=30, move=5, bank=60)
        for i, (opp, n, mode) in enumerate(scenarios):
            pause = mode != "off"
            launcher.pause_always = mode == "always"
            outcomes: list[Any] = [None] * n
            cpu: list[float] = [0.0] * n
            caught: list[bool] = [False] * n

            def one(
                k: int,
                opp: str = opp,
                pause: bool = pause,
                outcomes: list[Any] = outcomes,
                cpu: list[float] = cpu,
                caught: list[bool] = caught,
                i: int = i,
            ) -> None:
                label = f"bench{i}-{k}"
                at_start: list[float] = []

                def on_event(ev: dict[str, Any]) -> None:
                    if ev["event"] == "started":  # both joined: the worker's start-up CPU is behind it
                        at_start.append(launcher.handle(f"{ev['match_id']}-seat0").cpu_seconds() or 0.0)

                outcomes[k] = play_match(
                    (worker, worker if opp == "worker" else ponderer),
                    rules=Rules(max_deals=deals),
                    seed=100 + k,
                    time_control=tc,
                    launcher=launcher,
                    pause_idle=pause,
                    on_event=on_event,
                    match_id=label,
                )
                caught[k] = bool(getattr(launcher.handle(f"{label}-seat1"), "pondered", False))
                end = launcher.handle(f"{label}-seat0").cpu_seconds() or 0.0
                moves = max(1, outcomes[k].record.timing.moves[0])
                cpu[k] = (end - (at_start[0] if at_start else 0.0)) / moves * 1000

            threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            charged = [_charged_per_move(o, 0) for o in outcomes]
            bad = [o.verdicts for o in outcomes if o.verdicts != ("OK", "OK")]
            rows.append(
                {
                    "opponent": opp,
                    "matches": n,
                    "pause_idle": pause,
                    "pause": mode,
                    "opponent_pondered": sum(caught),  # opponents flagged as pondering (bwrap)
                    "work_ms": WORK_MS,
                    "charged_ms": statistics.mean(charged),
                    "cpu_ms": statistics.mean(cpu),
                    "verdicts_not_ok": bad,
                    "loadavg": os.getloadavg()[0],
                }
            )
            if progress:
                progress((i + 1) / len(scenarios))
    return rows


class HandleKeeper:
    """Passes launches through and keeps each handle by its label, to read its CPU time later.
    With `pause_always`, each bwrap handle counts as pondering from its launch, so that it is
    paused on every move: the fair-clock design before pausing waited for a bot to ponder."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.direct_stdio = getattr(inner, "direct_stdio", False)
        self.pause_always = False
        self._handles: dict[str, Any] = {}

    def launch(self, spec: Any) -> Any:
        handle = self.inner.launch(spec)
        if self.pause_always and hasattr(handle, "pondered"):
            handle.pondered = True
        self._handles[spec.label] = handle
        return handle

    def build(self, bundle: Any, limits: Any) -> Any:
        return self.inner.build(bundle, limits)

    def handle(self, label: str) -> Any:
        return self._handles[label]


def run(
    rounds: int = 10,
    deals: int = 2,
    progress: Callable[[str, float], None] | None = None,
    chain_rounds: int = 30,
    chain_only: bool = False,
) -> dict[str, Any]:
    from arena.bench import launch_chain, pause_cost

    try:
        chain = launch_chain.run(chain_rounds, (lambda f: progress("chain", f)) if progress else None)
    except RuntimeError as exc:  # no helper or no CPU accounting here: the rest still measures
        chain = {"skipped": str(exc), "load": os.getloadavg()[0]}
    if chain_only:
        return {"chain": chain}
    launch = launch_overhead(rounds, (lambda f: progress("launch", f)) if progress else None)
    clocks = fair_clocks(deals, (lambda f: progress("clocks", f)) if progress else None)
    cost = pause_cost.run(progress=(lambda f: progress("cost", f)) if progress else None)
    return {"chain": chain, "launch": launch, "fair_clocks": clocks, "pause_cost": cost}

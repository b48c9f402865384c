"""`arena bench sandbox`, first part: where a bwrap launch's time goes, phase by phase, with the
same run's baselines: a bare fork+exec of the same program, and `bwrap` alone with the launch's own
arguments (docs/sandbox.md, "`arena bench sandbox`").

The program is `/usr/bin/true`, so that the chain is all there is to measure. Variants are
interleaved round by round, medians printed. Each is started from the spawner thread (as a launch
is) through a meter: the launch helper joins a cgroup leaf of its own and execs the variant, so
every process of it is counted, those inside bwrap's pid namespace too (the referee's
`RUSAGE_CHILDREN` never sees them: bwrap's init is not reaped by a waiter). A launch's CPU is that
leaf's, plus the bot leaf's its chain moved into, plus this process's own (the steps before the fork,
the fork itself). The meter's own exec comes before its join and is not counted; its wall time is
in every variant alike.

The full launch is `BwrapLauncher.start`'s steps taken one by one, each timed: the sweep of dead
referees' leaves, the uid lease, the cgroup leaf with its limits, the seccomp filter's fd, the
argument list, the spawner thread's fork and first exec, then the chain until the program has run,
then `kill()`'s clean-up. The chain's own execs are told apart by variants that stop early: the
death-signal guard alone, the guard with the cgroup join and rlimits, bwrap alone, bwrap with the uid
switch. Each with the helper (now) and with the util-linux tools (the chain before it).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.bench import warm_launch
from arena.bench.sandbox import children_cpu
from arena.bench.warm_launch import WarmLaunches

TRUE = "/usr/bin/true"
#: The targets of issue #18: the chain at most 2x bwrap's own start; a launch at most 5 ms over a bare one.
CHAIN_RATIO_TARGET = 2.0
OVERHEAD_TARGET_MS = 5.0
STEPS = ("sweep", "uid lease", "cgroup leaf", "seccomp fd", "argv", "spawn", "run", "cleanup")


class Meter:
    """A cgroup leaf that each measured process tree joins first (through the launch helper)."""

    def __init__(self) -> None:
        from arena.sandbox import cgroups, launch_helper

        self.helper = launch_helper.path()
        self.cg = cgroups.create(1 << 40, 4096, "benchmeter")
        if self.helper is None or self.cg is None or self.cg.cpu_seconds() is None:
            raise RuntimeError(
                "the launch-chain benchmark needs the launch helper and a cgroup with CPU accounting"
            )

    def wrap(self, argv: list[str]) -> list[str]:
        from arena.sandbox import launch_helper

        assert self.helper is not None and self.cg is not None
        return [*launch_helper.outer(self.helper, os.getpid(), self.cg.procs_files(), []), *argv]

    def cpu(self) -> float:
        assert self.cg is not None
        return self.cg.cpu_seconds() or 0.0

    def close(self) -> None:
        if self.cg is not None:
            self.cg.remove()


def _tree_cpu(meter: Meter | None) -> float:
    """CPU so far of what was measured: the meter's leaf, or (unmetered, as issue #18 counted) the
    reaped children's, which misses everything inside bwrap's pid namespace."""
    return meter.cpu() if meter is not None else children_cpu()


def _spawn(meter: Meter | None, argv: list[str], pass_fds: tuple[int, ...], env: dict[str, str]) -> Any:
    from arena.sandbox import spawn

    return spawn.popen(
        args=meter.wrap(argv) if meter is not None else argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=pass_fds,
        start_new_session=True,
        env=env,
    )


def _with_fds(argv: list[str], fds: tuple[int, ...]) -> list[str]:
    """`argv` with bwrap's --seccomp and --json-status-fd naming `fds` (filter, status)."""
    out = list(argv)
    named = fds[-2:] if len(fds) == 2 else (None, *fds)
    for flag, fd in zip(("--seccomp", "--json-status-fd"), named, strict=True):
        if flag in out:
            if fd is None:
                at = out.index(flag)
                del out[at : at + 2]
            else:
                out[out.index(flag) + 1] = str(fd)
    return out


def _measure(
    meter: Meter | None, argv: list[str], env: dict[str, str], fds: Callable[[], tuple[int, ...]]
) -> tuple[float, float]:
    """(wall, CPU) seconds of one variant until it exited; `fds` makes the fds it needs."""
    passed = fds()
    argv = _with_fds(argv, passed) if passed else argv
    try:
        c0, s0, t0 = _tree_cpu(meter), time.process_time(), time.perf_counter()
        proc = _spawn(meter, argv, passed, env)
        rc = proc.wait()
        wall = time.perf_counter() - t0
        cpu = _tree_cpu(meter) - c0 + time.process_time() - s0
    finally:
        for fd in passed:
            os.close(fd)
    if rc != 0:
        raise RuntimeError(f"{argv[0]} exited {rc}")
    return wall, cpu


def _fds() -> tuple[int, ...]:
    """A fresh seccomp filter fd and a status fd, as a launch passes bwrap."""
    from arena.sandbox import seccomp

    filt = seccomp.filter_fd()
    status = os.open("/dev/null", os.O_WRONLY | os.O_CLOEXEC)
    return (filt, status) if filt is not None else (status,)


def _launch(launcher: Any, meter: Meter | None, bundle: Any) -> dict[str, tuple[float, float]]:
    """`BwrapLauncher.start(bundle, [TRUE], {}, Limits(), socket_path=None)` step by step, then kill()'s
    clean-up: (wall, CPU) seconds per step. Unmetered (`meter` None) the bot leaf's CPU is not
    added either: the referee's own rusage, as issue #18 counted."""
    from arena.sandbox import bwrap, cgroups, seccomp, uids
    from arena.sandbox.launcher import Limits

    limits, out = Limits(), {}
    clock = [time.perf_counter(), time.process_time()]

    def step(name: str, extra_cpu: float = 0.0) -> None:
        now = [time.perf_counter(), time.process_time()]
        out[name] = (now[0] - clock[0], now[1] - clock[1] + extra_cpu)
        clock[:] = [time.perf_counter(), time.process_time()]

    bwrap._sweep()
    step("sweep")
    lease = uids.acquire(launcher.state_dir / "uids") if launcher.privileged else None
    step("uid lease")
    cg = cgroups.create(limits.memory, limits.pids, "bench") if launcher.use_cgroups else None
    step("cgroup leaf")
    seccomp_fd = seccomp.filter_fd() if launcher.use_seccomp else None
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    step("seccomp fd")
    uid = lease.uid if lease else os.getuid()
    args = launcher._command(bundle, [TRUE], limits, uid, None, False, (), seccomp_fd, status_w, cg)
    env = launcher._environment(bundle.language, {})
    step("argv")
    c0 = _tree_cpu(meter)
    fds = tuple(fd for fd in (seccomp_fd, status_w) if fd is not None)
    proc = _spawn(meter, args, fds, env)
    for fd in fds:
        os.close(fd)
    step("spawn")
    rc = proc.wait()
    leaf = (cg.cpu_seconds() or 0.0) if cg is not None and meter is not None else 0.0
    step("run", _tree_cpu(meter) - c0 + leaf)
    os.close(status_r)
    if cg is not None:
        cg.remove()
    if lease is not None:
        lease.release()
    step("cleanup")
    if rc != 0:
        raise RuntimeError(f"the launch chain exited {rc}")
    return out


def _variants(launcher: Any, meter: Meter, bundle: Any, uid: int) -> dict[str, tuple[list[str], bool]]:
    """The shorter chains, by name: (argv, whether it needs bwrap's fds)."""
    from arena.sandbox import launch_helper, spawn
    from arena.sandbox.launcher import Limits

    limits = Limits()
    full = launcher._command(bundle, [TRUE], limits, uid, None, False, (), 3, 4, meter.cg)
    at = full.index(launcher.bwrap)
    tail = full[at:]
    become = tail.index("--") + 1  # bwrap's own arguments end at the first "--"
    prelude = full[:at]
    if launcher.helper is not None:
        guard = launch_helper.outer(launcher.helper, os.getpid(), [], [])
    else:
        guard = spawn.guarded([], helper=False)
    return {
        "guard": ([*guard, TRUE], False),
        "guard, join, rlimits": ([*prelude, TRUE], False),
        "bwrap alone": ([*tail[:become], TRUE], True),
        "bwrap, uid switch": (tail, True),
    }


def run(rounds: int = 30, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    from arena.bench.sandbox import write_bundle
    from arena.sandbox import uids
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher

    chains = {"helper": BwrapLauncher(), "util-linux": BwrapLauncher(helper=False)}
    if chains["helper"].helper is None:
        del chains["helper"]
    meter = Meter()
    lease = uids.acquire(chains["util-linux"].state_dir / "uids") if chains["util-linux"].privileged else None
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def keep(name: str, figures: tuple[float, float]) -> None:
        wall.setdefault(name, []).append(figures[0] * 1000)
        cpu.setdefault(name, []).append(figures[1] * 1000)

    warm: WarmLaunches | None = None
    warm_skipped = ""
    try:
        with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
            Path(tmp).chmod(0o755)
            bundle = load_bundle(write_bundle(Path(tmp) / "b", "b", "pass\n"))
            try:
                warm = WarmLaunches(Path(tmp))
            except RuntimeError as exc:  # no warm start here (not root, no cgroups): the chain still measures
                warm_skipped = str(exc)
            uid = lease.uid if lease else os.getuid()
            variants = {name: _variants(launcher, meter, bundle, uid) for name, launcher in chains.items()}
            plain = {"PATH": "/usr/bin:/bin"}
            for _ in range(2):  # warm the caches (bwrap_args, page cache) before anything counts
                for launcher in chains.values():
                    _launch(launcher, meter, bundle)
            for i in range(rounds):
                keep("bare", _measure(meter, [TRUE], plain, tuple))
                for chain, launcher in chains.items():
                    for name, (argv, needs_fds) in variants[chain].items():
                        if chain != "helper" and name == "bwrap alone":
                            continue  # the same bwrap command either way: measured once
                        key = "bwrap alone" if name == "bwrap alone" else f"{chain}: {name}"
                        keep(key, _measure(meter, argv, plain, _fds if needs_fds else tuple))
                    steps = _launch(launcher, meter, bundle)
                    for step_name, figures in steps.items():
                        keep(f"{chain}: step {step_name}", figures)
                    keep(f"{chain}: launch", _total(steps))
                    keep(f"{chain}: launch, unmetered", _total(_launch(launcher, None, bundle)))
                argv, _ = variants[next(iter(chains))]["bwrap alone"]
                keep("bwrap alone, unmetered", _measure(None, argv, plain, _fds))
                minimal = [chains[next(iter(chains))].bwrap, "--ro-bind", "/", "/", TRUE]
                keep("bwrap minimal", _measure(meter, minimal, plain, tuple))
                keep("bwrap minimal, unmetered", _measure(None, minimal, plain, tuple))
                if warm is not None:
                    for name, figures in warm.launch(warm=True).items():
                        keep(f"warm: {name}", figures)
                    keep("cold python: launch", warm.launch(warm=False)["launch"])
                if progress:
                    progress((i + 1) / rounds)
    finally:
        if warm is not None:
            warm.close()
        meter.close()
        if lease is not None:
            lease.release()
    out = summarize(wall, cpu, list(chains), rounds)
    if warm is None:
        out["warm_skipped"] = warm_skipped
    return out


def _total(steps: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """A launch's (wall, CPU): every step but the clean-up after it."""
    launch = [steps[s] for s in STEPS if s != "cleanup"]
    return sum(f[0] for f in launch), sum(f[1] for f in launch)


def summarize(
    wall: dict[str, list[float]], cpu: dict[str, list[float]], chains: list[str], rounds: int
) -> dict[str, Any]:
    med = {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in wall}
    bare, alone = med["bare"], med["bwrap alone"]
    out: dict[str, Any] = {"rounds": rounds, "load": os.getloadavg()[0], "medians_ms": med, "chains": {}}
    if "warm: launch" in med:
        over = med["warm: launch"][1] - bare[1]
        out["warm"] = {"overhead_vs_bare": over, "overhead_met": over <= OVERHEAD_TARGET_MS,
                       "vs_cold": med["warm: launch"][1] / med["cold python: launch"][1]}  # fmt: skip
    for chain in chains:
        g, p, u = (
            med[f"{chain}: guard"],
            med[f"{chain}: guard, join, rlimits"],
            med[f"{chain}: bwrap, uid switch"],
        )
        launch, unmetered = med[f"{chain}: launch"], med[f"{chain}: launch, unmetered"]
        execs = {
            "death-signal guard": (g[0] - bare[0], g[1] - bare[1]),
            "cgroup join and rlimits": (p[0] - g[0], p[1] - g[1]),
            "bwrap (namespaces, mounts, seccomp)": (alone[0] - bare[0], alone[1] - bare[1]),
            "uid switch inside": (u[0] - alone[0], u[1] - alone[1]),
        }
        out["chains"][chain] = {
            "steps": {s: med[f"{chain}: step {s}"] for s in STEPS},
            "execs": execs,
            "launch": launch,
            "overhead_vs_bare": (launch[0] - bare[0], launch[1] - bare[1]),
            "vs_bwrap_alone": (launch[0] / alone[0], launch[1] / alone[1]),
            "vs_bwrap_minimal": launch[1] / med["bwrap minimal"][1],
            "chain_ratio_met": launch[1] / alone[1] <= CHAIN_RATIO_TARGET,
            "overhead_met": launch[1] - bare[1] <= OVERHEAD_TARGET_MS,
            "overhead_wall_met": launch[0] - bare[0] <= OVERHEAD_TARGET_MS,
            "unmetered": unmetered,
            "unmetered_vs_bwrap_alone": unmetered[1] / med["bwrap alone, unmetered"][1],
            "unmetered_vs_bwrap_minimal": unmetered[1] / med["bwrap minimal, unmetered"][1],
        }
    return out


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def rows(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The printed table: the baselines, each chain's steps and execs, its launch against them."""
    if "skipped" in r:
        return [("launch chain", "skipped", r["skipped"])]
    med = r["medians_ms"]

    def row(name: str, pair: tuple[float, float] | list[float], note: str = "") -> tuple[str, str, str]:
        return (name, f"{pair[1]:.2f} ms", f"wall {pair[0]:.2f} ms" + (f"; {note}" if note else ""))

    bare, alone = med["bare"], med["bwrap alone"]
    out = [
        row("baseline: bare fork+exec of true", bare),
        row(
            "baseline: bwrap alone, the launch's arguments", alone, f"+{alone[1] - bare[1]:.2f} ms over bare"
        ),
        row("baseline: bwrap --ro-bind / / true", med["bwrap minimal"], "issue #18's 'bwrap's own start'"),
    ]
    for chain, c in r["chains"].items():
        label = "launch, helper (now)" if chain == "helper" else "launch, old exec chain"
        out += [
            row(f"{label}: {name}", pair, "after the launch" if name == "cleanup" else "")
            for name, pair in c["steps"].items()
        ]
        out += [
            (f"{label}:   of which {name}", f"{pair[1]:.2f} ms", "by difference of shorter chains")
            for name, pair in c["execs"].items()
        ]
        over, ratio = c["overhead_vs_bare"], c["vs_bwrap_alone"]
        out.append(row(f"{label}: total", c["launch"], "every step but the clean-up"))
        out.append(
            (
                f"{label}: vs bare",
                f"{over[1]:+.2f} ms",
                f"wall {over[0]:+.2f} ms; target <= +{OVERHEAD_TARGET_MS:g} ms: {met(c['overhead_met'])}",
            )
        )
        out.append(
            (
                f"{label}: vs bwrap alone",
                f"{ratio[1]:.2f}x",
                f"target <= {CHAIN_RATIO_TARGET:g}x: {met(c['chain_ratio_met'])}; vs bwrap --ro-bind / / true {c['vs_bwrap_minimal']:.2f}x",
            )
        )
        out.append(
            (
                f"{label}: as issue #18 counted",
                f"{c['unmetered'][1]:.2f} ms",
                f"the referee's rusage, blind inside bwrap's pid namespace: {c['unmetered_vs_bwrap_alone']:.2f}x bwrap alone, "
                f"{c['unmetered_vs_bwrap_minimal']:.2f}x bwrap --ro-bind / / true (counted so: "
                f"{med['bwrap alone, unmetered'][1]:.2f} and {med['bwrap minimal, unmetered'][1]:.2f} ms)",
            )
        )
    out += warm_launch.rows(med, row)
    if "warm_skipped" in r:
        out.append(("warm launch", "skipped", r["warm_skipped"]))
    return out  # fmt: skip

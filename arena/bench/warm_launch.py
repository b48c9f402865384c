"""`arena bench sandbox`, the warm launch: what a match's launch costs when its bot is forked by a
zygote (docs/sandbox.md "Warm start"), every process counted, in the launch chain's rounds (so
against the same bare fork+exec of `true`).

A cold launch pays bwrap's own start (namespaces, mounts, seccomp: +7 ms over a bare start by itself)
and the runtime's start for every match; a warm one pays them once per zygote. Each match then pays
the match's uid lease and cgroup leaf, the hand-over of its pipes, the zygote's fork, the child's own
steps (its uid, its credentials, the go) and its script, then its exit. The bot is a stdio Python bot
whose script is `pass`, so that the launch is all there is; it is also launched cold, to show what
the warm start saves. A launch ends when the bot's stdout closed and its exit was seen.

CPU counted: this process's (the launcher's steps, the output capture's thread), the zygote's leaf
(the fork; the child's steps before it is moved) and the match's leaf (the child from then on);
for the cold launch, this process's, its reaped children's and the bot's leaf.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from arena.bench.sandbox import children_cpu, write_bundle
from arena.sandbox.warm import WarmChild


class WarmLaunches:
    """A warm and a cold launcher of the same `pass` bot, measured one launch at a time."""

    def __init__(self, tmp: Path) -> None:
        from arena.sandbox.bundle import load_bundle
        from arena.sandbox.bwrap import BwrapLauncher, warm_unavailable

        why = warm_unavailable()
        if why is not None:
            raise RuntimeError(why)
        self.bundle = load_bundle(write_bundle(tmp / "warm", "warm", "pass\n", protocol="stdio"))
        self.warm = BwrapLauncher(warm=True)
        self.cold = BwrapLauncher(warm=False)
        self.tmp = tmp
        self.count = 0
        for _ in range(2):  # the zygote starts (once), then the caches settle
            self.launch(warm=True)
        if self.warm.warm is None or self.warm.warm.zygote_for(self.bundle.path) is None:
            raise RuntimeError("the warm start made no zygote here")

    def _spec(self) -> Any:
        from arena.sandbox.launcher import LaunchSpec, Limits

        self.count += 1
        return LaunchSpec(
            bundle=self.bundle, socket_path=self.tmp / "unused.sock", env={}, limits=Limits(),
            label=f"bench-warm-{self.count}",
        )  # fmt: skip

    def launch(self, warm: bool) -> dict[str, tuple[float, float]]:
        """One launch until the bot exited, then its clean-up: (wall, CPU) seconds of each."""
        launcher = self.warm if warm else self.cold
        pool = launcher.warm
        zygote = pool.zygote_for(self.bundle.path) if pool is not None else None
        z0 = (zygote.proc.cpu_seconds() or 0.0) if zygote is not None else 0.0
        s0, c0, t0 = time.process_time(), children_cpu(), time.perf_counter()
        proc = launcher.launch(self._spec())
        if warm and not isinstance(proc, WarmChild):
            raise RuntimeError("a warm launch went cold (see the log)")
        pipes = getattr(proc, "protocol_pipes", None)
        if pipes is None:
            raise RuntimeError(f"the bench's stdio bot did not start: {proc.failure_verdict()}")
        stdin, stdout = pipes
        stdin.close()
        stdout.read()  # the started line, then EOF: the bot's stdout closed as it exited
        while proc.exit_status() is None:
            time.sleep(0.0002)
        wall = time.perf_counter() - t0
        if zygote is None:
            zygote = pool.zygote_for(self.bundle.path) if pool is not None else None
            z0 = 0.0  # started by this launch: all of its CPU is this launch's
        zyg = ((zygote.proc.cpu_seconds() or 0.0) - z0) if zygote is not None else 0.0
        cpu = time.process_time() - s0 + children_cpu() - c0 + zyg + (proc.cpu_seconds() or 0.0)
        s1, t1 = time.process_time(), time.perf_counter()
        proc.kill()
        stdout.close()
        cleanup = (time.perf_counter() - t1, time.process_time() - s1)
        return {"launch": (wall, cpu), "cleanup": cleanup}

    def close(self) -> None:
        if self.warm.warm is not None:
            self.warm.warm.close()


def rows(med: dict[str, Any], row: Any) -> list[tuple[str, str, str]]:
    """The warm launch's rows of the chain's table (`row` prints one (wall, CPU) pair)."""
    from arena.bench.launch_chain import OVERHEAD_TARGET_MS, met

    if "warm: launch" not in med:
        return []
    bare, warm, cold = med["bare"], med["warm: launch"], med["cold python: launch"]
    over = warm[1] - bare[1]
    return [
        row("warm launch of a Python bot (`pass`), until it exited", warm, "zygote's fork, match leaf, child"),
        ("warm launch: vs bare", f"{over:+.2f} ms",
         f"wall {warm[0] - bare[0]:+.2f} ms; target <= +{OVERHEAD_TARGET_MS:g} ms: {met(over <= OVERHEAD_TARGET_MS)}"),
        row("warm launch: clean-up", med["warm: cleanup"], "after the launch"),
        row("cold launch of the same bot, until it exited", cold,
            f"the warm launch is {warm[1] / cold[1]:.2f}x its CPU"),
    ]  # fmt: skip

#!/usr/bin/env python3
"""Start-up per bot language (docs/sandbox.md, "Start-up per language"): each stdio sample, built in
the bwrap sandbox (its cold build timed), then run with an empty stdin, so that it starts, reads end
of file and exits: bare on the host and as a bundle under the bwrap launcher, interleaved, medians.

    PYTHONPATH=. .venv/bin/python scripts/bench_languages.py [ROUNDS]

A stdio bot's Join comes from the Python bridge, which starts the bot first; these figures are what
the bot's own runtime adds to the bridge's start (`arena bench sandbox`, `import grpc, arena.sdk`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = ("c", "shell", "go", "rust", "csharp", "java", "ruby")


def main(rounds: int) -> dict[str, dict[str, float | None]]:
    os.environ["ARENA_BUNDLE_CACHE"] = tempfile.mkdtemp(prefix="bench-languages-")  # cold builds
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher
    from arena.sandbox.languages import missing_tools, runtime
    from arena.sandbox.launcher import Limits

    launcher = BwrapLauncher()
    out: dict[str, dict[str, float | None]] = {}
    for name in SAMPLES:
        bundle = load_bundle(REPO / "sample_bots" / "stdio" / name)
        if missing_tools(bundle.language):
            print(f"{name}: skipped, missing {', '.join(missing_tools(bundle.language))}", flush=True)
            continue
        start = time.monotonic()
        ok, log = launcher.build(bundle, Limits())
        build = time.monotonic() - start
        if not ok:
            print(f"{name}: build failed\n{log[-400:]}", flush=True)
            continue
        rt = runtime(bundle.language)
        env = {"PATH": rt.path, **dict(rt.env)}
        bare, boxed = [], []
        for _ in range(rounds):
            start = time.monotonic()
            subprocess.run(list(bundle.run), cwd=bundle.path, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)  # fmt: skip
            bare.append(time.monotonic() - start)
            start = time.monotonic()
            proc = launcher.start(
                bundle, list(bundle.run), {}, Limits(), socket_path=None, label="bench-lang"
            )
            while proc.exit_status() is None:
                time.sleep(0.002)
            boxed.append(time.monotonic() - start)
            proc.kill()
        out[name] = {
            "build_s": round(build, 1) if bundle.build else None,
            "bare_ms": round(1000 * statistics.median(bare), 1),
            "bwrap_ms": round(1000 * statistics.median(boxed), 1),
        }
        print(name, out[name], flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)))

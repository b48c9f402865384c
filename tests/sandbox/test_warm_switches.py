"""The warm start's user switches (`--warm/--no-warm`, docs/sandbox.md "Warm start"): real `arena`
processes on a real store and bwrap; a zygote (`python3 -P -m arena.sdk.zygote ...`) among the
command's descendants is what shows the switch took effect."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.workers.submit import submit_bundle
from tests.sandbox.sandbox_support import TIME_SCALE, warm_launcher

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path):
    """An ARENA_HOME with a running season of two sample Python bots."""
    probe = warm_launcher()
    probe.warm.close()
    home = tmp_path / "home"
    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    for name in ("random", "greedy"):
        submit_bundle(store, ROOT / "sample_bots" / "python" / name, name=name, owner=f"o-{name}")
    create_season(store, "s", rules=["max_deals=1"], time_control={"startup": 30.0 * TIME_SCALE}, seed=1)
    start_season(store, "s")
    store.close()
    return home


def _env(home: Path, warm_env: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_DATABASE_URL", "ARENA_WARM_START")}
    env.update(ARENA_HOME=str(home), PYTHONPATH=str(ROOT))
    if warm_env is not None:
        env["ARENA_WARM_START"] = warm_env
    return env


def _zygotes_under(root: int) -> set[int]:
    """Pids of the zygotes that descend from `root`."""
    parents: dict[int, int] = {}
    zygotes = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            if b"arena.sdk.zygote" in Path(f"/proc/{entry}/cmdline").read_bytes():
                zygotes.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    found = set()
    for pid in zygotes:
        up, hops = parents.get(pid, 0), 0
        while up > 1 and hops < 64:
            if up == root:
                found.add(pid)
                break
            up, hops = parents.get(up, 0), hops + 1
    return found


def _watch(proc: subprocess.Popen, timeout: float, until_zygote: bool = False) -> set[int]:
    """The zygotes seen under `proc` while it runs (or until the first one, with `until_zygote`)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        seen |= _zygotes_under(proc.pid)
        if seen and until_zygote:
            break
        time.sleep(0.05)
    return seen


@pytest.mark.parametrize(
    ("flag", "warm_env", "want"),
    [
        ("--warm", None, True),
        ("--no-warm", "1", False),
        (None, "1", True),
        (None, "0", False),
        (None, None, True),
    ],
    ids=["warm", "no-warm-beats-env", "env-on", "env-off", "default-on-where-it-works"],
)
def test_season_run_switch(home, flag, warm_env, want) -> None:
    args = [sys.executable, "-m", "arena.cli", "season", "run", "s", "--matches", "2", "--concurrency", "1"]
    args += ["--quiet"] + ([flag] if flag else [])
    proc = subprocess.Popen(args, env=_env(home, warm_env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        seen = _watch(proc, 120.0 * TIME_SCALE, until_zygote=want)
        if not want:  # the whole run played cold
            assert proc.wait(timeout=300 * TIME_SCALE) == 0, (
                proc.stdout.read().decode() if proc.stdout else ""
            )
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # a safe stop: its leases go back
            proc.wait(timeout=60)
    assert bool(seen) == want, (seen, proc.stdout.read().decode() if proc.stdout else "")


def test_serve_players_switch(home, tmp_path) -> None:
    args = [sys.executable, "-m", "arena.cli", "serve", "--unix", str(tmp_path / "s.sock"), "--workers", "1"]
    proc = subprocess.Popen(
        args + ["--warm"], env=_env(home, None), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        seen = _watch(proc, 120.0 * TIME_SCALE, until_zygote=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert seen, proc.stdout.read().decode() if proc.stdout else ""


def test_warm_with_another_sandbox_is_refused_in_one_line(home, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli, ["season", "run", "s", "--matches", "1", "--sandbox", "local", "--warm"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--warm needs the bwrap sandbox, not --sandbox local" in result.output
    result = CliRunner().invoke(
        cli, ["season", "run", "s", "--matches", "1", "--executor", "celery", "--no-warm"]
    )
    assert result.exit_code != 0 and "give it to `arena worker`" in result.output
    for command in (["season", "run"], ["worker"], ["serve"], ["demo"]):
        text = CliRunner().invoke(cli, [*command, "--help"]).output
        assert "--warm / --no-warm" in text and "ARENA_WARM_START=1" in " ".join(text.split()), command

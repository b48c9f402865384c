"""Fixtures of the security suite: a real arena home with a marker bot, a duplicate season, the web
app served by `arena web` on a loopback port, and the season played by `arena season run` in the
bwrap sandbox, each in its own process like in production."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from leak_world import BOTS, MATCHES, PREQUEUED_PAIRINGS, REPO, SEASON, World, free_port, stop
from sqlalchemy import select


@pytest.fixture
def world(tmp_path) -> Iterator[World]:
    """A fresh arena home: three bots submitted (built in the sandbox), a duplicate season started with
    PREQUEUED_PAIRINGS pairings queued, an admin token and each owner's web token."""
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.store import Store
    from arena.store.models import Season
    from arena.web.tokens import OwnerTokens
    from arena.workers.execute import bwrap_available
    from arena.workers.submit import submit_bundle

    if not bwrap_available():
        pytest.fail("the bwrap sandbox does not run here; docs/sandbox.md says what it needs")
    home = tmp_path / "home"
    home.mkdir()
    marker = f"LEAK-{secrets.token_hex(12)}"
    bundle = tmp_path / "marker"
    shutil.copytree(BOTS[0][2], bundle)
    (bundle / "marker.txt").write_text(marker + "\n")
    url = f"sqlite:///{home / 'arena.db'}"
    store = Store.open(url, home=home)
    for name, owner, path in BOTS:
        version = submit_bundle(store, bundle if name == "impostor" else path, name=name, owner=owner).version
        assert version.build_ok, version.build_log
    create_season(store, SEASON, rules=["max_deals=2"], duplicate=True)
    start_season(store, SEASON)
    with store.tx() as s:
        season = s.scalar(select(Season).where(Season.name == SEASON))
        assert len(schedule(s, season, PREQUEUED_PAIRINGS)) == 2 * PREQUEUED_PAIRINGS
    tokens = OwnerTokens(home=home)  # creates $ARENA_HOME/web-secret, which `arena web` then reads
    admin = secrets.token_urlsafe(24)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ARENA_DATABASE_URL", "ARENA_WEB_SECRET", "ARENA_ADMIN_TOKEN")
    }
    env.update(ARENA_HOME=str(home), ARENA_ADMIN_TOKEN=admin, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    w = World(
        home=home,
        url=url,
        env=env,
        marker=marker,
        admin_token=admin,
        owner_tokens={name: tokens.token(owner) for name, owner, _ in BOTS},
        store=store,
    )
    try:
        yield w
    finally:
        store.close()


@pytest.fixture
def web(world: World) -> Iterator[str]:
    """`arena web` on a free loopback port; yields its base URL once /healthz answers."""
    port = free_port()
    proc = world.arena("web", "--host", "127.0.0.1", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                pytest.fail(f"arena web exited with {proc.returncode}:\n{world.output('web')}")
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            pytest.fail(f"arena web did not answer on {base}:\n{world.output('web')}")
        yield base
    finally:
        stop(proc)


@pytest.fixture
def season_run(world: World) -> Iterator[Callable[[], subprocess.Popen]]:
    """`start()`: `arena season run` in the bwrap sandbox, two matches at once; stopped at teardown."""
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        proc = world.arena(
            "season", "run", SEASON, "--matches", str(MATCHES), "--concurrency", "2", "--quiet"
        )
        procs.append(proc)
        return proc

    try:
        yield start
    finally:
        for proc in procs:
            stop(proc)

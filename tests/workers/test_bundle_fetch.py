"""A Celery worker that shares no folder with the server: its ARENA_HOME is another, empty folder and
the server's stored bundles are out of its reach. It fetches each bundle from the database by content
hash into its own cache, checks the hash, and the season's matches are played and recorded."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import delete

from arena.store import MatchJob, Store
from arena.store.bundles import BundleUnavailable, content_hash, store_copy
from arena.store.models import BundleBlob
from arena.workers.celery_app import app
from arena.workers.execute import run_job

REPO = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/0"
BOTS = (("random", "alice"), ("greedy", "bob"))


@pytest.mark.slow
def test_worker_with_its_own_empty_home_fetches_bundles(tmp_path: Path, redis_client) -> None:
    client = redis_client(REDIS)
    queue = f"arena-test-{uuid.uuid4().hex[:10]}"
    server_home, worker_home = tmp_path / "server", tmp_path / "worker"
    server_home.mkdir()
    worker_home.mkdir()
    shared = {  # all a worker and the server have in common: the broker's and the store's addresses
        "ARENA_DATABASE_URL": f"sqlite:///{server_home / 'arena.db'}",
        "ARENA_BROKER_URL": REDIS,
        "ARENA_CELERY_QUEUE": queue,
    }
    env = {**os.environ, **shared, "ARENA_HOME": str(server_home)}
    worker_env = {**os.environ, **shared, "ARENA_HOME": str(worker_home)}
    worker_env.pop("ARENA_BUNDLE_CACHE", None)

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([ARENA, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)

    for name, owner in BOTS:
        path = str(REPO / "sample_bots" / "python" / name)
        submit = arena("bots", "submit", path, "--name", name, "--owner", owner, "--sandbox", "local")
        assert submit.returncode == 0, submit.stderr
    assert arena("season", "create", "far", "--duplicate", "--seed", "5").returncode == 0
    assert arena("season", "start", "far").returncode == 0
    # the stored copies (the jobs' paths) are on the server's disk, not the worker's: moved out of reach
    (server_home / "bundles").rename(server_home / "bundles-on-the-server-only")
    worker = subprocess.Popen(
        [ARENA, "worker", "--concurrency", "1", "--loglevel", "info"],
        env=worker_env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        run = arena(
            "season", "run", "far", "--matches", "2", "--executor", "celery", "--sandbox", "local", "--quiet"
        )
        assert run.returncode == 0, run.stderr
        assert "played 2 matches" in run.stdout
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        _, log = worker.communicate(timeout=60)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
    assert "BUNDLE_UNAVAILABLE" not in log
    digests = {content_hash(REPO / "sample_bots" / "python" / name) for name, _ in BOTS}
    cache = worker_home / "bundles"
    assert set(os.listdir(cache)) == digests  # both fetched, nothing half-written left
    assert all(content_hash(cache / d) == d for d in digests)
    store = Store.open(env["ARENA_DATABASE_URL"], home=server_home)
    try:
        assert store.season("far").recorded == 2
    finally:
        store.close()


def test_a_missing_blob_fails_the_job_not_a_seat(store, database_url, tmp_path: Path, monkeypatch) -> None:
    """run_job raises BUNDLE_UNAVAILABLE (the runner requeues the match) instead of returning a result
    with a verdict against the seat; the error survives the pool's pickle and Celery's JSON."""
    src = REPO / "sample_bots" / "python" / "random"
    digest = content_hash(src)
    store.add_version(
        "random", "alice", content_hash=digest, path=str(store_copy(src, store.bundles_dir, digest))
    )
    with store.tx() as s:
        s.execute(delete(BundleBlob))
    cache = tmp_path / "worker-cache"
    monkeypatch.setenv("ARENA_DATABASE_URL", database_url)
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(cache))
    job = MatchJob(
        match_id=1, bundles=("/elsewhere/a", "/elsewhere/b"), hashes=(digest, digest), rules=(), seed=1
    )
    with pytest.raises(BundleUnavailable) as err:
        run_job(job)
    assert str(err.value).startswith(f"BUNDLE_UNAVAILABLE: bundle {digest[:12]}: no stored copy")
    assert not cache.exists() or os.listdir(cache) == []
    assert str(pickle.loads(pickle.dumps(err.value))) == str(err.value)
    backend = app.backend
    rebuilt = backend.exception_to_python(backend.prepare_exception(err.value, "json"))
    assert str(rebuilt) == str(err.value)

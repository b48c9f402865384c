"""Fixtures shared by every suite. Suite-specific fixtures live in each folder's conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _environment_restored():
    """Each test leaves os.environ as it found it. A command run in-process (CliRunner) may set
    variables for itself and the workers it starts (`apply_warm` sets ARENA_WARM_START=1 where the
    warm start works); without this, every later test in the process ran warm."""
    import os

    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root, for sample bots and docs."""
    return REPO


@pytest.fixture
def redis_client():
    """`redis_client(url)`: a connected client. Redis runs on every development and CI machine
    (scripts/services.sh starts it), so an unreachable server fails the test instead of skipping it."""
    import redis

    def connect(url: str):
        client = redis.Redis.from_url(url, socket_connect_timeout=2)
        try:
            client.ping()
        except redis.exceptions.RedisError as exc:
            pytest.fail(f"Redis not reachable at {url} ({exc}); start it with scripts/services.sh")
        return client

    return connect


# ---- stores: every store test runs on SQLite and on PostgreSQL (its own schema, dropped after) ----
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _pg_schema_url() -> tuple[str, str]:
    import uuid

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(
            "postgresql://postgres@127.0.0.1:5432/test", autocommit=True, connect_timeout=3
        ) as c:
            c.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as exc:
        # PostgreSQL runs on every development and CI machine (scripts/services.sh starts it): a test
        # that quietly skipped here would hide a broken database layer.
        pytest.fail(f"PostgreSQL not reachable at 127.0.0.1:5432 ({exc}); start it with scripts/services.sh")
    return f"{PG_URL}?options=-csearch_path%3D{schema}", schema


def _pg_drop(schema: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True) as c:
        c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    """A fresh, empty database URL: a SQLite file, or a PostgreSQL schema dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    url, schema = _pg_schema_url()
    try:
        yield url
    finally:
        _pg_drop(schema)


@pytest.fixture
def store(database_url, tmp_path):
    """An open, migrated `arena.store.Store` on each database, with its home in tmp_path."""
    from arena.store import Store

    s = Store.open(database_url, home=tmp_path)
    try:
        yield s
    finally:
        s.close()


# ---- processes: what of a match is still running, found by an environment entry only it carries ----
@pytest.fixture(scope="session")
def processes_with_env():
    """`processes_with_env(*entries)`: pids of the live processes (zombies aside) whose environment
    holds one of `entries` ("NAME=value"), read from /proc/<pid>/environ: a bot keeps its
    environment through every exec of its launch chain, so a seat token finds all of a seat."""
    import os

    def find(*entries: str) -> list[int]:
        wanted = {e.encode() for e in entries}
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")  # a zombie's is empty
            except OSError:
                continue
            if wanted.intersection(env):
                found.append(int(pid))
        return found

    return find


# ---- Docker: a private engine for the Docker launcher and compose tests (scripts/docker_engine.py) ----
@pytest.fixture(scope="session")
def docker_engine(request):
    """A private dockerd (own socket, data root, exec root; no bridge, no iptables) with the project's
    images built from a local debootstrap base, stopped by pid at the end of the session. The first run
    on a machine debootstraps (minutes; cached under /tmp/elfern-docker-cache); later runs reuse it.
    Skips only where an engine cannot run at all: not root, or Debian's docker.io not installed."""
    import os
    import shutil

    if os.geteuid() != 0:
        pytest.skip("a private dockerd needs root")
    if not os.path.exists("/usr/sbin/dockerd") or shutil.which("debootstrap") is None:
        pytest.skip("Debian's docker.io and debootstrap are not installed: run scripts/setup.sh as root")
    module = _script("docker_engine")
    engine = module.Engine().start()
    try:
        if request.config.stash.get(_WANTS_LANGUAGE_IMAGES, False):
            _script("docker_toolchains").prefetch(engine)  # beside the plain images and the first tests
        engine.build_images()
        yield engine
    finally:
        engine.stop()


@pytest.fixture(scope="session")
def docker_language_images(docker_engine):
    """The private engine with every bot language's runtime image built too (scripts/docker_toolchains.py
    LANGUAGE_IMAGES), on a second base that holds the toolchains (the first run on a machine
    makes it: minutes; cached like the first), so that only the tests that need them pay for them."""
    _script("docker_toolchains").build_language_images(docker_engine)
    return docker_engine


def _script(name: str):
    """scripts/<name>.py as the module `name`, loaded once (docker_toolchains imports docker_engine)."""
    import importlib.util
    import sys

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_WANTS_LANGUAGE_IMAGES = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_WANTS_LANGUAGE_IMAGES] = any(
        "docker_language_images" in getattr(item, "fixturenames", ()) for item in session.items
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that reach the machine's Redis carry the `redis` marker, as PostgreSQL's carry `postgres`
    (the `database_url` fixture's parameter), so that `make test-fast` runs without either service."""
    for item in items:
        if "redis_client" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.redis)


@pytest.fixture
def chatty_record():
    """`chatty(data, seats, megabytes)`: the framed record `data` with about `megabytes` MB of Log lines
    that do not compress (1,000 random base64 characters each) added for each seat in `seats`, as a
    bot that logs all it can would leave: a record longer than one gRPC reply (tests of GetReplay's and
    GetMatch's pieces). The first line of seat N starts `chatty seat N`."""
    import base64
    import random

    from arena.proto.codec import decode_record, encode_record

    def chatty(data: bytes, seats: tuple[int, ...], megabytes: float) -> bytes:
        record = decode_record(data)
        rng = random.Random(31)
        for seat in seats:
            for n in range(int(megabytes * 1000)):
                text = base64.b64encode(rng.randbytes(750)).decode()
                record.logs.add(seat=seat, deal=1, trick=1, text=f"chatty seat {seat} " * (n == 0) + text)
        return encode_record(record)

    return chatty

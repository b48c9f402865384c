"""Separate hosts on one machine (issue #32 §3): a database host with its own PostgreSQL and Redis, a
server host (`arena serve --shared-state --web`, and the organiser's `arena season run --executor
celery`), worker hosts whose only link is a veth to the database host, and a spectator host linked to
the server host only. Each host is a network, mount and UTS namespace of its own; its data lives in a
tmpfs that no other host sees (scripts/hosts.py). So a worker shares nothing with the server but
the broker's and the store's addresses, and its spectators reach the live matches through the server.

The test loses a whole worker host (every process in it SIGKILLed, by pid) in the middle of a match,
lets a fresh worker host join with nothing but the two variables, and cuts a worker's link for 20 s
in the middle of another; then checks that every match ended recorded exactly once, that the ratings
follow from the replays, and that the spectator saw every trick of every match, live while it was
played. (The second server replica and its proxy: another helper's; their hosts go beside `server`.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hosts import ARENA, Host, Topology, arena_env, available, in_sandbox, start_db, start_worker

from arena.store.bundles import content_hash

pytestmark = [pytest.mark.slow, pytest.mark.hosts]

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
PROBE = str(Path(__file__).resolve().parent / "host_probe.py")
ADMIN = "hosts-admin-token-0123456789abcdef"
BOTS = (("random", "alice"), ("greedy", "bob"))
DEALS = 40  # exactly this many deals a match: a few seconds, a middle to kill in; under the feed's 50
PER_RUN = 4  # matches per season run
CUT = 20.0  # seconds a worker's link is down
COLD = {"ARENA_WARM_START": "0"}  # every match starts its bots: a bwrap process means a match in play


@pytest.fixture
def topology() -> Iterator[Topology]:
    why = available()
    if why:
        pytest.skip(f"separate hosts need root namespaces: {why}")
    topo = Topology()
    try:
        yield topo
    finally:
        topo.close()


def wait_until(what: str, check, timeout: float, also=None, log: Path | None = None) -> None:
    """Wait for `check()`; fail if `timeout` passes or the process `also` ends first (with `log`)."""
    deadline = time.monotonic() + timeout
    while not check():
        if also is not None and also.poll() is not None:
            said = log.read_text()[-3000:] if log else (also.stderr.read()[-3000:] if also.stderr else "")
            raise AssertionError(f"{what}: {also.args[-1]!r} ended first (exit {also.returncode}): {said}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.05)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def shown_at_end(events: list[list]) -> list[tuple]:
    """What a client shows at the end of one match's stream: a queued or running status drops what was
    shown, since a new attempt restarts from deal 1 (arena.service.ops_watch)."""
    shown: list[tuple] = []
    for ev in events:
        if ev[0] == "status":
            if ev[1] in ("queued", "running"):
                shown = []
        else:
            shown.append(tuple(x if not isinstance(x, list) else tuple(x) for x in ev))
    return shown


def start_server(server: Host, env: dict[str, str], state_url: str, log: Path) -> subprocess.Popen:
    """`arena serve` on the server host as a replica behind a proxy would run: gRPC and the web on
    every address, the admin token from a file, the counters in the shared state's Redis, and no
    players of its own (the Celery workers play every match)."""
    token = server.home / "admin-token"
    assert server.run(["sh", "-c", f'umask 077 && echo "{ADMIN}" > "{token}"']).returncode == 0
    with log.open("w") as err:
        return server.popen(
            [ARENA, "serve", "--unix", "", "--tcp", "0.0.0.0:50051", "--web", "0.0.0.0:8000", "--workers", "0",
             "--admin-token-file", str(token), "--shared-state", state_url],
            cwd=server.home, env=env, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip


def start_spectator(spectator: Host, address: str, serve: subprocess.Popen, tmp_path: Path) -> Path:
    """Once the server answers from the spectator host, a spectator there watches every match of the
    season (host_probe.py watch); the file its lines go to."""
    ready = f"import grpc; grpc.channel_ready_future(grpc.insecure_channel('{address}')).result(timeout=2)"
    wait_until(
        "the server answers the spectator host",
        lambda: spectator.run([PYTHON, "-c", ready], timeout=30).returncode == 0,
        120,
        also=serve,
        log=tmp_path / "serve.log",
    )
    watch_file = tmp_path / "watch.jsonl"
    with watch_file.open("w") as out, (tmp_path / "watch.log").open("w") as err:
        spectator.popen(
            [PYTHON, PROBE, "watch", address, "hosts"],
            env={k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}, stdout=out, stderr=err,
        )  # fmt: skip
    return watch_file


def test_a_lost_host_and_a_cut_link_lose_no_match_and_hide_no_trick(
    topology: Topology, tmp_path: Path
) -> None:
    topo = topology
    db = topo.add_host("db")
    server = topo.add_host("server")
    server_link = topo.link(db, server)
    start_db(db)
    # A second server replica and the proxy (issue #32 §2) go beside `server`: linked to db, the
    # proxy to the spectator.
    spectator = topo.add_host("spectator")
    view = topo.link(server, spectator)
    ping = {"ARENA_WORKER_PING": "2"}  # the runner pings its workers every 2 s (10 by default)
    env = arena_env(server, server_link.a_addr, **ping)

    def organiser(*args: str) -> subprocess.CompletedProcess:
        out = server.run([ARENA, *args], env=env, timeout=300)
        assert out.returncode == 0, (args, out.stdout[-2000:], out.stderr[-2000:])
        return out

    for name, owner in BOTS:
        organiser("bots", "submit", str(REPO / "sample_bots/python" / name), "--name", name, "--owner", owner)
    organiser("season", "create", "hosts", "--format", f"deals={DEALS}")
    organiser("season", "start", "hosts")
    serve = start_server(server, env, f"redis://{server_link.a_addr}:6379/1", tmp_path / "serve.log")
    watch_file = start_spectator(spectator, f"{view.a_addr}:50051", serve, tmp_path)
    w1, _ = start_worker(topo, db, "w1", tmp_path / "w1.log", **COLD)
    w2, w2_link = start_worker(topo, db, "w2", tmp_path / "w2.log", **COLD)

    def season_run(total: int) -> subprocess.Popen:
        """The organiser plays the season on until it has `total` matches recorded."""
        return server.popen(
            [ARENA, "season", "run", "hosts", "--matches", str(total), "--executor", "celery",
             "--concurrency", "2", "--quiet"],
            cwd=server.home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def store_view() -> dict:
        out = server.run([PYTHON, PROBE, "store", "hosts"], env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    # 1. A whole worker host is lost in the middle of a match.
    run = season_run(PER_RUN)
    wait_until("worker host w1 plays a match", lambda: in_sandbox(w1), 180, also=run)
    killed = w1.kill_all()
    assert killed and not w1.processes()
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0 and f"played {PER_RUN} matches" in out, err[-3000:]
    first = store_view()["matches"]

    # A fresh machine joins with the two variables; then a worker's link is cut for 20 s mid-match.
    w3, _ = start_worker(topo, db, "w3", tmp_path / "w3.log", **COLD)
    run = season_run(2 * PER_RUN)
    wait_until("worker host w2 plays a match", lambda: in_sandbox(w2), 180, also=run)
    w2_link.set_up(False)
    time.sleep(CUT)
    w2_link.set_up(True)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0 and f"played {PER_RUN} matches" in out, err[-3000:]
    store = store_view()
    matches = store["matches"]

    # Every match ended recorded exactly once, and the ratings follow from the replays.
    assert len(matches) == 2 * PER_RUN and all(m["status"] == "done" for m in matches), matches
    assert sorted(m["record_seq"] for m in matches) == list(range(2 * PER_RUN))
    assert all(m["replays"] == 1 and m["events"] for m in matches)
    assert store["verify"] == []
    first_ids = {m["id"] for m in first}
    retried = [m["id"] for m in matches if m["attempts"] > 1]
    assert any(i in first_ids for i in retried), f"no match of the lost host was played again: {matches}"
    assert any(i not in first_ids for i in retried), f"no match of the cut worker was played again: {matches}"

    # Every trick reached the spectator through the server host; live while the match was played.
    def final(mid: int) -> bool:
        return any(
            x.get("match") == mid and x.get("event", [None])[:3] == ["status", "done", True]
            for x in read_lines(watch_file)
        )

    wait_until("the spectator sees every match end", lambda: all(final(m["id"]) for m in matches), 120)
    lines = read_lines(watch_file)
    polls = [x for x in lines if "poll" in x]
    for m in matches:
        events = [x for x in lines if x.get("match") == m["id"] and "event" in x]
        expected = [tuple(x if not isinstance(x, list) else tuple(x) for x in e) for e in m["events"]]
        assert shown_at_end([x["event"] for x in events]) == expected, m["id"]
        if m["attempts"] == 1:
            live = [
                x for x in events
                if x["event"][0] == "trick" and any(p["poll"] > x["n"] and m["id"] in p["running"] for p in polls)
            ]  # fmt: skip
            assert live, f"match {m['id']}: no trick reached the spectator while it was played"
            print(
                f"match {m['id']}: {len(live)} of {sum(e[0] == 'trick' for e in m['events'])} tricks seen live"
            )
    assert not [x for x in lines if "error" in x], [x for x in lines if "error" in x]

    # No path in common: the workers never saw the server's home, and fetched the bundles into their own.
    assert w3.run(["test", "-e", str(server.home)]).returncode != 0
    cached = w3.run(["ls", str(w3.home / "bundles")]).stdout.split()
    assert set(cached) == {content_hash(REPO / "sample_bots/python" / n) for n, _ in BOTS}

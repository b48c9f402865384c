"""Separate hosts on one machine (issue #32 §3): a database host with its own PostgreSQL and Redis, two
server replica hosts r1 and r2 (`arena serve --shared-state --web`; the organiser's commands and
`arena season run --executor celery` on r1), a proxy host running HAProxy with deploy/haproxy/arena.cfg
in front of both, worker hosts whose only link is a veth to the database host, and a client host
(a spectator and an uploader) linked to the proxy host only. Each host is a network, mount and UTS
namespace of its own; its data lives in a tmpfs that no other host sees (scripts/hosts.py). So a
worker shares nothing with the servers but the broker's and the store's addresses, and callers
reach the replicas only through the proxy.

The test loses a whole worker host (every process in it SIGKILLed, by pid) in the middle of a match,
lets a fresh worker host join with nothing but the two variables, and in the second run cuts a
worker's link for 20 s mid-match while losing replica r2's whole host in the middle of an upload
(with the watcher's streams in it). It then checks that no row or bundle of the upload is left on
any host and that the same upload then succeeds once through the proxy; that every match ended
recorded exactly once and the ratings follow from the replays; and that the spectator saw every
trick of every match, live while it was played, its streams cut with r2 watched again through the
proxy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hosts import ARENA, Host, Link, Topology, arena_env, available, in_sandbox, start_db, start_worker
from replicas_support import CONFIG, Cluster

from arena.store.bundles import content_hash
from tests.service.service_support import bundle_archive

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
PROXY_PORT = 8443  # the proxy's one port for gRPC and the web, on every address of the proxy host


@pytest.fixture
def topology() -> Iterator[Topology]:
    why = available()
    if why:
        pytest.skip(f"separate hosts need root namespaces: {why}")
    if shutil.which("haproxy") is None:
        pytest.fail("the separate-hosts test needs haproxy: run scripts/setup.sh (DEB_PACKAGES)")
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
    """`arena serve` on a replica host as deploy/haproxy/arena.cfg's header says: gRPC and the web on
    every address, the admin token from a file, the counters in the shared state's Redis (and
    FORWARDED_ALLOW_IPS, the proxy's address, in `env`), and no players of its own (the Celery
    workers play every match)."""
    token = server.home / "admin-token"
    assert server.run(["sh", "-c", f'umask 077 && echo "{ADMIN}" > "{token}"']).returncode == 0
    with log.open("w") as err:
        return server.popen(
            [ARENA, "serve", "--unix", "", "--tcp", "0.0.0.0:50051", "--web", "0.0.0.0:8000", "--workers", "0",
             "--admin-token-file", str(token), "--shared-state", state_url],
            cwd=server.home, env=env, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip


def start_proxy(proxy: Host, links: list[Link], tmp_path: Path) -> tuple[subprocess.Popen, Cluster]:
    """HAProxy on the proxy host running deploy/haproxy/arena.cfg as it is, in front of the replicas
    at the far ends of `links` (r1, r2), with health checks every 500 ms; once it has both up: the
    process, and its runtime API (replicas_support.Cluster's; the socket is in `tmp_path`, outside
    the hosts' private folder, so this process reaches it)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ARENA_")},
        "ARENA_PROXY_BIND": f"0.0.0.0:{PROXY_PORT}",
        "ARENA_PROXY_ADMIN": str(tmp_path / "haproxy.sock"),
        "ARENA_PROXY_CHECK": "500ms",
    }
    for n, link in enumerate(links, 1):
        env[f"ARENA_REPLICA{n}_GRPC"] = f"{link.a_addr}:50051"
        env[f"ARENA_REPLICA{n}_WEB"] = f"{link.a_addr}:8000"
    log = tmp_path / "haproxy.log"
    with log.open("w") as err:
        proc = proxy.popen(
            ["haproxy", "-db", "-f", str(CONFIG)], env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    admin = Cluster("", tmp_path, [], PROXY_PORT, tmp_path / "haproxy.sock", tmp_path / "unused")

    def both_up() -> bool:
        try:
            return admin.up("r1") and admin.up("r2")
        except OSError:  # its runtime API's socket is not there yet
            return False

    wait_until("both replicas up behind the proxy", both_up, 180, also=proc, log=log)
    return proc, admin


def start_spectator(spectator: Host, address: str, tmp_path: Path) -> Path:
    """A spectator on the client host watches every match of the season through the proxy
    (host_probe.py watch); the file its lines go to."""
    watch_file = tmp_path / "watch.jsonl"
    with watch_file.open("w") as out, (tmp_path / "watch.log").open("w") as err:
        spectator.popen(
            [PYTHON, PROBE, "watch", address, "hosts"],
            env={k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}, stdout=out, stderr=err,
        )  # fmt: skip
    return watch_file


def padded_bundle(tmp_path: Path) -> tuple[Path, str]:
    """The random sample bot plus 256 KiB of incompressible bytes (an upload of several chunks), as
    a tar.gz in `tmp_path` (which every host sees); the archive and the content hash it is stored by."""
    folder = tmp_path / "halfbot"
    shutil.copytree(REPO / "sample_bots/python/random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "padding.bin").write_bytes(os.urandom(256 * 1024))
    archive = tmp_path / "halfbot.tar.gz"
    archive.write_bytes(bundle_archive(folder, "halfbot"))
    return archive, content_hash(folder)


def test_lost_hosts_and_a_cut_link_lose_no_match_half_store_no_upload_and_hide_no_trick(
    topology: Topology, tmp_path: Path
) -> None:
    topo = topology
    db = topo.add_host("db")
    r1, r2, proxy, client = (topo.add_host(name) for name in ("r1", "r2", "proxy", "client"))
    to_db = {r.name: topo.link(db, r) for r in (r1, r2)}
    to_proxy = [topo.link(r, proxy) for r in (r1, r2)]  # a_addr: the replica's, b_addr: the proxy's
    front = topo.link(proxy, client)  # the client host reaches the proxy host only
    start_db(db)
    archive, digest = padded_bundle(tmp_path)
    spectator_env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    ping = {"ARENA_WORKER_PING": "2"}  # the runner pings its workers every 2 s (10 by default)
    envs = {
        r.name: arena_env(r, to_db[r.name].a_addr, FORWARDED_ALLOW_IPS=link.b_addr, **ping)
        for r, link in zip((r1, r2), to_proxy, strict=True)
    }
    env = envs["r1"]  # the organiser's commands run on r1, the season runner on r2 (then on r1)

    def organiser(*args: str) -> subprocess.CompletedProcess:
        out = r1.run([ARENA, *args], env=env, timeout=300)
        assert out.returncode == 0, (args, out.stdout[-2000:], out.stderr[-2000:])
        return out

    for name, owner in BOTS:
        organiser("bots", "submit", str(REPO / "sample_bots/python" / name), "--name", name, "--owner", owner)
    organiser("season", "create", "hosts", "--format", f"deals={DEALS}")
    organiser("season", "start", "hosts")
    token = organiser("owners", "add", "carol").stdout.split()[-1]
    for r in (r1, r2):
        start_server(r, envs[r.name], f"redis://{to_db[r.name].a_addr}:6379/1", tmp_path / f"{r.name}.log")
    haproxy, admin = start_proxy(proxy, to_proxy, tmp_path)
    address = f"{front.a_addr}:{PROXY_PORT}"
    watch_file = start_spectator(client, address, tmp_path)
    w1, _ = start_worker(topo, db, "w1", tmp_path / "w1.log", **COLD)
    w2, w2_link = start_worker(topo, db, "w2", tmp_path / "w2.log", **COLD)

    def season_run(total: int, host: Host) -> subprocess.Popen:
        """The organiser plays the season on `host` until it has `total` matches recorded."""
        return host.popen(
            [ARENA, "season", "run", "hosts", "--matches", str(total), "--executor", "celery",
             "--concurrency", "2", "--quiet"],
            cwd=host.home, env=envs[host.name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def store_view() -> dict:
        out = r1.run([PYTHON, PROBE, "store", "hosts"], env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    def uploads() -> dict:
        out = r1.run([PYTHON, PROBE, "uploads", "halfbot"], env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    def stored_on(host: Host, digest: str) -> bool:
        """Whether `host`'s disk holds a bundle named `digest` (stored or being stored)."""
        return bool(host.run(["sh", "-c", f'ls -a "{host.home}/bundles" 2>/dev/null']).stdout.count(digest))

    def upload(gate: Path | None = None) -> subprocess.Popen:
        """Owner carol uploads the padded bundle from the client host, through the proxy."""
        return client.popen(
            [PYTHON, PROBE, "upload", address, token, str(archive), "halfbot", *([str(gate)] if gate else [])],
            env=spectator_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def receiving(replica: Host) -> bool:
        """`replica` holds at least 64 KiB of an upload in its temporary folder."""
        sizes = replica.run(
            ["sh", "-c", f'stat -c %s "{replica.home}"/tmp/arena-serve-*/arena-upload-*/upload.tar.gz']
        )
        return any(int(x) >= 65536 for x in sizes.stdout.split())

    # 1. A whole worker host is lost in the middle of a match.
    run = season_run(PER_RUN, r2)
    wait_until("worker host w1 plays a match", lambda: in_sandbox(w1), 180, also=run)
    killed = w1.kill_all()
    assert killed and not w1.processes()
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0 and f"played {PER_RUN} matches" in out, err[-3000:]
    first = store_view()["matches"]

    # A fresh machine joins with the two variables. The proxy drains r1 (its runtime API), so that
    # the watcher's streams of the second run's matches and the upload below all go to r2.
    w3, _ = start_worker(topo, db, "w3", tmp_path / "w3.log", **COLD)
    blobs = uploads()["blobs"]
    assert admin.command("set server grpc/r1 state drain").strip() == ""
    run = season_run(2 * PER_RUN, r2)
    first_ids = {m["id"] for m in first}
    wait_until("worker host w2 plays a match", lambda: in_sandbox(w2), 180, also=run)
    wait_until(
        "the watcher follows a match of the second run (on r2)",
        lambda: any(x.get("match", 0) not in first_ids for x in read_lines(watch_file) if "event" in x),
        60,
    )
    # 2. w2's link is cut for 20 s mid-match; meanwhile replica r2's whole host is lost mid-upload,
    # with the watcher's streams and the season runner in it. What the runner held stays leased to
    # it (a runner on another host cannot see that its pid is dead) until the lease expires.
    w2_link.set_up(False)
    cut = time.monotonic()
    gate = tmp_path / "gate"
    half = upload(gate)
    wait_until("the upload arriving at r2", lambda: receiving(r2), 60, also=half)
    assert not stored_on(r2, digest)  # what r2's disk holds when it is lost
    assert admin.command("set server grpc/r1 state ready").strip() == ""
    assert r2.kill_all() and not r2.processes()
    gate.touch()
    assert run.wait(30) == -9  # the runner died with its host, with the matches it held leased to it
    running = [m for m in store_view()["matches"] if m["status"] == "running"]
    assert running and all(m["lease_owner"].startswith("r2:") for m in running), running
    leased = {m["id"]: m["lease_expires"] for m in running}
    said, err = half.communicate(timeout=120)
    assert json.loads(said)["code"] != "OK", (said, err[-2000:])
    time.sleep(max(0.0, CUT - (time.monotonic() - cut)))
    w2_link.set_up(True)
    print(f"w2's link was down {time.monotonic() - cut:.1f} s")
    # No upload half-stored: no bot, version or blob row, and no bundle on any disk left.
    assert uploads() == {"bots": 0, "versions": 0, "blobs": blobs}
    assert not [h.name for h in (r1, w2, w3) if stored_on(h, digest)]
    # The same upload then succeeds once through the proxy, once it has taken r2 out.
    wait_until("the proxy marks r2 down", lambda: admin.down("r2"), 30, also=haproxy)
    again = upload()
    said, err = again.communicate(timeout=300)
    assert json.loads(said) == {"code": "OK", "number": 1, "new": True, "build_ok": True}, err[-2000:]
    assert uploads() == {"bots": 1, "versions": 1, "blobs": blobs + 1}
    assert stored_on(r1, digest)  # stored under the very name the checks above looked for
    # The organiser starts the runner again on r1 once the dead runner's leases have expired (started
    # earlier, it would end at once, exit 0, with only the dead runner's matches left: docs/deploy.md).
    wait_until("the dead runner's leases expire", lambda: time.time() > max(leased.values()) + 1, 90)
    run = season_run(2 * PER_RUN, r1)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0 and "played" in out, err[-3000:]
    store = store_view()
    matches = store["matches"]

    # Every match ended recorded exactly once, and the ratings follow from the replays.
    assert len(matches) == 2 * PER_RUN and all(m["status"] == "done" for m in matches), matches
    assert sorted(m["record_seq"] for m in matches) == list(range(2 * PER_RUN))
    assert all(m["replays"] == 1 and m["events"] for m in matches)
    assert store["verify"] == []
    retried = [m["id"] for m in matches if m["attempts"] > 1]
    assert any(i in first_ids for i in retried), f"no match of the lost host was played again: {matches}"
    assert any(i not in first_ids for i in retried), f"no match of the cut worker was played again: {matches}"
    # The matches the dead runner held were played again under the restarted runner, recorded once.
    assert all(m["attempts"] > 1 for m in matches if m["id"] in leased), (leased, matches)

    # Every trick reached the spectator through the proxy; live while the match was played. The
    # streams cut with r2 were opened again through the proxy (on r1) and showed the match whole.
    def final(mid: int) -> bool:
        return any(
            x.get("match") == mid and x.get("event", [None])[:3] == ["status", "done", True]
            for x in read_lines(watch_file)
        )

    wait_until("the spectator sees every match end", lambda: all(final(m["id"]) for m in matches), 120)
    lines = read_lines(watch_file)
    polls = [x for x in lines if "poll" in x]
    seen_live: dict[int, int] = {}  # match played at one go -> its tricks seen while it was running
    for m in matches:
        events = [x for x in lines if x.get("match") == m["id"] and "event" in x]
        expected = [tuple(x if not isinstance(x, list) else tuple(x) for x in e) for e in m["events"]]
        assert shown_at_end([x["event"] for x in events]) == expected, m["id"]
        if m["attempts"] == 1:
            live = [
                x for x in events
                if x["event"][0] == "trick" and any(p["poll"] > x["n"] and m["id"] in p["running"] for p in polls)
            ]  # fmt: skip
            seen_live[m["id"]] = len(live)
            print(
                f"match {m['id']}: {len(live)} of {sum(e[0] == 'trick' for e in m['events'])} tricks seen live"
            )
    # Tricks arrive live: most matches played at one go show some while still listed as running. Not
    # every one: on a loaded machine a match can end between two of the spectator's polls (once seen:
    # the last match, 0 tricks "live" by the polls, every trick shown at its end all the same).
    assert sum(n > 0 for n in seen_live.values()) * 2 >= len(seen_live) > 0, seen_live
    errors = [x for x in lines if "error" in x]
    cut_off = {x["match"] for x in errors if "match" in x}
    assert cut_off and not cut_off & first_ids and len(cut_off) == len(errors), errors  # r2's streams only
    print(f"streams cut with r2 and watched again through the proxy: {errors}")
    assert not [x for x in lines if "poll_error" in x]  # every ListMatches answered: the proxy retries reads

    # No path in common: the workers never saw a server's home, and fetched the bundles into their own
    # (carol's too, if a match it joined the season for was played on w3).
    assert w3.run(["test", "-e", str(r1.home)]).returncode != 0
    cached = set(w3.run(["ls", str(w3.home / "bundles")]).stdout.split())
    assert cached - {digest} == {content_hash(REPO / "sample_bots/python" / n) for n, _ in BOTS}

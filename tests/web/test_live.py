"""Live spectating over real HTTP: the app served by uvicorn on a loopback socket, real matches played
in the bwrap sandbox by `run_job` with a live file (tests/service/live_play.py), streams read with
httpx. Orders and contents are asserted, never delays: each trick arrives only once the live file
holds the next one; a first twin streams nothing but its status until its twin is over; streams are
capped per address, charged to the rate limit, hold no database connection while idle, and end.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from live_play import (
    add_bots,
    duplicate_pair,
    live_counts,
    public_events,
    public_tables,
    queue_challenge,
    start_match,
    status_of,
)

from arena.access.ratelimit import Budget, RateLimiter
from arena.proto.codec import decode_record
from arena.service.core import Service
from arena.store import Store
from arena.store.models import Match
from arena.store.queue import claim
from arena.workers.live import live_path

TRICK_KEYS = {"kind", "deal", "trick", "leader", "cards", "winner", "tricks_won"}


@dataclass
class Web:
    base: str
    app: Any
    store: Store


@pytest.fixture
def web(database_url, tmp_path) -> Iterator[Web]:
    import uvicorn

    from arena.web.app import create_app

    store = Store.open(database_url, home=tmp_path)
    add_bots(store, tmp_path)
    app = create_app(database_url, tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(600):
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    try:
        yield Web(f"http://127.0.0.1:{port}", app, store)
    finally:
        srv.should_exit = True
        thread.join(10)
        store.close()


def frames(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Server-sent events as {event, id, data}; comments and the retry line are skipped."""
    frame: dict[str, Any] = {}
    for line in lines:
        if line == "":
            if "event" in frame:
                yield frame
            frame = {}
        elif line.startswith("event: "):
            frame["event"] = line[7:]
        elif line.startswith("id: "):
            frame["id"] = line[4:]
        elif line.startswith("data: "):
            frame["data"] = json.loads(line[6:])


class Reader:
    """An event stream read in a thread; at each frame it notes what `look()` says then."""

    def __init__(self, url: str, look: Any, headers: dict[str, str] | None = None) -> None:
        self.got: list[tuple[dict[str, Any], Any]] = []
        self.status: int | None = None
        self.opened = threading.Event()

        def read() -> None:
            with httpx.stream("GET", url, headers=headers, timeout=300) as r:
                self.status = r.status_code
                self.opened.set()
                for f in frames(r.iter_lines()):
                    self.got.append((f, look()))

        self.thread = threading.Thread(target=read, daemon=True)
        self.thread.start()
        assert self.opened.wait(60)

    def done(self) -> list[tuple[dict[str, Any], Any]]:
        self.thread.join(200)
        assert not self.thread.is_alive(), "the stream did not end"
        return self.got


def as_tuple(f: dict[str, Any]) -> tuple:
    d = f["data"]
    if f["event"] == "deal":
        return ("deal", d["deal"], d["dealer"])
    if f["event"] == "trick":
        return ("trick", d["deal"], d["trick"], d["leader"], tuple(d["cards"]), d["winner"])
    return ("deal_end", d["deal"], d["winner"], tuple(d["lines"]))


CARDS = ("deal", "trick", "deal_end")


def test_the_event_stream_is_one_trick_behind_and_ends_in_the_viewer(web: Web) -> None:
    mid = queue_challenge(web.store)
    path = live_path(web.store.home, mid)
    page = httpx.get(f"{web.base}/live/{mid}")  # queued: names and commitment, no card
    assert page.status_code == 200 and "slow" in page.text and "greedy" in page.text
    with web.store.read() as s:
        match = s.get(Match, mid)
        commitment, seed, salt = match.commitment, match.seed, match.salt
    assert commitment in page.text and str(seed) not in page.text and salt not in page.text
    assert 'class="live-trick"' not in page.text and "commitment verified" not in page.text

    reader = Reader(
        f"{web.base}/api/matches/{mid}/events", lambda: (live_counts(path), status_of(web.store, mid))
    )
    played = start_match(web.store, mid)
    home = ""
    for _ in range(400):  # the home page lists it while it plays
        home = httpx.get(f"{web.base}/").text
        if f'href="/live/{mid}"' in home or status_of(web.store, mid) == "done":
            break
        time.sleep(0.02)
    assert f'href="/live/{mid}"' in home and "Now playing" in home
    played.join()
    got = reader.done()
    assert reader.status == 200

    kinds = [f["event"] for f, _ in got]
    assert kinds[0] == "status" and kinds[-1] == "end" and kinds[-2] == "status"
    assert got[-2][0]["data"]["final"] and got[-2][0]["data"]["verified"] is True
    assert got[-1][0]["data"] == {"viewer": f"/matches/{mid}", "verified": True, "final": True}
    seen, during = 0, 0
    for f, ((in_file, over), status) in got:
        if f["event"] == "status" and not f["data"]["match"]["revealed"]:
            assert "seed" not in f["data"]["match"] and not f["data"]["match"].get("salt")
        if f["event"] == "trick":
            seen += 1
            assert set(f["data"]) <= TRICK_KEYS | {"board"} and len(f["data"]["cards"]) == 2
            assert in_file >= seen + 1 or over or status == "done", (seen, in_file)
            during += not over
        if f["event"] in CARDS:
            assert f["id"]
    assert during > 0
    record = decode_record(web.store.replay(mid))
    assert [as_tuple(f) for f, _ in got if f["event"] in CARDS] == public_events(record)

    # each card event carries the table a spectator may see: the engine's honours, hand sizes, stock
    # and lines, and no card of a hand
    boards = [(f["event"], f["data"]["board"]) for f, _ in got if f["event"] in ("trick", "deal_end")]
    tables = public_tables(record)
    assert len(boards) == len(tables)
    for (kind, board), table in zip(boards, tables, strict=True):
        assert board["hands"] == [None, None] and board["drew"] == [] and board["trump"] is None
        assert {k: board[k] for k in table} == table, (kind, board, table)
    assert "Honours" in boards[0][1]["note"] and "Deal over" in boards[-1][1]["note"]

    # once over, the live page shows the seed and salt, checked against the commitment, and the way on
    page = httpx.get(f"{web.base}/live/{mid}")
    assert "commitment verified" in page.text and str(seed) in page.text and salt in page.text
    assert f'url=/matches/{mid}"' in page.text and 'data-final="true"' in page.text
    assert page.text.count('class="live-trick"') == sum(1 for f, _ in got if f["event"] == "trick")
    assert f'href="/live/{mid}"' not in httpx.get(f"{web.base}/").text  # no longer playing

    # a reconnecting client resumes after the last event it got
    ids = [f["id"] for f, _ in got if f["event"] in CARDS]
    with httpx.stream(
        "GET", f"{web.base}/api/matches/{mid}/events", headers={"Last-Event-ID": ids[9]}, timeout=60
    ) as r:
        again = list(frames(r.iter_lines()))
    assert [f["id"] for f in again if f["event"] in CARDS] == ids[10:]

    # a tampered commitment is not "verified"
    with web.store.tx() as s:
        s.execute(update(Match).where(Match.id == mid).values(commitment="0" * 64))
    page = httpx.get(f"{web.base}/live/{mid}")
    assert "commitment does NOT match" in page.text and "commitment verified" not in page.text


def test_a_first_twin_streams_only_its_status_until_both_are_over(web: Web) -> None:
    first, second = duplicate_pair(web.store)
    statuses = lambda: (status_of(web.store, first), status_of(web.store, second))  # noqa: E731
    reader = Reader(f"{web.base}/api/matches/{first}/events", statuses)
    start_match(web.store, first).join()
    before = list(reader.got)
    page = httpx.get(f"{web.base}/live/{first}")
    assert page.status_code == 200 and 'class="live-trick"' not in page.text and "twin" in page.text
    start_match(web.store, second).join()
    got = reader.done()
    assert before and all(f["event"] == "status" for f, _ in before)
    assert not any(f["data"]["match"]["revealed"] for f, _ in before)
    for f, seen in got:
        if f["event"] in CARDS:
            assert seen == ("done", "done"), seen
    record = decode_record(web.store.replay(first))
    assert [as_tuple(f) for f, _ in got if f["event"] in CARDS] == public_events(record)
    assert got[-1][0]["event"] == "end" and got[-1][0]["data"]["verified"] is True


def test_streams_are_capped_rate_limited_light_and_end_with_the_client(web: Web) -> None:
    mid = queue_challenge(web.store)  # queued: its streams idle
    url = f"{web.base}/api/matches/{mid}/events"
    streams = web.app.state.live_streams
    assert httpx.get(f"{web.base}/api/matches/987654/events").status_code == 404
    assert httpx.get(f"{web.base}/live/987654").status_code == 404

    clients = [httpx.Client(timeout=30) for _ in range(8)]
    responses = []
    for c in clients:
        r = c.send(c.build_request("GET", url), stream=True)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        responses.append(r)
    assert streams.open("127.0.0.1") == 8
    refused = httpx.get(url)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "too many live streams" in refused.json()["detail"]

    engine = web.app.state.data.store.engine
    held = []
    for _ in range(40):  # eight idle streams poll now and then; none keeps a connection
        held.append(engine.pool.checkedout())
        time.sleep(0.02)
    assert max(held) < 8 and min(held) == 0, held

    for r, c in zip(responses, clients, strict=True):  # the clients go away
        r.close()
        c.close()
    for _ in range(600):
        if streams.open() == 0:
            break
        time.sleep(0.05)
    assert streams.open() == 0  # every stream ended and was counted out
    with httpx.stream("GET", url, timeout=30) as r:
        assert r.status_code == 200
        next(frames(r.iter_lines()))

    # opening a stream is charged to the address's anonymous budget: over it, 429 with Retry-After
    web.app.state.service = Service(
        store=web.app.state.data.store, limiter=RateLimiter({"anonymous": Budget(2, 3600.0)})
    )
    assert [httpx.get(f"{web.base}/api/matches/987654/events").status_code for _ in range(3)] == [
        404,
        404,
        429,
    ]


def test_the_live_page_without_a_match_worker(web: Web) -> None:
    """A running match shows the released tricks in the page itself (no JavaScript needed)."""
    from arena.workers.live import LiveWriter

    mid = queue_challenge(web.store)
    with web.store.tx() as s:
        assert claim(s, "fake-worker", ids=[mid]) is not None
    w = LiveWriter(live_path(web.store.home, mid), 1)
    w({"event": "deal_start", "deal": 1, "dealer": 0})
    for i, cards in enumerate((["AS", "7S"], ["KS", "8S"], ["QS", "9S"]), 1):
        w({"event": "trick", "deal": 1, "trick": i, "leader": 0, "cards": cards, "winner": 0})
    page = httpx.get(f"{web.base}/live/{mid}").text
    assert page.count('class="live-trick"') == 2 and 'data-card="QS"' not in page  # the last trick waits
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page
    assert 'data-last="1.1.2"' in page
    home = httpx.get(f"{web.base}/").text
    assert f'href="/live/{mid}"' in home and "slow@1 v greedy@1" in home

    # deleted while watched (its season frozen): the stream says so and ends
    reader = Reader(f"{web.base}/api/matches/{mid}/events", lambda: None)
    for _ in range(600):
        if len(reader.got) >= 4:
            break
        time.sleep(0.05)
    assert [f["event"] for f, _ in reader.got] == ["status", "deal", "trick", "trick"]
    with web.store.tx() as s:
        s.delete(s.get(Match, mid))
    got = reader.done()
    assert got[-1][0]["event"] == "refused" and "removed" in got[-1][0]["data"]["detail"]
    assert got[-1][0]["data"]["status"] == 404

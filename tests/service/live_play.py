"""Real matches played live for the watch tests: sample bots (and a slow one) in the bwrap sandbox,
claimed in the store, played by `arena.workers.execute.run_job` with a live file, and recorded the
way the workers record them. Shared by tests/service/test_watch.py and the web's live tests."""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import select

from arena.ladder.record import record_result
from arena.ladder.runner import job_for
from arena.store import MatchResult, Store
from arena.store.models import Match
from arena.store.queue import claim
from arena.workers.execute import bwrap_available, run_job
from arena.workers.live import live_path
from arena.workers.submit import submit_bundle

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
RULES = ["max_deals=2"]
TIME = {"move": 2.0, "bank": 30.0, "startup": 20.0}
RUNNER = "live-test-runner"

SLOW_BOT = '''"""Plays a random legal card after thinking {ms} ms: slow enough to be watched live."""
import random
import time

from arena.sdk import Bot, run


class Slow(Bot):
    name = "slow"
    version = "1"

    def play(self, view):
        if not hasattr(self, "rng"):
            self.rng = random.Random(f"{{self.match_id}}/{{self.seat}}")
        time.sleep({ms} / 1000)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(Slow())
'''


def launcher() -> str:
    return "bwrap" if bwrap_available() else "local"


def slow_bundle(where: Path, ms: int = 80) -> Path:
    """A copy of the random sample bot that sleeps `ms` per move."""
    folder = where / f"slow{ms}"
    if not folder.exists():
        shutil.copytree(SAMPLES / "random", folder)
        (folder / "bot.py").write_text(SLOW_BOT.format(ms=ms))
        (folder / "bot.toml").write_text(
            'name = "slow"\nlanguage = "python"\nversion = "1"\nrun = ["python3", "bot.py"]\n'
        )
    return folder


def add_bots(store: Store, where: Path, ms: int = 80) -> None:
    """Bots `slow` (ann), `greedy` (bob) and `random` (cat)."""
    submit_bundle(store, slow_bundle(where, ms), name="slow", owner="ann", launcher=launcher())
    submit_bundle(store, SAMPLES / "greedy", name="greedy", owner="bob", launcher=launcher())
    submit_bundle(store, SAMPLES / "random", name="random", owner="cat", launcher=launcher())


def queue_challenge(store: Store, mine: str = "slow", theirs: str = "greedy") -> int:
    """A challenge match queued as `ops_challenge` queues one (seed, salt, commitment)."""
    from arena.access.roles import Principal
    from arena.proto import arena_pb2 as pb
    from arena.service.core import Service
    from arena.service.ops_challenge import challenge

    req = pb.ChallengeRequest(my_bot=mine, opponent=theirs, rules=RULES)
    req.time_control.move_ms, req.time_control.bank_ms = int(TIME["move"] * 1000), int(TIME["bank"] * 1000)
    out = challenge(Service(store=store), Principal("admin"), req)
    return out.match.id


def duplicate_pair(store: Store, season: str = "dup") -> tuple[int, int]:
    """A duplicate season of slow v greedy with one pair queued: (first twin, second twin)."""
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.store.models import Season

    create_season(store, season, rules=RULES, duplicate=True, time_control=dict(TIME))
    start_season(store, season)
    with store.tx() as s:
        row = s.scalar(select(Season).where(Season.name == season))
        matches = schedule(s, row, 1)
        ids = sorted(x.id for x in matches)
    assert len(ids) == 2, ids
    return ids[0], ids[1]


@dataclass
class Played:
    match_id: int
    thread: threading.Thread
    result: dict[str, Any] = field(default_factory=dict)

    def join(self, timeout: float = 240) -> MatchResult:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"match {self.match_id} did not finish"
        assert "error" not in self.result, self.result.get("error")
        return self.result["result"]


def start_match(store: Store, match_id: int, *, live: bool = True, record: bool = True) -> Played:
    """Claim `match_id` now (status running), then play and record it in a thread."""
    with store.tx() as s:
        m = claim(s, RUNNER, ids=[match_id])
        assert m is not None, f"match {match_id} could not be claimed"
        job = job_for(s, m, launcher())
    if live:
        job = replace(job, live=str(live_path(store.home, match_id)))
    played = Played(match_id, threading.Thread(target=lambda: None))

    def play() -> None:
        try:
            result = run_job(job)
            played.result["result"] = result
            if record:
                assert record_result(store, RUNNER, match_id, result).recorded
        except BaseException as exc:  # reported by join()
            played.result["error"] = repr(exc)

    played.thread = threading.Thread(target=play, daemon=True, name=f"play-m{match_id}")
    played.thread.start()
    return played


def status_of(store: Store, match_id: int) -> str:
    with store.read() as s:
        return s.get_one(Match, match_id).status


def live_counts(path: Path) -> tuple[int, bool]:
    """(trick lines, match over) in a live file now."""
    try:
        lines = path.read_text().split("\n")[:-1]
    except FileNotFoundError:
        return 0, False
    kinds = [json.loads(x).get("kind") for x in lines if x.strip()]
    return kinds.count("trick"), "match_end" in kinds


def public_events(record: Any) -> list[tuple]:
    """The public events of a record, derived here independently of ops_watch: (kind, ...) tuples."""
    from arena.engine import Match as Game
    from arena.engine import parse_card
    from arena.replay.record import rules_of

    game = Game(rules_of(record), record.seed)
    out: list[tuple] = []
    for d in record.deals:
        deal = game.start_deal(deck=[parse_card(c) for c in d.deck], dealer=d.dealer)
        out.append(("deal", d.number, d.dealer))
        table: list[str] = []
        for p in d.plays:
            table.append(p.card)
            trick = game.play(parse_card(p.card))
            if len(table) == 2:
                assert trick is not None
                out.append(("trick", d.number, trick.no, trick.leader, tuple(table), trick.winner))
                table = []
        if deal.done:
            w = deal.outcome.winner
            out.append(("deal_end", d.number, -1 if w is None else w, tuple(game.lines)))
    return out


def public_tables(record: Any) -> list[dict[str, Any]]:
    """What the engine's own view shows after each trick of a record (honours taken, hand sizes, stock)
    and after each deal (honours, lines): the facts the live board must show, derived independently."""
    from arena.engine import Match as Game
    from arena.engine import parse_card
    from arena.replay.record import rules_of

    game = Game(rules_of(record), record.seed)
    out: list[dict[str, Any]] = []
    for d in record.deals:
        deal = game.start_deal(deck=[parse_card(c) for c in d.deck], dealer=d.dealer)
        for p in d.plays:
            if game.play(parse_card(p.card)) is not None:
                v = game.view(0)
                out.append(
                    {
                        "honours": list(v.honours),
                        "counts": [len(v.hand), v.opponent_hand_size],
                        "stock": v.stock_count,
                        "to_move": v.to_move,  # who leads the next trick (None: the deal is over)
                    }
                )
        if deal.done:
            out.append({"honours": list(deal.outcome.honours), "lines": list(game.lines)})
    return out


def as_tuple(ev: Any) -> tuple:
    """A WatchEvent (gRPC) as the tuples of `public_events`."""
    kind = ev.WhichOneof("event")
    if kind == "deal":
        return ("deal", ev.deal.deal, ev.deal.dealer)
    if kind == "trick":
        t = ev.trick
        return ("trick", t.deal, t.trick, t.leader, tuple(t.cards), t.winner)
    if kind == "deal_end":
        return ("deal_end", ev.deal_end.deal, ev.deal_end.winner, tuple(ev.deal_end.lines))
    return ("status", ev.status.status, ev.status.revealed)

"""The rows of `arena bench scale`'s synthetic stores: who plays (owners, bots with versions, one
running duplicate season with its entries) and what was played (matches in duplicate pairs, their
replays, rating changes and fault logs), as plain dicts keyed by column name, with explicit ids.

The history is drawn the way a ladder makes it: each bot has a hidden strength (Elo ~ N(1500, 200)),
every pairing is two matches on one seed with the seats swapped, results follow the strengths, about
one match in a hundred ends with a fault verdict (and the faulty seat's log), live Elo moves by
`arena.ladder.ratings.elo_update` in recording order, and the newest pairings are still open: some
queued, some running, some with one twin done and the other queued (so that match is sealed).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from arena.bench.scale_replays import Pool
from arena.engine.commitment import deck_commitment
from arena.ladder.ratings import count_change, elo_update, expected
from arena.store.models import utcnow
from arena.verdicts import FAULTS

Rows = dict[str, list[dict]]  # table name -> rows
SEASON = "scale"
SEASON_ID = 1
TIME_CONTROL = {"move": 1.0, "bank": 10.0}
FAULT_SHARE = 0.01  # matches that end with one seat's fault verdict
VOID_SHARE = 0.001  # matches where both seats fault (void: no rating change)
DRAW_SHARE = 0.03  # decided by the engine's scoring as drawn
SPACING = timedelta(seconds=20)  # between pairings in the synthetic history
LANGUAGES = ("python", "cpp", "c", "node", "shell")
FAULT_NAMES = sorted(str(v) for v in FAULTS)  # a sequence to draw from, in a fixed order


@dataclass
class EntryState:
    """An entry's live figures as the history is played forward."""

    id: int
    version_id: int
    owner: str
    strength: float
    rating: float = 1500.0
    rated: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    voids: int = 0
    last_scheduled: int = -1


@dataclass
class Plan:
    """One store's shape: how many bots and matches, the seed and the season's rules."""

    bots: int
    matches: int
    seed: int
    rules: list[str] = field(default_factory=list)
    now: datetime = field(default_factory=utcnow)

    @property
    def pairs(self) -> int:
        return self.matches // 2

    @property
    def open_pairs(self) -> int:
        """The newest pairings that are not over: a third queued, a third running, a third sealed."""
        return min(self.pairs // 2, max(3, self.pairs // 1000))

    @property
    def start(self) -> datetime:
        return self.now - SPACING * (self.pairs + 1)


def _hex(rng: random.Random, nbytes: int) -> str:
    return rng.randbytes(nbytes).hex()


def people(plan: Plan) -> tuple[Rows, list[EntryState]]:
    """Owners, bots (one to three versions each), the season and one entry per bot's newest version."""
    rng = random.Random(plan.seed)
    owners = max(1, plan.bots // 5)
    rows: Rows = {"owners": [], "bots": [], "bot_versions": [], "seasons": [], "entries": []}
    for o in range(owners):
        token = hashlib.sha256(f"bench-scale-{plan.seed}-{o}".encode()).hexdigest()
        rows["owners"].append(
            {"id": o + 1, "name": f"owner{o:05d}", "token_hash": token, "token_prefix": token[:8],
             "created_at": plan.start}
        )  # fmt: skip
    entries: list[EntryState] = []
    version_id = 0
    for b in range(plan.bots):
        owner = f"owner{b % owners:05d}"
        rows["bots"].append(
            {"id": b + 1, "name": f"bot{b:05d}", "owner": owner, "created_at": plan.start, "retired": False,
             "suspended": False}
        )  # fmt: skip
        language = LANGUAGES[b % len(LANGUAGES)]
        for number in range(1, 2 + rng.randrange(3)):
            version_id += 1
            digest = _hex(rng, 32)
            rows["bot_versions"].append(
                {"id": version_id, "bot_id": b + 1, "number": number, "content_hash": digest,
                 "path": f"bundles/{digest}", "language": language, "protocol": "grpc", "created_at": plan.start,
                 "build_ok": True, "build_log": "", "ladder": True}
            )  # fmt: skip
        entries.append(EntryState(b + 1, version_id, owner, rng.gauss(1500.0, 200.0)))
    rows["seasons"].append(
        {"id": SEASON_ID, "name": SEASON, "status": "running", "rules": list(plan.rules),
         "time_control": dict(TIME_CONTROL), "duplicate": True, "seed": plan.seed, "scheduled": plan.pairs,
         "recorded": 0, "created_at": plan.start, "started_at": plan.start, "options": None}
    )  # fmt: skip
    for e in entries:
        rows["entries"].append(
            {"id": e.id, "season_id": SEASON_ID, "version_id": e.version_id, "active": True,
             "joined_at": plan.start}
        )  # fmt: skip
    return rows, entries


@dataclass
class History:
    """Plays the plan's pairings forward, chunk by chunk; counts what it wrote."""

    plan: Plan
    entries: list[EntryState]
    pool: Pool
    recorded: int = 0
    rating_changes: int = 0
    logs: int = 0
    _turn: dict[int | None, int] = field(default_factory=lambda: {0: 0, 1: 0, None: 0})

    def chunks(self, pairs_per_chunk: int) -> Iterator[tuple[int, Rows]]:
        """(pairs done so far, the rows of the next pairs), until every pairing is written."""
        rng = random.Random(self.plan.seed ^ 0xC0FFEE)
        for first in range(0, self.plan.pairs, pairs_per_chunk):
            rows: Rows = {"matches": [], "replays": [], "rating_changes": [], "match_logs": []}
            last = min(self.plan.pairs, first + pairs_per_chunk)
            for p in range(first, last):
                self._pair(rng, p, rows)
            yield last, rows

    def _state(self, p: int, seat_pair: int) -> str:
        """done, or for the newest pairings: queued / running / done (twin queued: sealed)."""
        from_end = self.plan.pairs - p
        n = self.plan.open_pairs
        if from_end > n:
            return "done"
        third = from_end * 3 // (n + 1)  # 0: sealed pairs, 1: running, 2: queued (the newest)
        if third == 2 or seat_pair == 1:
            return "queued"
        return "running" if third == 1 else "done"

    def _pair(self, rng: random.Random, p: int, rows: Rows) -> None:
        while True:
            a, b = rng.sample(self.entries, 2)
            if a.owner != b.owner or len({e.owner for e in self.entries}) == 1:
                break
        seed = rng.getrandbits(63)
        a.last_scheduled = b.last_scheduled = p
        created = self.plan.start + SPACING * p
        for twin, (x, y) in enumerate(((a, b), (b, a))):
            mid = 2 * p + twin + 1
            salt = rng.randbytes(16)
            status = self._state(p, twin)
            row = {
                "id": mid, "season_id": SEASON_ID, "kind": "ladder", "requested_by": None, "pair": p,
                "version0_id": x.version_id, "version1_id": y.version_id, "entry0_id": x.id, "entry1_id": y.id,
                "rules": list(self.plan.rules), "time_control": dict(TIME_CONTROL), "seed": seed,
                "salt": salt.hex(), "commitment": deck_commitment(seed, f"m{mid}", salt), "status": status,
                "lease_owner": None, "lease_expires": None, "attempts": 0, "created_at": created,
                "started_at": None, "finished_at": None, "record_seq": None, "winner": None, "void": False,
                "verdicts": [], "verdict_details": [], "lines": [], "deals_played": 0, "duration": None,
            }  # fmt: skip
            if status == "running":
                row.update(lease_owner=f"bench-scale:0:{mid}", lease_expires=2e9, attempts=1,
                           started_at=created + timedelta(seconds=1))  # fmt: skip
            elif status == "done":
                self._result(rng, row, x, y, rows)
            rows["matches"].append(row)

    def _result(self, rng: random.Random, row: dict, x: EntryState, y: EntryState, rows: Rows) -> None:
        verdicts = ["OK", "OK"]
        roll = rng.random()
        if roll < VOID_SHARE:
            verdicts = [rng.choice(FAULT_NAMES), rng.choice(FAULT_NAMES)]
        elif roll < FAULT_SHARE:
            verdicts[rng.randrange(2)] = rng.choice(FAULT_NAMES)
        void = all(v != "OK" for v in verdicts)
        if void:
            winner: int | None = None
        elif "OK" in verdicts and verdicts != ["OK", "OK"]:
            winner = verdicts.index("OK")
        elif rng.random() < DRAW_SHARE:
            winner = None
        else:
            winner = 0 if rng.random() < expected(x.strength, y.strength) else 1
        bucket = self.pool[winner]
        record = bucket[self._turn[winner] % len(bucket)]
        self._turn[winner] += 1
        duration = rng.uniform(2.0, 20.0)
        details = [f"{v.lower()}: the bot broke the rules of play (deal 1, trick 2, turn 3)" if v != "OK" else ""
                   for v in verdicts]  # fmt: skip
        row.update(
            status="done", attempts=1, started_at=row["created_at"] + timedelta(seconds=1),
            finished_at=row["created_at"] + timedelta(seconds=1 + duration), record_seq=self.recorded,
            winner=winner, void=void, verdicts=verdicts, verdict_details=details, lines=list(record.lines),
            deals_played=record.deals, duration=duration,
        )  # fmt: skip
        self.recorded += 1
        rows["replays"].append({"match_id": row["id"], "data": record.data})
        for seat, verdict in enumerate(verdicts):
            if verdict != "OK":
                self.logs += 1
                rows["match_logs"].append(
                    {"match_id": row["id"], "seat": seat, "text": f"bot{seat}: {verdict.lower()} at turn 3\n"}
                )
        if void:
            x.voids += 1
            y.voids += 1
            return
        score0 = 0.5 if winner is None else float(winner == 0)
        cx, cy = elo_update(x.rating, x.rated, y.rating, y.rated, score0)
        for entry, change in ((x, cx), (y, cy)):
            count_change(entry, change)
            self.rating_changes += 1
            rows["rating_changes"].append(
                {"id": self.rating_changes, "match_id": row["id"], "entry_id": entry.id, "before": change.before,
                 "after": change.after, "k": change.k, "score": change.score}
            )  # fmt: skip


def entry_updates(entries: list[EntryState]) -> list[dict]:
    """Each entry's live figures once the whole history is recorded."""
    return [
        {"id": e.id, "rating": e.rating, "rated": e.rated, "wins": e.wins, "draws": e.draws,
         "losses": e.losses, "voids": e.voids, "last_scheduled": e.last_scheduled}
        for e in entries
    ]  # fmt: skip

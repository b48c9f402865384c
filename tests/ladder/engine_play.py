"""A test executor: plays a real engine match in-process and returns a real encoded record.

It stands in for the sandboxed referee (arena.workers.match) in tests of ratings, seasons and the
pool, where what matters is real, deterministic results and records, not processes. A bundle's
`strategy.txt` picks how the seat plays: `high` (highest legal card), `low`, `random` (seeded), or a
fault verdict (any `Verdict` whose `fault` is set: `CRASH`, `CPU_LIMIT`, ...) that forfeits at once,
`RAISE` (the executor raises instead of returning a result) or `EXIT` (the worker process dies).
`sleep.txt` adds seconds; `detail.txt` is appended to a fault's verdict detail (as a real referee may
quote a bot's stderr there), for tests that check where such text may go.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from arena.engine.match import Match
from arena.engine.rules import Rules
from arena.proto import replay_pb2
from arena.proto.codec import encode_record
from arena.referee.convert import codes, rules_to_proto
from arena.store import MatchJob, MatchResult
from arena.verdicts import Verdict

FAULTS = tuple(str(v) for v in Verdict if v.fault)


def _strategy(bundle: str) -> str:
    path = Path(bundle) / "strategy.txt"
    return path.read_text().strip() if path.exists() else "random"


def _detail(bundle: str) -> str:
    path = Path(bundle) / "detail.txt"
    return f": {path.read_text().strip()}" if path.exists() else ""


def play(job: MatchJob) -> MatchResult:
    strategies = [_strategy(b) for b in job.bundles]
    if "RAISE" in strategies:  # the executor itself breaks (not the bot): the pool must cope
        raise RuntimeError("executor broke")
    if "EXIT" in strategies:  # the worker process dies under the match
        os._exit(3)
    pause = sum(
        float((Path(b) / "sleep.txt").read_text()) for b in job.bundles if (Path(b) / "sleep.txt").exists()
    )
    if pause:
        time.sleep(pause)
    verdicts = ["OK", "OK"]
    for seat, strat in enumerate(strategies):
        if strat in FAULTS:
            verdicts[seat] = strat
    m = Match(Rules.from_pairs(job.rules), job.seed)
    record = replay_pb2.MatchRecord(format=1, match_id=str(job.match_id), seed=job.seed)
    record.rules.CopyFrom(rules_to_proto(m.rules))
    deals = record.deals  # every deal played, as the referee's recorder keeps them (re-simulable)
    winner: int | None
    if verdicts != ["OK", "OK"]:
        void = all(v != "OK" for v in verdicts)
        winner = None if void else verdicts.index("OK")
    else:
        void = False
        rngs = [random.Random(job.seed * 2 + seat) for seat in (0, 1)]
        while not m.over:
            deal = m.start_deal()
            plays = deals.add(number=deal.index + 1, dealer=deal.dealer, deck=codes(deal.deck)).plays
            while not deal.done:
                seat = deal.to_move
                legal = deal.legal_cards()
                strat = strategies[seat]
                card = (
                    max(legal)
                    if strat == "high"
                    else min(legal)
                    if strat == "low"
                    else rngs[seat].choice(legal)
                )
                m.play(card)
                plays.add(seat=seat, card=codes([card])[0])
        winner = m.winner
    res = record.result
    res.winner = -1 if winner is None else winner
    res.void = void
    res.verdicts.extend(verdicts)
    res.details.extend(
        [
            f"{v.lower()} in test{_detail(b)}" if v != "OK" else ""
            for v, b in zip(verdicts, job.bundles, strict=True)
        ]
    )
    res.lines.extend(m.lines)
    res.deals_played = len(m.deals)
    return MatchResult(
        winner=winner,
        void=void,
        verdicts=(verdicts[0], verdicts[1]),
        verdict_details=(res.details[0], res.details[1]),
        lines=(m.lines[0], m.lines[1]),
        deals_played=len(m.deals),
        replay=encode_record(record),
    )


def make_bundle(
    root: Path, name: str, strategy: str = "random", sleep: float = 0.0, detail: str = ""
) -> Path:
    """A minimal bundle directory for this executor."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "bot.toml").write_text(f'name = "{name}"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
    (path / "bot.py").write_text("# plays through tests/ladder/engine_play.py\n")
    (path / "strategy.txt").write_text(strategy)
    if sleep:
        (path / "sleep.txt").write_text(str(sleep))
    if detail:
        (path / "detail.txt").write_text(detail)
    return path

"""`arena bench engine`: random legal deals per second, the engine against a list-based baseline.

Three ways of playing the same random deals are timed in the same run, on one core, in CPU seconds
(`time.process_time`, so other load on a shared machine does not count against a variant), and
interleaved in rounds so that drifting load affects all of them alike:
- `baseline`: `arena.bench.baseline.ListDeal`, card by card (`play(pick(legal_cards()))`);
- `engine`: `arena.engine.Deal`, card by card through the same per-move API;
- `engine_playout`: `arena.engine.Deal.playout`, the engine's own random-playout loop;
- `core_playout`: the solver's compiled core (`arena.analysis.core.playouts`, when built), whole random
  deals in C, each with its own Fisher-Yates shuffle (more work than the others, which take pre-shuffled
  packs). Its figure is set against `C_REFERENCE`, the ~1.8 million random deals per second per core of
  a C bitmask implementation (issue 16 §1), a published figure, not measured here.
All three do the same work per deal: check the deck, deal it, play 32 random legal cards, record the
tricks and score the deal (the playout records each trick compactly and builds TrickRecords on demand).
Decks come from one pool of pre-shuffled packs (built before timing), so the figures measure dealing
and playing, not Python's shuffle. The engine's seeded SplitMix64 shuffle (`deal_deck`) is timed
separately, in decks per second. The card-by-card loops pick with one `getrandbits(32)` per card
(`legal[bits(32) * len(legal) >> 32]`), the same generator call the playout makes once per trick:
`random.choice` would spend more time in its Python-level code than the baseline spends on the move,
and so flatter the playout.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from arena.bench.baseline import ListDeal
from arena.engine import Deal, Rules, deal_deck

POOL = 1024
ROUNDS = 15
TARGET = 3.0  # issue 2 §5: the engine at least 3x the straightforward baseline
C_REFERENCE = 1_800_000  # random deals/s/core of a C bitmask engine (issue 16 §1), for the compiled core
BATCH = {"core_playout": 5_000}  # deals per call (a ctypes call costs about as much as one C deal)


def _decks(seed: int) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    rng = random.Random(seed)
    ints = []
    for _ in range(POOL):
        deck = list(range(32))
        rng.shuffle(deck)
        ints.append(deck)
    tuples = [[(c >> 3, c & 7) for c in deck] for deck in ints]
    return ints, tuples


def _runners(seed: int) -> dict[str, Callable[[int], int]]:
    """name -> function(n) that plays the next n deals and returns a checksum (so no work can be skipped).

    Each runner keeps its generator and its place in the deck pool between calls, so successive batches
    play different deals (a batch that restarted would replay the same few deals, which the CPU's branch
    predictors could learn).
    """
    int_decks, tuple_decks = _decks(seed)
    rules = Rules()
    base_bits = random.Random(seed).getrandbits
    engine_bits = random.Random(seed).getrandbits
    playout_rng = random.Random(seed)
    at = dict.fromkeys(("baseline", "engine", "engine_playout", "shuffle"), 0)  # each runner's next deal

    def baseline(n: int) -> int:
        total, first = 0, at["baseline"]
        for k in range(first, first + n):
            deal = ListDeal(k & 1, tuple_decks[k % POOL])
            while not deal.done:
                legal = deal.legal_cards()
                deal.play(legal[base_bits(32) * len(legal) >> 32])
            total += deal.honours[0]
        at["baseline"] = first + n
        return total

    def engine(n: int) -> int:
        total, first = 0, at["engine"]
        for k in range(first, first + n):
            deal = Deal(rules, k & 1, int_decks[k % POOL])
            while not deal.done:
                legal = deal.legal_cards()
                deal.play(legal[engine_bits(32) * len(legal) >> 32])
            total += deal.honours[0]
        at["engine"] = first + n
        return total

    def engine_playout(n: int) -> int:
        total, first = 0, at["engine_playout"]
        for k in range(first, first + n):
            total += Deal(rules, k & 1, int_decks[k % POOL]).playout(playout_rng).honours[0]
        at["engine_playout"] = first + n
        return total

    def shuffle(n: int) -> int:
        total, first = 0, at["shuffle"]
        for k in range(first, first + n):
            total += deal_deck(seed, k)[0]
        at["shuffle"] = first + n
        return total

    runners: dict[str, Callable[[int], int]] = {
        "baseline": baseline,
        "engine": engine,
        "engine_playout": engine_playout,
        "shuffle": shuffle,
    }
    from arena.analysis import core

    if core.available():
        core_seed = [seed]

        def core_playout(n: int) -> int:
            core_seed[0] += 1  # each batch a different stream of deals
            return core.playouts(core_seed[0], n)

        runners["core_playout"] = core_playout
    return runners


def run(seconds: float = 3.0, seed: int = 1, progress: Callable[[float], None] | None = None) -> dict:
    """Time every variant for about `seconds` CPU seconds in total; returns the figures as a dict.

    The variants take turns in ROUNDS short slices (every other round in reverse order), and each
    figure is the median of its per-slice rates: a burst of load from other jobs on a shared machine
    then spoils a slice or two of every variant, not the whole figure of one.
    """
    runners = _runners(seed)
    counts = {name: 0 for name in runners}
    spent = {name: 0.0 for name in runners}
    rates: dict[str, list[float]] = {name: [] for name in runners}
    slice_s = max(seconds, 0.05) / (ROUNDS * len(runners))
    done = 0
    for round_no in range(ROUNDS):
        order = list(runners.items())
        for name, fn in order if round_no % 2 == 0 else order[::-1]:
            batch = BATCH.get(name, 10)
            played = 0
            start = time.process_time()
            while True:
                fn(batch)
                played += batch
                elapsed = time.process_time() - start
                if elapsed >= slice_s:
                    break
            counts[name] += played
            spent[name] += elapsed
            rates[name].append(played / elapsed)
            done += 1
            if progress:
                progress(done / (ROUNDS * len(runners)))
    rate = {name: statistics.median(r) for name, r in rates.items()}
    return {
        "benchmark": "engine",
        "cpu_seconds": round(sum(spent.values()), 2),
        "rounds": ROUNDS,
        "rules": "default (6-card hands, no trumps)",
        "baseline_deals_per_s": round(rate["baseline"]),
        "engine_deals_per_s": round(rate["engine"]),
        "engine_playout_deals_per_s": round(rate["engine_playout"]),
        "engine_vs_baseline": round(rate["engine"] / rate["baseline"], 2),
        "playout_vs_baseline": round(rate["engine_playout"] / rate["baseline"], 2),
        "seeded_shuffles_per_s": round(rate["shuffle"]),
        "core_playout_deals_per_s": round(rate["core_playout"]) if "core_playout" in rate else None,
        "core_vs_c_reference": round(rate["core_playout"] / C_REFERENCE, 2)
        if "core_playout" in rate
        else None,
        "c_reference_deals_per_s": C_REFERENCE,
        "target_vs_baseline": TARGET,
        "deals": counts,
    }

"""`arena bench strength`: each sample bot's honours margin per deal against the omniscient oracle.

Every bot plays the same deals against the oracle, each deal twice with the seats swapped (duplicate
deals), so the luck of the cards cancels and the bots are compared on equal terms. The bots are the
sample bundles' own `Bot` classes, played in-process: each turn they get the `TurnRequest` the referee
would send (built by arena.referee.convert from the engine's view of their seat), and the SDK's hooks
in the same order as `arena.sdk.run`. The baseline, measured in the same run, is tactician's gap to
the oracle: `closed` says which share of that gap a bot closes, with a 95% interval computed from the
per-deal pairs (the bot and tactician on the same deals, `paired`), which is far narrower than the two
bots' own intervals would suggest, since most of a deal's luck hits both alike.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

from arena.bench.oracle import PLAYOUTS, oracle_card
from arena.engine import Match, Rules
from arena.engine.deal import Deal
from arena.engine.rng import deal_deck
from arena.engine.view import build_view
from arena.proto import referee_pb2 as pb
from arena.referee.convert import codes, fill_deal_start, fill_trick_result, fill_view, rules_to_proto
from arena.sdk import Bot
from arena.sdk.view import View

SAMPLE_BOTS = ("random", "greedy", "tactician", "pimc", "ismcts")
#: a row's bot maker, and what is shown each fresh bot with the live deal (None: nothing, as for every bot)
Player = tuple[Callable[[], Bot], Callable[[Bot, Deal], None] | None]
BASELINE = "tactician"
Z95 = 1.96


def sample_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "sample_bots" / "python"


def load_bot(name: str, folder: Path | None = None) -> Callable[[], Bot]:
    """The Bot subclass of a Python sample bundle (its folder goes on sys.path for its siblings)."""
    where = (folder or sample_dir()) / name
    if not (where / "bot.py").is_file():
        raise FileNotFoundError(f"no Python sample bot {name!r} in {where.parent} (need {name}/bot.py)")
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    spec = importlib.util.spec_from_file_location(f"sample_bot_{name}", where / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [
        v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
    ]
    if len(classes) != 1:
        raise TypeError(f"{where / 'bot.py'} should define exactly one Bot subclass, found {len(classes)}")
    return classes[0]


def fill_turn(req: pb.TurnRequest, match: Match, seat: int) -> None:
    """The view and legal cards of a TurnRequest for `seat`, as the referee fills them."""
    assert match.deal is not None
    fill_view(req.view, build_view(match, seat), len(match.deals))
    req.legal_cards.extend(codes(match.deal.legal_cards()))


def play_deal(
    make_bot: Callable[[], Bot],
    bot_seat: int,
    rules: Rules,
    deck: list[int],
    dealer: int,
    bot_seed: int = 0,
    oracle_playouts: int = PLAYOUTS,
    watch: Callable[[Bot, Deal], None] | None = None,
) -> int:
    """One deal of a fresh bot against the oracle; returns the bot's honours. The bot is set up as
    the SDK sets it up on Welcome, `rng` seeded from `bot_seed` included (the search bots draw from it).
    `watch` is shown the bot and the live deal once (arena/bench/peek.py's searches read it)."""
    match = Match(rules, 0)
    deal = match.start_deal(deck=deck, dealer=dealer)
    bot = make_bot()
    if watch is not None:
        watch(bot, deal)
    bot.seat, bot.rules, bot.match_id, bot.opponent = bot_seat, rules_to_proto(rules), "strength", "oracle"
    bot.bot_seed, bot.rng = bot_seed, random.Random(bot_seed)
    turn = 0
    started = False
    pending: pb.TrickResult | None = None
    while not deal.done:
        if deal.to_move != bot_seat:
            trick = match.play(oracle_card(deal, oracle_playouts))
        else:
            turn += 1
            req = pb.TurnRequest(turn_id=turn, move_ms=1000, bank_ms=10000)
            if not started:
                fill_deal_start(req.deal_start, match, bot_seat)
                bot.on_deal_start(req.deal_start)
                started = True
            elif pending is not None:
                req.trick_result.CopyFrom(pending)
                bot.on_trick(req.trick_result)
            pending = None
            fill_turn(req, match, bot_seat)
            card = bot.play(View.from_request(req))
            trick = match.play(_card_of(card, req))
        if trick is not None:
            pending = pb.TrickResult()
            fill_trick_result(pending, match, trick, bot_seat)
    return deal.honours[bot_seat]


def _card_of(code: str, req: pb.TurnRequest) -> int:
    from arena.engine.cards import parse_card

    if code not in req.legal_cards:
        raise ValueError(f"the bot played {code!r}, not one of its legal cards {list(req.legal_cards)}")
    return parse_card(code)


def interval(values: list[float]) -> float | None:
    """The half-width of the 95% interval of the mean of `values` (None for fewer than two)."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return Z95 * sd / math.sqrt(n)


def paired(bot: list[float], base: list[float]) -> dict:
    """A bot against the baseline on the same deals: the mean per-deal difference with its 95% interval,
    and the share of the baseline's gap the bot closes, `1 - mean(bot) / mean(base)`, with Fieller's 95%
    interval for that ratio. Both come from the per-deal pairs, so the luck of a deal that helps or hurts
    both bots alike cancels: Fieller's interval is the set of ratios r whose per-deal residuals
    `bot_i - r * base_i` have a mean within 1.96 standard errors of 0. None where it is unbounded (the
    baseline's gap is not clearly below 0) or with fewer than two deals."""
    n = len(bot)
    diffs = [b - t for b, t in zip(bot, base, strict=True)]
    out: dict = {"vs_baseline": round(sum(diffs) / n, 2), "vs_baseline_ci95": None, "closed_ci95": None}
    half = interval(diffs)
    if half is None:
        return out
    out["vs_baseline_ci95"] = round(half, 2)
    mb, mt = sum(bot) / n, sum(base) / n
    sbb = sum((b - mb) ** 2 for b in bot) / (n - 1)
    stt = sum((t - mt) ** 2 for t in base) / (n - 1)
    sbt = sum((b - mb) * (t - mt) for b, t in zip(bot, base, strict=True)) / (n - 1)
    q = Z95 * Z95 / n
    a, h, c = mt * mt - q * stt, mb * mt - q * sbt, mb * mb - q * sbb  # a r^2 - 2 h r + c <= 0
    disc = h * h - a * c
    if a <= 0 or disc < 0:
        return out
    lo, hi = (h - math.sqrt(disc)) / a, (h + math.sqrt(disc)) / a  # the ratio mean(bot) / mean(base)
    out["closed_ci95"] = [round(1 - hi, 3), round(1 - lo, 3)]
    return out


def run(
    bots: tuple[str, ...] = SAMPLE_BOTS,
    deals: int = 20,
    seed: int = 1,
    rules: Rules | None = None,
    progress: Callable[[float], None] = lambda f: None,
    oracle_playouts: int = PLAYOUTS,
    peek: bool = False,
) -> dict:
    """Margin per deal (bot honours minus the oracle's, mean and 95% interval over duplicate pairs), each
    bot's CPU seconds per deal, and, when the baseline is among `bots`, each bot paired with it.
    `oracle_playouts` per line of the oracle's search: the yardstick itself, named in the result.
    `peek` adds the rows of arena/bench/peek.py: ismcts shown the opponent's hand, then everything."""
    from arena.bench.peek import peeking_players

    rules = rules or Rules()
    players: dict[str, Player] = {name: (load_bot(name), None) for name in bots}
    if peek:
        players.update(peeking_players())
    rows: dict[str, dict] = {}
    margins: dict[str, list[float]] = {}
    steps, done = len(players) * deals, 0
    for name, (make, watch) in players.items():
        pairs = []
        cpu = time.process_time()
        for i in range(deals):
            deck = deal_deck(seed, i)
            dealer = i % 2
            pair = [
                play_deal(
                    make, seat, rules, deck, dealer, (seed << 20) + 2 * i + seat, oracle_playouts, watch
                )
                for seat in (0, 1)
            ]
            pairs.append(sum(2 * h - 20 for h in pair) / 2)  # mine minus the oracle's, per deal
            done += 1
            progress(done / steps)
        half = interval(pairs)  # one pair gives no spread
        rows[name] = {
            "margin": round(sum(pairs) / len(pairs), 2),
            "ci95": None if half is None else round(half, 2),
            "cpu_s_per_deal": round((time.process_time() - cpu) / deals, 3),
        }
        margins[name] = pairs
    base = rows.get(BASELINE, {}).get("margin")
    for name, row in rows.items():
        row["closed"] = None if not base else round(1 - row["margin"] / base, 3)
        if base and name != BASELINE:
            row.update(paired(margins[name], margins[BASELINE]))
    return {
        "rules": rules.changed() or "default",
        "deals": deals,
        "seed": seed,
        "oracle_playouts": oracle_playouts,
        "baseline": BASELINE,
        "bots": rows,
    }

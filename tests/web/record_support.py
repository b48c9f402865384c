"""A seeded match played with random legal cards, as a replay record: the web tests' matches (their
conftest plants them in a store) and the timeline and analysis tests import it by this name."""

from __future__ import annotations

import random

from arena.engine import Match, Rules
from arena.engine.cards import card_code
from arena.proto import replay_pb2 as rpb
from arena.referee.convert import rules_to_proto


def play_record(rules: Rules, seed: int, names: tuple[str, str], crash_at: tuple[int, int] | None = None):
    """Play a seeded match with random legal cards; return (proto record, result fields, plays)."""
    rnd = random.Random(seed)
    m = Match(rules, seed)
    rec = rpb.MatchRecord(format=1, match_id=str(seed), seed=seed, rules=rules_to_proto(rules))
    for seat, name in enumerate(names):
        rec.players.add(seat=seat, name=name, version="1")
    crashed = False
    while not m.over and not crashed:
        deal = m.start_deal()
        dr = rec.deals.add(number=deal.index + 1, dealer=deal.dealer, deck=[card_code(c) for c in deal.deck])
        while not deal.done:
            if crash_at and deal.index + 1 == crash_at[0] and len(deal.plays) == crash_at[1]:
                crashed = True
                break
            seat = deal.to_move
            card = rnd.choice(deal.legal_cards())
            m.play(card)
            dr.plays.add(seat=seat, card=card_code(card), think_us=100)
        if deal.done:
            o = deal.outcome
            dr.outcome.CopyFrom(
                rpb.DealOutcomeRecord(
                    honours=list(o.honours),
                    winner=-1 if o.winner is None else o.winner,
                    value=o.value,
                    lines=list(m.lines),
                )
            )
    if crashed:
        winner, verdicts, details = 0, ("OK", "CRASH"), ("", "process exited with code 1")
    else:
        winner, verdicts, details = m.winner, ("OK", "OK"), ("", "")
    rec.result.CopyFrom(
        rpb.ResultRecord(
            winner=-1 if winner is None else winner,
            verdicts=list(verdicts),
            details=list(details),
            lines=list(m.lines),
            flags=list(m.flags),
            deals_played=len(m.deals),
            end_reason="VERDICT" if crashed else "COMPLETED",
        )
    )
    return rec, winner, verdicts, details, tuple(m.lines), len(m.deals)

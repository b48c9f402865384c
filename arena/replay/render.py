"""A match record as text, trick by trick: omniscient, or as one seat saw it.

The record is re-simulated by `walk.Walk`, so what a seat "saw" comes from the engine's own
hidden view (hands, draws), never from the record's deck directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from arena.engine import Deal, EngineError, Match, TrickRecord, card_label
from arena.engine.cards import labels_in
from arena.proto import replay_pb2
from arena.replay.record import rules_of
from arena.replay.walk import DealEnd, DealStart, Played, Walk, record_deals
from arena.verdicts import Verdict


def render(
    record: replay_pb2.MatchRecord, seat: int | None = None, only_deal: int | None = None
) -> list[str]:
    """Lines of text. `seat` None shows everything; 0 or 1 shows only what that seat knew."""
    rules = rules_of(record)
    deck_style = rules.deck
    names = {p.seat: p.name or f"seat {p.seat}" for p in record.players}

    def lab(cards) -> str:
        return " ".join(card_label(c, deck_style) for c in cards) or "-"

    def who(s: int) -> str:
        if seat is None:
            return f"{names.get(s, s)}[{s}]"
        return "you" if s == seat else "opponent"

    tc = record.time_control
    changed = ", ".join(f"{k}={v}" for k, v in rules.changed().items()) or "defaults"
    out = [
        f"match {record.match_id}  seed {record.seed}  rules: {changed}  "
        f"clocks: move {tc.move_ms} ms, bank {tc.bank_ms} ms",
        "  "
        + "   ".join(f"seat {s}: {names.get(s, '?')}" for s in (0, 1))
        + (f"   (as seat {seat} saw it)" if seat is not None else "   (everything shown)"),
        "  each trick: N. the leader's card, the answer -> who takes it (+honours in it)   "
        + ("draws: what each drew" if seat is None else "what you drew")
        + "   [think: the leader's time, the answer's]",
    ]
    m = Match(rules, record.seed)
    walk = Walk(m, record_deals(record))
    show = False
    pending: list[tuple[int, int, int]] = []  # (seat, card, think_us)
    try:
        for step in walk:
            if isinstance(step, DealStart):
                d, deal = record.deals[step.number - 1], step.deal
                show = only_deal is None or only_deal == d.number
                pending = []
                if show:
                    out += _deal_head(m, d, deal, seat, who, lab, deck_style)
            elif isinstance(step, Played):
                p = record.deals[step.number - 1].plays[step.k - 1]
                pending.append((p.seat, step.card, p.think_us))
                trick = step.trick
                if trick is None:
                    continue
                if show:
                    out += _trick_lines(m, trick, pending, seat, who, lab, deck_style)
                pending = []
            elif isinstance(step, DealEnd):
                if show:
                    out += _deal_tail(m, step.deal, pending, seat, who, deck_style)
    except EngineError as exc:
        d = record.deals[walk.deal - 1]
        if walk.play is None:
            out.append(f"deal {d.number}: the record does not re-simulate: {exc}")
        else:
            out.append(f"  the record does not re-simulate at {d.plays[walk.play - 1].card}: {exc}")
            return out
    r = record.result
    out.append("")
    if r.void:
        head = "void match"
    elif r.winner < 0:
        head = "draw"
    else:
        head = f"{names.get(r.winner, r.winner)} (seat {r.winner}) wins"
    out.append(f"result: {head}; lines {_pair(r.lines)}, flags {_pair(r.flags)}, "
               f"{_deals(record)}, {END_WORDS.get(r.end_reason, r.end_reason.lower() or 'unknown end')}")  # fmt: skip
    for s, verdict in enumerate(r.verdicts):
        if verdict != "OK":  # an illegal move's sentence names cards: in the terminal's form
            detail = labels_in(r.details[s], deck_style) if verdict == Verdict.ILLEGAL_MOVE else r.details[s]
            out.append(f"  seat {s}: {verdict}: {detail}")
    for st in record.stats:
        if st.stale_actions or st.logs_dropped:
            out.append(
                f"  seat {st.seat}: {st.stale_actions} stale action(s), {st.logs_dropped} log line(s) dropped"
            )
    logs = [x for x in record.logs if (seat is None or x.seat == seat) and not x.source]
    if logs:
        out.append(f"logs ({len(logs)}):")
        for x in logs[:200]:
            out.append(f"  [seat {x.seat} deal {x.deal} trick {x.trick}] {x.text}")
        if len(logs) > 200:
            out.append(f"  ... {len(logs) - 200} more")
    return out


END_WORDS = {
    "COMPLETED": "played to its end",
    "VERDICT": "ended by a verdict",
    "SHUTDOWN": "the referee shut down",
    "ABORTED": "aborted",
}


def _pair(values) -> str:  # a repeated field
    """`3-1`: one figure per seat (`-` for a record without them)."""
    return "-".join(str(v) for v in values) or "-"


def _deals(record: replay_pb2.MatchRecord) -> str:
    """`3 deal(s) played`, or `0 deal(s) finished, ended in deal 1` when the match ended mid-deal."""
    r = record.result
    last = record.deals[-1].number if record.deals else 0
    if last > r.deals_played:
        return f"{r.deals_played} deal(s) finished, ended in deal {last}"
    return f"{r.deals_played} deal(s) played"


Who = Callable[[int], str]
Labels = Callable[[Iterable[int]], str]


def _deal_head(
    m: Match, d: replay_pb2.DealRecord, deal: Deal, seat: int | None, who: Who, lab: Labels, deck_style: str
) -> list[str]:
    """A deal's first lines: dealer, leader, lines so far, the trump card and the hands (and stock)."""
    out = [""]
    out.append(f"deal {d.number}: dealer {who(d.dealer)}, leader {who(1 - d.dealer)}; lines "
               f"{m.lines[0]}-{m.lines[1]}" + (f", multiplier {deal.multiplier}" if deal.multiplier > 1 else "")
               + (f", pot {deal.pot}" if deal.pot else ""))  # fmt: skip
    if deal.trump_card is not None:
        out.append(f"  trump card: {card_label(deal.trump_card, deck_style)}")
    for s in (0, 1) if seat is None else (seat,):
        out.append(f"  {who(s)} hold{'s' if seat is None else ''}: {lab(m.view(s).hand)}")
    if seat is None:
        out.append(f"  stock (draw order): {lab(deal.stock)}")
    return out


def _trick_lines(
    m: Match,
    trick: TrickRecord,
    pending: list[tuple[int, int, int]],
    seat: int | None,
    who: Who,
    lab: Labels,
    deck_style: str,
) -> list[str]:
    """One trick: its two cards, its winner and honours, the draws as `seat` saw them, the think times."""
    (s1, c1, t1), (s2, c2, t2) = pending
    line = (f"  {trick.no:2d}. {who(s1)} {card_label(c1, deck_style)}, {who(s2)} {card_label(c2, deck_style)}"
            f" -> {who(trick.winner)}" + (f" +{trick.honours}" if trick.honours else ""))  # fmt: skip
    if trick.winner_draw is not None:
        assert trick.loser_draw is not None  # both draw, or neither
        if seat is None:
            line += (f"   draws: {who(trick.winner)} {card_label(trick.winner_draw, deck_style)},"
                     f" {who(1 - trick.winner)} {card_label(trick.loser_draw, deck_style)}")  # fmt: skip
        else:
            mine = trick.winner_draw if trick.winner == seat else trick.loser_draw
            line += f"   you drew {card_label(mine, deck_style)}"
    line += f"   [think {t1 / 1000:.1f} ms, {t2 / 1000:.1f} ms]"
    out = [line]
    deal = m.deal
    if seat is not None and deal is not None and not deal.done:
        out.append(f"      your hand: {lab(m.view(seat).hand)}")
    return out


def _deal_tail(
    m: Match, deal: Deal, pending: list[tuple[int, int, int]], seat: int | None, who: Who, deck_style: str
) -> list[str]:
    """A lead the match ended before the answer to, and the deal's result."""
    out = []
    if pending:
        s1, c1, _ = pending[0]
        out.append(f"      {who(s1)} led {card_label(c1, deck_style)}; the match ended before the answer")
    if deal.done and deal.outcome is not None:
        o = deal.outcome
        res = (
            "standoff (10-10)"
            if o.winner is None
            else f"{who(o.winner)} win{'s' if seat is None else ''} {max(o.lines)} line(s)"
        )
        out.append(f"  honours {o.honours[0]}-{o.honours[1]}: {res}; match lines {m.lines[0]}-{m.lines[1]}")
    return out


def render_logs(record: replay_pb2.MatchRecord, seat: int | None = None) -> list[str]:
    """A seat's (or both seats') Log lines with where they arrived, then what its process wrote to
    stdout and stderr (kept by `arena play` and the workers, capped; docs/referee.md). Private text:
    only a full or an owner's record has any."""
    out: list[str] = []
    for s in (0, 1) if seat is None else (seat,):
        logs = [x for x in record.logs if x.seat == s and not x.source]
        output = [x for x in record.logs if x.seat == s and x.source == "output"]
        out.append(f"seat {s}: {len(logs)} Log line(s)")
        out += [f"  [deal {x.deal} trick {x.trick}] {x.text}" for x in logs]
        out.append(f"seat {s}: {len(output)} line(s) of stdout/stderr")
        out += [f"  {x.text}" for x in output]
    return out

"""Engine objects to wire messages: cards become text codes, seat lists become repeated fields."""

from __future__ import annotations

import operator
from collections.abc import Callable

from arena.engine import Match, Rules, TrickRecord, View, card_code
from arena.engine.cards import SUITS, cards_of
from arena.proto import referee_pb2 as pb
from arena.proto.view_fields import CARD, CARDS, INT, NUMBER, PAIR, SUIT, VIEW_FIELDS

CODES = tuple(card_code(c) for c in range(32))  # card -> its code, without building the string per call
CARD_OF_CODE = {
    code: card for card, code in enumerate(CODES)
}  # the reverse, for the codes the referee writes
_CODES = CODES


def codes(cards) -> list[str]:
    return [_CODES[c] for c in cards]


def rules_to_proto(rules: Rules) -> pb.Rules:
    """The message's fields are the Rules dataclass's, by name (the inverse of `replay.record.rules_of`);
    only `max_deals`, None for no limit, travels as 0."""
    fields = {f.name: getattr(rules, f.name) for f in pb.Rules.DESCRIPTOR.fields}
    fields["max_deals"] = rules.max_deals or 0
    return pb.Rules(**fields)


def trick_to_proto(t: TrickRecord) -> pb.Trick:
    return pb.Trick(
        number=t.no, leader=t.leader, lead_card=_CODES[t.lead], follow_card=_CODES[t.follow],
        winner=t.winner, honours=t.honours,
    )  # fmt: skip


def view_to_proto(v: View, deals_played: int, tricks: list[pb.Trick] | None = None) -> pb.View:
    """The typed View of a seat on move (docs/rules.md §8)."""
    out = pb.View()
    fill_view(out, v, deals_played, tricks)
    return out


def _writer(wire: str, attr: str, kind: str) -> Callable[[pb.View, View], None]:
    """What writes one row of VIEW_FIELDS from an engine View into a wire View."""
    get = operator.attrgetter(attr)
    if kind == INT:
        return lambda out, v: setattr(out, wire, get(v))
    if kind == NUMBER:
        return lambda out, v: setattr(out, wire, get(v) + 1)
    if kind == PAIR:
        return lambda out, v: getattr(out, wire).extend(get(v))
    if kind == CARDS:
        return lambda out, v: getattr(out, wire).extend([_CODES[c] for c in get(v)])
    table = {CARD: _CODES, SUIT: SUITS}[kind]

    def optional(out: pb.View, v: View) -> None:
        value = get(v)
        if value is not None:
            setattr(out, wire, table[value])

    return optional


_WRITERS = tuple(_writer(*row) for row in VIEW_FIELDS)


def fill_view(out: pb.View, v: View, deals_played: int, tricks: list[pb.Trick] | None = None) -> None:
    """Write a View into `out` in place, one row of `VIEW_FIELDS` at a time. `tricks`, when given, are
    this deal's finished tricks already converted."""
    for write in _WRITERS:
        write(out, v)
    out.deals_played = deals_played
    if tricks is None or len(tricks) != len(v.tricks):
        tricks = [
            pb.Trick(number=i, leader=ld, lead_card=_CODES[a], follow_card=_CODES[b], winner=w,
                     honours=_honours(a) + _honours(b))
            for i, (ld, a, b, w) in enumerate(v.tricks, 1)
        ]  # fmt: skip
    out.tricks.extend(tricks)


def _honours(card: int) -> int:
    return 1 if card & 7 >= 3 else 0


def fill_deal_start(out: pb.DealStart, match: Match, seat: int) -> None:
    """What `seat` learns when a deal begins (it rides in the seat's first TurnRequest of the deal)."""
    deal = match.deal
    assert deal is not None
    out.deal_number = deal.index + 1
    out.dealer = deal.dealer
    out.hand.extend(codes(cards_of(deal.hands[seat])))
    out.trump_card = "" if deal.trump_card is None else _CODES[deal.trump_card]
    out.stock_size = deal.stock_count
    out.lines.extend(match.lines)
    out.multiplier = deal.multiplier
    out.pot = deal.pot


def fill_trick_result(out: pb.TrickResult, match: Match, trick: TrickRecord, seat: int) -> None:
    """Write what `seat` learns from `trick` into `out`: its own draw, the opponent's only when public
    (the face-up trump). Valid until the next trick ends: it reads the deal's honours and stock."""
    deal = match.deal
    assert deal is not None
    mine = trick.winner_draw if trick.winner == seat else trick.loser_draw
    theirs = trick.loser_draw if trick.winner == seat else trick.winner_draw
    out.deal_number = deal.index + 1
    t = out.trick
    t.number, t.leader, t.lead_card, t.follow_card = (
        trick.no,
        trick.leader,
        _CODES[trick.lead],
        _CODES[trick.follow],
    )
    t.winner, t.honours = trick.winner, trick.honours
    out.honours.extend(deal.honours)
    if mine is not None:
        out.drawn_card = _CODES[mine]
    if theirs is not None:
        out.opponent_drew = True
        if theirs == deal.trump_card:
            out.opponent_drawn_card = _CODES[theirs]
    out.stock_size = deal.stock_count


def deal_result(match: Match, last: TrickRecord | None, seat: int) -> pb.RefereeMessage:
    """The end of the deal just finished, with its last trick as `seat` saw it."""
    summary = match.deals[-1]
    out = summary.outcome
    msg = pb.RefereeMessage(
        deal_result=pb.DealResult(
            deal_number=summary.index + 1,
            honours=list(out.honours),
            winner=-1 if out.winner is None else out.winner,
            value=max(out.lines),
            lines=list(match.lines),
            flags=list(match.flags),
            multiplier=match.multiplier,
            pot=match.pot,
        )
    )
    if last is not None:
        fill_trick_result(msg.deal_result.last_trick, match, last, seat)
    return msg


SUIT_WORDS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def illegal_detail(match: Match, card: int, legal: list[int]) -> str:
    """Why `card` may not be played now, in wire codes: the card, the rule that forbids it, and the
    legal cards (the engine's own sentence uses display labels such as suit symbols)."""
    deal = match.deal
    assert deal is not None
    code = _CODES[card]
    legal_text = f"the legal cards were {' '.join(codes(sorted(legal)))}"
    seat = deal.to_move
    if seat is None or not deal.hands[seat] >> card & 1:
        return f"played {code}, which is not in your hand; {legal_text}"
    lead = deal.table
    suit = CODES[lead][1] if lead is not None else ""
    if lead is not None and card >> 3 == lead >> 3:
        rule = (
            f"in phase 2 with must_head_phase2, a card of the led suit must beat {_CODES[lead]} when it can"
        )
    elif lead is not None and any(c >> 3 == lead >> 3 for c in legal):
        rule = f"in phase 2 the led suit must be followed ({suit}, {SUIT_WORDS[suit]})"
    else:
        trump = SUITS[deal.trump_suit] if deal.trump_suit is not None else "?"
        rule = f"in phase 2 a player who cannot follow {suit} must play a trump ({trump}) when it has one"
    return f"played {code}: {rule}; {legal_text}"

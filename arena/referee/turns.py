"""The TurnRequests of one deal, kept per seat and updated in place instead of rebuilt on every move.

A seat's wire View only grows during a deal (finished tricks, drawn cards) or changes in a few scalar
fields, so each seat keeps one RefereeMessage for the whole deal: a finished trick is appended once
with its TrickResult (`trick_done`), and a turn (`request`) overwrites the per-move fields (hand, lead
card, legal cards, clocks). Cards become codes through precomputed tables, with no engine View
built per move. What the message holds is pinned to the engine: tests/referee/test_turns.py checks, at
every turn of seeded matches in each rules variant, that it equals `convert.view_to_proto` of
`Match.view(seat)` (the one source of truth for what a seat may know), bytes included.
"""

from __future__ import annotations

from arena.engine import Match, TrickRecord
from arena.engine.cards import SUITS
from arena.proto import referee_pb2 as pb
from arena.referee.clock import SeatClock
from arena.referee.convert import CODES, fill_deal_start, fill_trick_result

# The codes of the cards in each byte of a 32-bit card mask (card = suit * 8 + rank: one suit per byte).
_BYTE_CODES = tuple(
    tuple(tuple(CODES[base + r] for r in range(8) if m >> r & 1) for m in range(256)) for base in (0, 8, 16, 24)
)


def mask_codes(mask: int) -> list[str]:
    """The codes of the cards in a card mask, ascending (as `codes(cards_of(mask))`)."""
    c, d, h, s = _BYTE_CODES
    return [*c[mask & 0xFF], *d[mask >> 8 & 0xFF], *h[mask >> 16 & 0xFF], *s[mask >> 24 & 0xFF]]


class DealTurns:
    """Both seats' TurnRequests for the deal in progress of `match`. Create one per deal, after
    `start_deal`; call `trick_done` for every finished trick and `request` for every turn."""

    __slots__ = ("match", "deal", "msgs", "_fresh", "_start")

    def __init__(self, match: Match) -> None:
        deal = match.deal
        assert deal is not None
        self.match = match
        self.deal = deal
        self.msgs = (pb.RefereeMessage(), pb.RefereeMessage())
        self._fresh = [False, False]  # per seat: its message holds a TrickResult not sent yet
        self._start = [2, 2]  # per seat: 2 DealStart not sent yet, 1 sent with the last turn, 0 cleared
        for seat, msg in enumerate(self.msgs):
            fill_deal_start(msg.turn_request.deal_start, match, seat)
            v = msg.turn_request.view
            v.seat = seat
            v.deal_number = deal.index + 1
            v.dealer = deal.dealer
            v.honours.extend(deal.honours)
            v.stock_size = deal.stock_count
            v.lines.extend(match.lines)
            v.flags.extend(match.flags)
            v.multiplier = match.multiplier
            v.pot = match.pot
            v.deals_played = len(match.deals)
            v.trick_number, v.phase, v.leader = deal.trick_no, deal.phase, deal.leader
            if deal.trump_card is not None and deal.stock_count > 0:
                v.trump_card = CODES[deal.trump_card]
            if deal.trump_suit is not None:
                v.trump_suit = SUITS[deal.trump_suit]

    def trick_done(self, t: TrickRecord, only: int | None = None) -> None:
        """Append a finished trick (and the draws after it) to seat `only`'s view, or both seats'; each
        seat's next TurnRequest carries it as its TrickResult. Call it for a seat before that seat's
        next turn and before the deal moves on (it reads the deal's honours, stock and trick number)."""
        deal = self.deal
        lead, follow, honours, stock = CODES[t.lead], CODES[t.follow], deal.honours, deal.stock_count
        trick_no, phase, leader = deal.trick_no, deal.phase, deal.leader
        for seat, msg in enumerate(self.msgs) if only is None else ((only, self.msgs[only]),):
            tr = msg.turn_request
            tr.ClearField("trick_result")
            fill_trick_result(tr.trick_result, self.match, t, seat)
            self._fresh[seat] = True
            v = tr.view
            v.trick_number, v.phase, v.leader = trick_no, phase, leader
            v.tricks.add(number=t.no, leader=t.leader, lead_card=lead, follow_card=follow, winner=t.winner,
                         honours=t.honours)  # fmt: skip
            v.honours[0], v.honours[1] = honours
            v.stock_size = stock
            if t.winner_draw is not None:
                v.drawn.append(CODES[t.winner_draw if t.winner == seat else t.loser_draw])
                if stock == 0:
                    v.trump_card = ""  # the face-up trump was drawn

    def request(self, seat: int, turn_id: int, clock: SeatClock) -> pb.RefereeMessage:
        """The TurnRequest of `seat`, which is on move, with the TrickResult of the trick that ended
        since its last turn, if any. Valid until the next call for that seat."""
        deal = self.deal
        msg = self.msgs[seat]
        tr = msg.turn_request
        tr.turn_id = turn_id
        v = tr.view
        hands = deal.hands
        del v.hand[:]
        v.hand.extend(mask_codes(hands[seat]))
        table = deal.table
        v.lead_card = "" if table is None else CODES[table]
        v.opponent_hand_size = hands[1 - seat].bit_count()
        del tr.legal_cards[:]
        tr.legal_cards.extend(mask_codes(deal.legal_mask()))
        tr.move_ms, tr.bank_ms, tr.deadline_ms = int(clock.move * 1000), int(clock.bank * 1000), int(clock.deadline * 1000)
        if self._fresh[seat]:
            self._fresh[seat] = False
        else:
            tr.ClearField("trick_result")  # sent with the previous turn
        start = self._start[seat]
        if start:
            if start == 1:
                tr.ClearField("deal_start")  # it rode in this seat's first turn of the deal
            self._start[seat] = start - 1
        return msg

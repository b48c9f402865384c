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
from arena.referee.convert import CODES, fill_deal_start

# The codes of the cards in each byte of a 32-bit card mask (card = suit * 8 + rank: one suit per byte).
_BYTE_CODES = tuple(
    tuple(tuple(CODES[base + r] for r in range(8) if m >> r & 1) for m in range(256))
    for base in (0, 8, 16, 24)
)


def mask_codes(mask: int) -> list[str]:
    """The codes of the cards in a card mask, ascending (as `codes(cards_of(mask))`)."""
    c, d, h, s = _BYTE_CODES
    return [*c[mask & 0xFF], *d[mask >> 8 & 0xFF], *h[mask >> 16 & 0xFF], *s[mask >> 24 & 0xFF]]


class DealTurns:
    """Both seats' TurnRequests for the deal in progress of `match`. Create one per deal, after
    `start_deal`; call `trick_done` for every finished trick and `request` for every turn."""

    __slots__ = ("match", "deal", "msgs", "_trs", "_views", "_fresh", "_start", "_bank", "_shared")

    def __init__(self, match: Match) -> None:
        deal = match.deal
        assert deal is not None
        self.match = match
        self.deal = deal
        self.msgs = (pb.RefereeMessage(), pb.RefereeMessage())
        # the per-seat submessages, looked up once (each attribute access on a message costs a lookup)
        self._trs = (self.msgs[0].turn_request, self.msgs[1].turn_request)
        self._views = (self._trs[0].view, self._trs[1].view)
        self._fresh = [False, False]  # per seat: its message holds a TrickResult not sent yet
        self._start = [2, 2]  # per seat: 2 DealStart not sent yet, 1 sent with the last turn, 0 cleared
        self._bank: list[float | None] = [None, None]  # per seat: the bank its message's clock fields show
        self._shared: tuple | None = None  # what both seats' views take from the last finished trick
        for seat, tr in enumerate(self._trs):
            fill_deal_start(tr.deal_start, match, seat)
            v = tr.view
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
        shared = self._shared
        if shared is None or shared[0] is not t:  # the seat-independent part, built once per trick
            deal = self.deal
            trick = pb.Trick(number=t.no, leader=t.leader, lead_card=CODES[t.lead], follow_card=CODES[t.follow],
                             winner=t.winner, honours=t.honours)  # fmt: skip
            # merged into a view: appends the trick, sets the non-zero scalars (leader and a stock of
            # 0 are set apart: merging skips zeros)
            delta = pb.View(
                trick_number=deal.trick_no, phase=deal.phase, tricks=(trick,), stock_size=deal.stock_count
            )
            shared = self._shared = (t, trick, delta, tuple(deal.honours), deal.stock_count, deal.leader,
                                     deal.index + 1, deal.trump_card)  # fmt: skip
        _, trick, delta, honours, stock, leader, number, trump = shared
        for seat in (0, 1) if only is None else (only,):
            mine, theirs = (
                (t.winner_draw, t.loser_draw) if t.winner == seat else (t.loser_draw, t.winner_draw)
            )
            tr = self._trs[seat]
            tr.trick_result.CopyFrom(pb.TrickResult(
                deal_number=number, trick=trick, honours=honours, stock_size=stock,
                drawn_card="" if mine is None else CODES[mine], opponent_drew=theirs is not None,
                opponent_drawn_card=CODES[theirs] if theirs is not None and theirs == trump else "",
            ))  # fmt: skip
            self._fresh[seat] = True
            v = self._views[seat]
            v.MergeFrom(delta)
            v.leader = leader
            v.honours[:] = honours
            if mine is not None:
                v.drawn.append(CODES[mine])
                if stock == 0:
                    v.stock_size = 0
                    v.trump_card = ""  # the face-up trump was drawn

    def request(self, seat: int, turn_id: int, clock: SeatClock) -> pb.RefereeMessage:
        """The TurnRequest of `seat`, which is on move, with the TrickResult of the trick that ended
        since its last turn, if any. Valid until the next call for that seat."""
        deal = self.deal
        tr = self._trs[seat]
        tr.turn_id = turn_id
        v = self._views[seat]
        hands = deal.hands
        hand = hands[seat]
        codes = mask_codes(hand)
        v.hand[:] = codes
        table = deal.table
        v.lead_card = "" if table is None else CODES[table]
        v.opponent_hand_size = hands[1 - seat].bit_count()
        legal = deal.legal_mask()
        tr.legal_cards[:] = codes if legal == hand else mask_codes(legal)
        bank = clock.bank
        if bank != self._bank[seat]:  # the clock fields change only when the bank does
            self._bank[seat] = bank
            tr.move_ms, tr.bank_ms, tr.deadline_ms = (
                int(clock.move * 1000),
                int(bank * 1000),
                int(clock.deadline * 1000),
            )
        if self._fresh[seat]:
            self._fresh[seat] = False
        else:
            tr.ClearField("trick_result")  # sent with the previous turn
        start = self._start[seat]
        if start:
            if start == 1:
                tr.ClearField("deal_start")  # it rode in this seat's first turn of the deal
            self._start[seat] = start - 1
        return self.msgs[seat]

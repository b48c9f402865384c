"""One deal: dealing in packets, both phases, legal cards, tricks, drawing and the deal's result.

Hands are bitmasks and the hot path (`legal_mask`, `play`) uses precomputed tables (tables.py);
`playout` plays random deals fast for Monte-Carlo players; see `arena bench engine`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from arena.engine.cards import (
    ABOVE,
    CARDS_IN_BYTE,
    HONOUR,
    SUIT_MASK,
    SUIT_OF_CARD_MASK,
    card_label,
    cards_of,
    labels,
    suit_label,
)
from arena.engine.rules import Rules
from arena.engine.tables import (  # noqa: F401  (re-exported: callers import these from deal)
    BIT,
    DEAL_GETTERS,
    DEAL_POSITIONS,
    FOLLOWER_WINS,
    TRICK_RESULT,
    _new_trick,
    check_deck,
    pick_card,
)
from arena.engine.types import (  # noqa: F401  (re-exported)
    DealOutcome,
    DeckError,
    EngineError,
    IllegalMove,
    RandomBits,
    StateError,
    TrickRecord,
)


class Deal:
    """The state machine of one deal. Seats are 0 and 1; the non-dealer leads the first trick."""

    __slots__ = (
        "rules", "index", "dealer", "deck", "hands", "leader", "to_move", "table", "_raw", "_records",
        "honours", "trump_card", "trump_suit", "multiplier", "pot", "done", "outcome",
        "_stock", "_next", "_wins", "_must_head",
    )  # fmt: skip

    def __init__(
        self,
        rules: Rules,
        dealer: int,
        deck: Sequence[int],
        multiplier: int = 1,
        pot: int = 0,
        index: int = 0,
    ) -> None:
        if dealer not in (0, 1):
            raise StateError(f"dealer must be seat 0 or 1, not {dealer!r}")
        self.rules = rules
        self.index = index
        self.dealer = dealer
        self.deck = check_deck(deck)
        self.multiplier = multiplier
        self.pot = pot
        deck = self.deck
        h = rules.hand_size
        get_non, get_dealer = DEAL_GETTERS[h]
        non_mask = sum(map(BIT.__getitem__, get_non(deck)))  # distinct bits: the sum is the union
        dealer_mask = sum(map(BIT.__getitem__, get_dealer(deck)))
        self.hands = [dealer_mask, non_mask] if dealer == 0 else [non_mask, dealer_mask]
        stock = deck[2 * h :]
        if rules.trumps:
            # The top stock card is turned and goes face up to the bottom: drawn last.
            self.trump_card: int | None = stock[0]
            self.trump_suit: int | None = stock[0] >> 3
            stock = stock[1:] + stock[:1]
        else:
            self.trump_card = None
            self.trump_suit = None
        self._stock = stock  # draw order
        self._next = 0  # index of the next card to draw
        self._wins = FOLLOWER_WINS[self.trump_suit]
        self._must_head = rules.must_head_phase2
        self.leader = 1 - dealer
        self.to_move: int | None = 1 - dealer
        self.table: int | None = None  # the card led in the current trick, if any
        self._raw: list[tuple] = []  # finished tricks as plain tuples (cheap to build in playouts)
        self._records: list[TrickRecord] = []  # the same as TrickRecords, built on demand
        self.honours = [0, 0]
        self.done = False
        self.outcome: DealOutcome | None = None

    # -- state ---------------------------------------------------------------------------------------
    @property
    def stock(self) -> list[int]:
        """The cards still in the stock, in draw order (next card first; with trumps the turned card last)."""
        return list(self._stock[self._next :])

    @property
    def tricks(self) -> list[TrickRecord]:
        """The finished tricks, in order. Treat the list as read-only."""
        records, raw = self._records, self._raw
        if len(records) < len(raw):
            records.extend(_new_trick(TrickRecord, t) for t in raw[len(records) :])
        return records

    @property
    def plays(self) -> list[int]:
        """Every card played so far, in order (leader first in each trick)."""
        out = [c for t in self.tricks for c in (t.lead, t.follow)]
        if self.table is not None:
            out.append(self.table)
        return out

    @property
    def drawn(self) -> tuple[list[int], list[int]]:
        """Per seat, the cards it drew from the stock, in order."""
        out: tuple[list[int], list[int]] = ([], [])
        for t in self.tricks:
            if t.winner_draw is not None:
                out[t.winner].append(t.winner_draw)
                out[1 - t.winner].append(t.loser_draw)
        return out

    @property
    def stock_count(self) -> int:
        return len(self._stock) - self._next

    @property
    def phase(self) -> int:
        """1 while the current trick started with a non-empty stock, else 2."""
        return 1 if self._next < len(self._stock) else 2

    @property
    def trick_no(self) -> int:
        """The 1-based number of the trick in progress (16 once the deal is done)."""
        return min(len(self._raw) + 1, 16)

    def legal_mask(self) -> int:
        """The legal cards of the seat on move, as a bitmask (0 when the deal is done)."""
        if self.done:
            return 0
        hand = self.hands[self.to_move]
        lead = self.table
        if lead is None or self._next < len(self._stock):
            return hand  # leading, or following in phase 1: anything
        same = hand & SUIT_OF_CARD_MASK[lead]
        if same:
            if self._must_head:
                higher = same & ABOVE[lead]
                if higher:
                    return higher
            return same
        if self.trump_suit is not None:
            trumps = hand & SUIT_MASK[self.trump_suit]
            if trumps:
                return trumps
        return hand

    def legal_cards(self) -> list[int]:
        """The legal cards of the seat on move, ascending."""
        lead = self.table
        if lead is None or self._next < len(self._stock):  # the common case of legal_mask, inlined
            mask = self.hands[self.to_move] if not self.done else 0
        else:
            mask = self.legal_mask()
        c, d, h, s = CARDS_IN_BYTE  # cards_of, inlined: this is on every move's path
        return list(c[mask & 0xFF] + d[mask >> 8 & 0xFF] + h[mask >> 16 & 0xFF] + s[mask >> 24 & 0xFF])

    # -- moves ---------------------------------------------------------------------------------------
    def play(self, card: int) -> TrickRecord | None:
        """Play `card` for the seat on move. Returns the TrickRecord if it completed a trick.

        Raises IllegalMove (changing nothing) if the rules forbid the card.
        """
        if self.done:
            raise StateError("the deal is over: no more cards can be played")
        seat = self.to_move
        hands = self.hands
        lead = self.table
        stock = self._stock
        i = self._next
        # Leading or phase 1: any card in hand. Following in phase 2: the full rule.
        if (
            type(card) is not int
            or not 0 <= card < 32
            or not hands[seat] >> card & 1
            or (lead is not None and i >= len(stock) and not self.legal_mask() >> card & 1)
        ):
            legal = self.legal_mask()
            raise IllegalMove(self._illegal_reason(card, legal), card, cards_of(legal))
        hands[seat] ^= 1 << card
        if lead is None:
            self.table = card
            self.to_move = 1 - seat
            return None
        leader = self.leader
        winner = seat if self._wins[lead * 32 + card] else leader
        loser = 1 - winner
        won = HONOUR[lead] + HONOUR[card]
        self.honours[winner] += won
        if i < len(stock):
            winner_draw = stock[i]
            loser_draw = stock[i + 1]
            self._next = i + 2
            hands[winner] |= 1 << winner_draw
            hands[loser] |= 1 << loser_draw
        else:
            winner_draw = loser_draw = None
        raw = self._raw
        trick = _new_trick(TrickRecord, (len(raw) + 1, leader, lead, card, winner, won, winner_draw, loser_draw))
        raw.append(trick)
        self._records.append(trick)  # in step with _raw: only playout() adds plain tuples, and it ends the deal
        self.table = None
        self.leader = winner
        self.to_move = winner
        if len(raw) == 16:
            self._finish()
        return trick

    def playout(self, rng: RandomBits) -> DealOutcome:
        """Finish the deal with uniformly random legal cards; returns the outcome.

        For Monte-Carlo players and the benchmark. Every card is one `play` accepts and each legal card
        is equally likely; generators in the same state give the same deal (tests/engine/test_playout.py
        replays playouts through `play` and checks the spread). It runs a trick at a time with all state
        in local variables and holds the hands as lists: picking a random element of a list is one C call,
        where picking the k-th set bit of a mask takes a Python loop (masks win for legality, lists for
        picking). In phase 2 the lists are sorted, so a suit is a contiguous slice found by bisection.
        Each trick takes one 26-bit draw r: (r * n) >> 26 picks the lead among n cards, and the low 26 bits
        of r * n, nearly uniform whatever the lead (bias below n / 2**26), pick the follow the same way.
        (26 bits keep every product below 2**30, a one-digit Python int: the fast arithmetic path.)
        """
        if not self.done and self.table is not None:
            self.play(pick_card(self.legal_mask(), rng))
        if self.done:
            assert self.outcome is not None
            return self.outcome
        stock, result, tricks, honours = self._stock, TRICK_RESULT[self.trump_suit], self._raw, self.honours
        held = [cards_of(self.hands[0]), cards_of(self.hands[1])]  # phase 1 does not keep them sorted
        leader, first, i = self.leader, len(tricks) + 1, self._next
        size = self.rules.hand_size  # in phase 1 both hands hold exactly this many cards at each play
        bits = rng.getrandbits
        draws = zip(stock[i::2], stock[i + 1 :: 2], strict=True)  # (winner's, loser's card) per phase-1 trick
        phase2 = first + (len(stock) - i) // 2  # the first phase-2 trick
        for no, (wd, ld) in zip(range(first, phase2), draws, strict=True):  # phase 1: any card; both draw
            follower = leader ^ 1
            lead_hand, follow_hand = held[leader], held[follower]
            x = bits(26) * size  # one draw serves both: high part for the lead, low 26 bits for the follow
            k = x >> 26
            j = (x & 0x3FFFFFF) * size >> 26
            lead, follow = lead_hand[k], follow_hand[j]
            follower_wins, won = result[lead << 5 | follow]
            # each drawn card takes the place of the card its drawer just played (order is irrelevant here)
            if follower_wins:
                winner = follower
                follow_hand[j], lead_hand[k] = wd, ld
            else:
                winner = leader
                lead_hand[k], follow_hand[j] = wd, ld
            honours[winner] += won
            tricks.append((no, leader, lead, follow, winner, won, wd, ld))
            leader = winner
        # Phase 2: the rule of legal_mask. A sorted hand keeps each suit contiguous (card = suit * 8 + rank),
        # so the legal cards are a slice found by bisection, in the same order as the bits of the mask.
        must_head, trump = self._must_head, self.trump_suit
        trump_base = -1 if trump is None else trump * 8
        held[0].sort()
        held[1].sort()
        for no in range(phase2, phase2 + len(held[leader])):  # one trick per card left in each hand
            follower = leader ^ 1
            hand = held[leader]
            x = bits(26) * len(hand)
            lead = hand.pop(x >> 26)
            hand = held[follower]
            base = lead & 24  # the suit's first card
            lo = bisect_left(hand, base)
            hi = bisect_left(hand, base + 8, lo)
            if lo == hi and trump_base >= 0:  # cannot follow: a trump if it holds one
                lo = bisect_left(hand, trump_base)
                hi = bisect_left(hand, trump_base + 8, lo)
            elif lo < hi and must_head:  # following: a higher card if it holds one
                up = bisect_right(hand, lead, lo, hi)
                if up < hi:
                    lo = up
            if lo == hi:  # anything
                lo, hi = 0, len(hand)
            follow = hand.pop(lo + ((x & 0x3FFFFFF) * (hi - lo) >> 26))
            follower_wins, won = result[lead << 5 | follow]
            winner = follower if follower_wins else leader
            honours[winner] += won
            tricks.append((no, leader, lead, follow, winner, won, None, None))
            leader = winner
        self._next = len(stock)
        self.hands[0] = self.hands[1] = 0
        self.leader = leader
        self.to_move = leader
        self._finish()
        assert self.outcome is not None
        return self.outcome

    def _finish(self) -> None:
        a, b = self.honours
        self.done = True
        self.to_move = None
        if a == b:
            self.outcome = DealOutcome((a, b), None, 0, (0, 0), self.multiplier, self.pot)
            return
        winner = 0 if a > b else 1
        value = self.rules.deal_value(max(a, b))
        gained = value * self.multiplier + self.pot
        lines = (gained, 0) if winner == 0 else (0, gained)
        self.outcome = DealOutcome((a, b), winner, value, lines, self.multiplier, self.pot)

    def _illegal_reason(self, card: object, legal: int) -> str:
        deck = self.rules.deck
        legal_text = f"legal: {labels(cards_of(legal), deck)}"
        if type(card) is not int or not 0 <= card < 32:
            return f"{card!r} is not a card; {legal_text}"
        name = card_label(card, deck)
        if not self.hands[self.to_move] >> card & 1:
            return f"{name} is not in your hand; {legal_text}"
        lead = self.table
        assert lead is not None  # leading allows every card in hand
        lead_suit = suit_label(lead >> 3, deck)
        if self.hands[self.to_move] & SUIT_OF_CARD_MASK[lead]:
            if card >> 3 == lead >> 3:
                return (
                    f"{name}: phase 2 with must_head_phase2: you must beat {card_label(lead, deck)} "
                    f"with a higher {lead_suit}; {legal_text}"
                )
            return f"{name}: phase 2: you must follow suit {lead_suit}; {legal_text}"
        trump = suit_label(self.trump_suit, deck) if self.trump_suit is not None else "?"
        return f"{name}: phase 2: you cannot follow suit {lead_suit}, so you must play a trump {trump}; {legal_text}"

"""One deal: dealing in packets, both phases, legal cards, tricks, drawing and the deal's result.

Hands are bitmasks and the hot path (`legal_mask`, `play`) uses precomputed tables (tables.py);
`playout` plays random deals fast for Monte-Carlo players; see `arena bench engine`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from arena.engine.cards import (
    ABOVE,
    CARDS_HIGH,
    CARDS_LOW,
    CARDS_MID,
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
    PAIR_HONOURS,
    TRICK_RESULT,
    _new_trick,
    _new_tuple,
    check_deck,
    deck_bits,
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
        "rules", "index", "dealer", "deck", "hands", "leader", "to_move", "table", "_records", "_pending",
        "honours", "trump_card", "trump_suit", "multiplier", "pot", "done", "outcome",
        "_stock", "_next", "_end", "_wins", "_must_head",
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
        self.deck, bits = deck_bits(deck)
        self.multiplier = multiplier
        self.pot = pot
        deck = self.deck
        h = rules.hand_size
        get_non, get_dealer = DEAL_GETTERS[h]
        non_mask: int = sum(get_non(bits))  # distinct bits: the sum is the union
        dealer_mask: int = sum(get_dealer(bits))
        self.hands: list[int] = [dealer_mask, non_mask] if dealer == 0 else [non_mask, dealer_mask]
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
        self._end = len(stock)  # phase 1 while _next < _end
        self._wins = FOLLOWER_WINS[self.trump_suit]
        self._must_head = rules.must_head_phase2
        self.leader = 1 - dealer
        self.to_move: int | None = 1 - dealer
        self.table: int | None = None  # the card led in the current trick, if any
        self._records: list[TrickRecord] = []  # the finished tricks, but for those of a playout not yet built
        self._pending: tuple[int, int, list[int]] | None = None  # a playout's tricks: see _build_pending
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
        if self._pending is not None:
            self._build_pending()
        return self._records

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
                assert t.loser_draw is not None  # both draw, or neither
                out[t.winner].append(t.winner_draw)
                out[1 - t.winner].append(t.loser_draw)
        return out

    @property
    def stock_count(self) -> int:
        return self._end - self._next

    @property
    def phase(self) -> int:
        """1 while the current trick started with a non-empty stock, else 2."""
        return 1 if self._next < self._end else 2

    @property
    def trick_no(self) -> int:
        """The 1-based number of the trick in progress (16 once the deal is done)."""
        played = len(self._records) + (len(self._pending[2]) if self._pending is not None else 0)
        return min(played + 1, 16)

    def legal_mask(self) -> int:
        """The legal cards of the seat on move, as a bitmask (0 when the deal is done)."""
        if self.done:
            return 0
        seat = self.to_move
        assert seat is not None  # None only once the deal is done
        hand = self.hands[seat]
        lead = self.table
        if lead is None or self._next < self._end:
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
        # On every move's path: legal_mask's common case and cards_of are inlined, and the list is built
        # by unpacking the three chunks' tuples of cards_of (no intermediate tuples).
        if self.table is None or self._next < self._end:
            seat = self.to_move  # None only once the deal is done
            mask = self.hands[seat] if seat is not None else 0
        else:
            mask = self.legal_mask()
        return [*CARDS_LOW[mask & 0x7FF], *CARDS_MID[mask >> 11 & 0x7FF], *CARDS_HIGH[mask >> 22 & 0x3FF]]

    # -- moves ---------------------------------------------------------------------------------------
    def play(self, card: int) -> TrickRecord | None:
        """Play `card` for the seat on move. Returns the TrickRecord if it completed a trick.

        Raises IllegalMove (changing nothing) if the rules forbid the card.
        """
        if self.done:
            raise StateError("the deal is over: no more cards can be played")
        seat = self.to_move
        assert seat is not None  # None only once the deal is done
        hands = self.hands
        hand = hands[seat]
        lead = self.table
        # In hand: `hand >> card & 1` also turns away cards above 31 (hands are 32-bit), and raises for a
        # negative card or a non-int; `type` turns away bools. Following in phase 2: the full rule.
        try:
            held = hand >> card & 1 and type(card) is int
        except (TypeError, ValueError):
            held = False
        if not held or (lead is not None and self._next >= self._end and not self.legal_mask() >> card & 1):
            legal = self.legal_mask()
            raise IllegalMove(self._illegal_reason(card, legal), card, cards_of(legal))
        hands[seat] = hand ^ 1 << card
        if lead is None:
            self.table = card
            self.to_move = 1 - seat
            return None
        leader = self.leader
        pair = lead << 5 | card
        winner = seat if self._wins[pair] else leader
        won = PAIR_HONOURS[pair]
        self.honours[winner] += won
        i = self._next
        winner_draw: int | None
        loser_draw: int | None
        if i < self._end:
            stock = self._stock
            winner_draw = stock[i]
            loser_draw = stock[i + 1]
            self._next = i + 2
            hands[winner] |= 1 << winner_draw
            hands[1 - winner] |= 1 << loser_draw
        else:
            winner_draw = loser_draw = None
        records = self._records
        trick = _new_trick(
            TrickRecord, (len(records) + 1, leader, lead, card, winner, won, winner_draw, loser_draw)
        )
        records.append(trick)
        self.table = None
        self.leader = self.to_move = winner
        if len(records) == 16:
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
        The loops keep the leader's hand and honours in `a`, `ha` and the follower's in `b`, `hb`, swapping
        them when the follower wins, and record each trick as one int, `lead << 5 | follow`: the trick
        records are built from those only when someone asks for them (`tricks`).
        """
        if not self.done and self.table is not None:
            self.play(pick_card(self.legal_mask(), rng))
        if self.done:
            assert self.outcome is not None
            return self.outcome
        leader, hands, honours, stock, i = self.leader, self.hands, self.honours, self._stock, self._next
        a, b = cards_of(hands[leader]), cards_of(hands[1 - leader])  # phase 1 does not keep them sorted
        first = a
        ha, hb = honours[leader], honours[1 - leader]
        wins, won = self._wins, PAIR_HONOURS
        pairs: list[int] = []
        size = self.rules.hand_size  # in phase 1 both hands hold exactly this many cards at each play
        bits = rng.getrandbits
        # Phase 1: any card; the winner draws the first stock card, the loser the second. Each drawn card
        # takes the place of the card its drawer just played (the order of an unsorted hand is irrelevant).
        for wd, ld in zip(stock[i::2], stock[i + 1 :: 2], strict=True):
            x = bits(26) * size  # one draw serves both: high part for the lead, low 26 bits for the follow
            k = x >> 26
            j = (x & 0x3FFFFFF) * size >> 26
            pair = a[k] << 5 | b[j]
            pairs.append(pair)
            if wins[pair]:  # the follower wins: it draws first and leads the next trick
                b[j] = wd
                a[k] = ld
                a, b = b, a
                ha, hb = hb, ha
            else:
                a[k] = wd
                b[j] = ld
            ha += won[pair]
        # Phase 2: the rule of legal_mask. A sorted hand keeps each suit contiguous (card = suit * 8 + rank),
        # so the legal cards are a slice found by bisection, in the same order as the bits of the mask.
        must_head, trump = self._must_head, self.trump_suit
        trump_base = -1 if trump is None else trump * 8
        a.sort()
        b.sort()
        for _ in range(len(a)):  # one trick per card left in each hand
            x = bits(26) * len(a)
            lead = a.pop(x >> 26)
            base = lead & 24  # the suit's first card
            lo = bisect_left(b, base)
            hi = bisect_left(b, base + 8, lo)
            if lo == hi:  # cannot follow: a trump if it holds one, else anything
                if trump_base >= 0:
                    lo = bisect_left(b, trump_base)
                    hi = bisect_left(b, trump_base + 8, lo)
                if lo == hi:
                    lo, hi = 0, len(b)
            elif must_head:  # following: a higher card if it holds one
                up = bisect_right(b, lead, lo, hi)
                if up < hi:
                    lo = up
            pair = lead << 5 | b.pop(lo + ((x & 0x3FFFFFF) * (hi - lo) >> 26))
            pairs.append(pair)
            if wins[pair]:
                a, b = b, a
                ha, hb = hb, ha
            ha += won[pair]
        leader = leader if a is first else 1 - leader  # the lists stay with their seats
        honours[leader], honours[1 - leader] = ha, hb
        self._pending = (self.leader, i, pairs)  # the leader of the first trick
        self._next = self._end
        hands[0] = hands[1] = 0
        self.leader = leader
        self.to_move = leader
        self._finish()
        assert self.outcome is not None
        return self.outcome

    def _build_pending(self) -> None:
        """Turn a playout's tricks (`_pending`: its first leader, stock index and `lead << 5 | follow`
        per trick) into TrickRecords, as `play` would have built them."""
        assert self._pending is not None
        leader, i, pairs = self._pending
        self._pending = None
        records, stock, end, wins = self._records, self._stock, self._end, self._wins
        winner_draw: int | None
        loser_draw: int | None
        for pair in pairs:
            winner = 1 - leader if wins[pair] else leader
            if i < end:
                winner_draw, loser_draw = stock[i], stock[i + 1]
                i += 2
            else:
                winner_draw = loser_draw = None
            no = len(records) + 1
            trick = (no, leader, pair >> 5, pair & 31, winner, PAIR_HONOURS[pair], winner_draw, loser_draw)
            records.append(_new_trick(TrickRecord, trick))
            leader = winner

    def _finish(self) -> None:
        a, b = self.honours
        self.done = True
        self.to_move = None
        multiplier, pot = self.multiplier, self.pot
        # tuple.__new__ builds the NamedTuple without its Python-level __new__ (once per deal, every playout)
        if a == b:
            self.outcome = _new_tuple(DealOutcome, ((a, b), None, 0, (0, 0), multiplier, pot))
        elif a > b:
            value = self.rules.deal_value(a)
            self.outcome = _new_tuple(
                DealOutcome, ((a, b), 0, value, (value * multiplier + pot, 0), multiplier, pot)
            )
        else:
            value = self.rules.deal_value(b)
            self.outcome = _new_tuple(
                DealOutcome, ((a, b), 1, value, (0, value * multiplier + pot), multiplier, pot)
            )

    def _illegal_reason(self, card: object, legal: int) -> str:
        deck = self.rules.deck
        legal_text = f"legal: {labels(cards_of(legal), deck)}"
        if type(card) is not int or not 0 <= card < 32:
            return f"{card!r} is not a card; {legal_text}"
        name = card_label(card, deck)
        seat = self.to_move
        assert seat is not None  # a card is refused only while the deal runs
        if not self.hands[seat] >> card & 1:
            return f"{name} is not in your hand; {legal_text}"
        lead = self.table
        assert lead is not None  # leading allows every card in hand
        lead_suit = suit_label(lead >> 3, deck)
        if self.hands[seat] & SUIT_OF_CARD_MASK[lead]:
            if card >> 3 == lead >> 3:
                return (
                    f"{name}: phase 2 with must_head_phase2: you must beat {card_label(lead, deck)} "
                    f"with a higher {lead_suit}; {legal_text}"
                )
            return f"{name}: phase 2: you must follow suit {lead_suit}; {legal_text}"
        trump = suit_label(self.trump_suit, deck) if self.trump_suit is not None else "?"
        return f"{name}: phase 2: you cannot follow suit {lead_suit}, so you must play a trump {trump}; {legal_text}"

"""Card arithmetic for the tactician: codes, ranks, honours, who wins a trick, and the position it
reasons about.

A sample bot sees only the wire contract (text codes such as "AS", "TD", "7H"), so it carries its
own small card model instead of importing the arena's engine. Cards are ints `suit * 8 + rank`
(suits C D H S = 0..3, ranks 7 8 9 T J Q K A = 0..7), which keeps the endgame search cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUITS = "CDHS"
RANKS = "789TJQKA"
TEN = 3  # rank index of the ten: T J Q K A (>= TEN) are honours
ALL_CARDS = frozenset(range(32))


def parse(code: str) -> int:
    """ "TS" -> 27."""
    return SUITS.index(code[1]) * 8 + RANKS.index(code[0])


def code(card: int) -> str:
    """27 -> "TS"."""
    return RANKS[card & 7] + SUITS[card >> 3]


def suit(card: int) -> int:
    return card >> 3


def rank(card: int) -> int:
    return card & 7


def points(card: int) -> int:
    """Honours (T J Q K A) are worth one point, blanks (9 8 7) nothing."""
    return 1 if card & 7 >= TEN else 0


def beats(follow: int, lead: int, trump: int | None) -> bool:
    """True when the follower's card takes the trick: a higher card of the suit led, or (trumps
    variant) a trump on a non-trump lead."""
    if follow >> 3 == lead >> 3:
        return follow > lead
    return trump is not None and follow >> 3 == trump


def legal_follow(
    hand: frozenset[int], lead: int, phase2: bool, trump: int | None, must_head: bool
) -> list[int]:
    """The follower's legal cards (docs/rules.md §3 and §7): anything in phase 1; in phase 2 follow suit
    (and beat the lead when `must_head` and able), else a trump if held, else anything."""
    if not phase2:
        return sorted(hand)
    same = [c for c in hand if c >> 3 == lead >> 3]
    if same:
        if must_head:
            higher = [c for c in same if c > lead]
            if higher:
                return sorted(higher)
        return sorted(same)
    if trump is not None:
        trumps = [c for c in hand if c >> 3 == trump]
        if trumps:
            return sorted(trumps)
    return sorted(hand)


def deal_value(my_points: int) -> int:
    """The deal's worth to me under Tendler scoring, signed: +1/+2/+3 for 11-14/15-19/20 points,
    the mirror image when the opponent reaches those totals, 0 for a 10-10 standoff."""

    def value(p: int) -> int:
        return 3 if p == 20 else 2 if p >= 15 else 1

    if my_points >= 11:
        return value(my_points)
    if my_points <= 9:
        return -value(20 - my_points)
    return 0


@dataclass(frozen=True)
class Position:
    """What the tactician knows at its turn: everything docs/rules.md §8 lets it see."""

    hand: frozenset[int]
    legal: tuple[int, ...]
    lead: int | None  # the opponent's card if I follow, else None
    seen: frozenset[int]  # every card played face up in this deal (including `lead`)
    stock: int  # cards left in the stock
    my_points: int = 0
    opp_points: int = 0
    trump: int | None = None  # the trump suit in the trumps variant
    trump_card: int | None = None  # the face-up trump while it lies under the stock
    must_head: bool = False
    drawn: frozenset[int] = field(default_factory=frozenset)

    @property
    def phase2(self) -> bool:
        return self.stock == 0

    @property
    def unseen(self) -> frozenset[int]:
        """Cards I cannot place: the opponent's hand plus the stock."""
        return ALL_CARDS - self.hand - self.seen

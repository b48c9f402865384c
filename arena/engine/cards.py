"""Cards as small ints and hands as 32-bit masks, with the precomputed tables the engine leans on.

A card is `suit * 8 + rank`: suits C D H S = 0..3, ranks 7 8 9 T J Q K A = 0..7. A higher rank number
beats a lower one of the same suit, and ranks >= 3 (T J Q K A) are honours worth one point each.
A set of cards is an int with bit `1 << card` set for each card, so suit filters are one `&`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "789TJQKA"
FULL_DECK = (1 << 32) - 1
HONOUR_RANK = 3  # T and above

SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
RANK_LABELS = ("7", "8", "9", "10", "J", "Q", "K", "A")
GERMAN_SUITS = ("Eichel", "Schellen", "Herz", "Grün")
GERMAN_RANKS = ("7", "8", "9", "10", "Unter", "Ober", "König", "Daus")
DECKS = ("french", "german")

# SUIT_MASK[s]: every card of suit s. SUIT_OF_CARD_MASK[c]: every card of c's suit.
SUIT_MASK = tuple(0xFF << (8 * s) for s in range(4))
SUIT_OF_CARD_MASK = tuple(SUIT_MASK[c >> 3] for c in range(32))
# ABOVE[c]: the cards of c's suit that beat c.
ABOVE = tuple(SUIT_MASK[c >> 3] & ~((2 << c) - 1) for c in range(32))
# HONOUR[c]: 1 for T J Q K A, else 0. HONOUR_MASK: all 20 honours.
HONOUR = tuple(1 if c & 7 >= HONOUR_RANK else 0 for c in range(32))
HONOUR_MASK = sum(1 << c for c in range(32) if HONOUR[c])

# CARDS_IN_BYTE[k][b]: the cards of suit k whose bits are set in the 8-bit value b, ascending.
CARDS_IN_BYTE = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(4)
)


def _cards_in_chunk(first: int, width: int) -> tuple[tuple[int, ...], ...]:
    """table[b]: the cards first..first+width-1 whose bits are set in b, ascending (built bit by bit)."""
    table: list[tuple[int, ...]] = [()]
    for i in range(width):
        table += [t + (first + i,) for t in table]  # b | 1 << i: the new highest card goes last
    return tuple(table)


# cards_of reads a mask in three chunks (cards 0-10, 11-21, 22-31): one lookup fewer than by suits, and
# the tables stay small (5,120 tuples).
CARDS_LOW, CARDS_MID, CARDS_HIGH = _cards_in_chunk(0, 11), _cards_in_chunk(11, 11), _cards_in_chunk(22, 10)


class CardError(ValueError):
    """A text code that is not one of the 32 cards."""


def _build_code_table() -> dict[str, int]:
    table: dict[str, int] = {}
    for s, suit in enumerate(SUITS):
        for r, rank in enumerate(RANKS):
            card = s * 8 + r
            for rank_text in {rank, rank.lower()} | ({"10"} if rank == "T" else set()):
                for suit_text in (suit, suit.lower()):
                    table[rank_text + suit_text] = card
    return table


_CODES = _build_code_table()


def parse_card(code: str) -> int:
    """`"TS"` -> 31. Accepts lower case and `10` for the ten; anything else raises CardError. Wire
    codes only: the machine-readable forms (elfern/1 JSON, protobuf) never carry labels."""
    try:
        return _CODES[code.strip()]
    except (KeyError, AttributeError):
        raise CardError(
            f"{code!r} is not a card: write a rank from A K Q J T 9 8 7 and a suit from C D H S, e.g. 'TS'"
        ) from None


def card_code(card: int) -> str:
    """31 -> `"TS"`: the wire form of a card (protobuf and elfern/1 JSON)."""
    return RANKS[card & 7] + SUITS[card >> 3]


def card_label(card: int, deck: str = "french") -> str:
    """31 -> `"♠10"` (French deck) or `"Grün 10"` (German deck): the form people read."""
    if deck == "german":
        return f"{GERMAN_SUITS[card >> 3]} {GERMAN_RANKS[card & 7]}"
    return SUIT_SYMBOLS[card >> 3] + RANK_LABELS[card & 7]


def code_label(code: str, deck: str = "french") -> str:
    """`"TS"` -> `"♠10"`: a wire code as people read it, in the terminal and on the web (the one
    direction from the wire to people; `label_code` is the other). CardError for a non-card."""
    return card_label(parse_card(code), deck)


def label_code(text: str) -> str:
    """`"♠10"` (or `"Grün 10"`, or a code) -> `"TS"`: what a person wrote, as the wire code that
    machine-readable forms carry (JSON, logs, replay files). CardError for a non-card."""
    card = _LABELS.get(text.strip().lower()) if isinstance(text, str) else None
    return card_code(parse_card(text) if card is None else card)


_WIRE_CODE = re.compile(r"(?<![\w@])(?:[789TJQKA]|10)[CDHS](?![\w@])")


def labels_in(text: str, deck: str = "french") -> str:
    """The arena's own sentence about cards (an illegal move's verdict detail, written in wire codes
    for the bot) as a person reads it: each standalone code -> its label. Only for the arena's
    sentences: a bot's own text is quoted as it wrote it."""
    return _WIRE_CODE.sub(lambda m: code_label(m.group(0), deck), text)


def suit_label(suit: int, deck: str = "french") -> str:
    """0 -> `"♣"` or `"Eichel"`."""
    return GERMAN_SUITS[suit] if deck == "german" else SUIT_SYMBOLS[suit]


def suit_of(card: int) -> int:
    return card >> 3


def rank_of(card: int) -> int:
    return card & 7


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask of some cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def cards_of(mask: int) -> list[int]:
    """The cards of a bitmask, ascending (clubs 7 first)."""
    return [*CARDS_LOW[mask & 0x7FF], *CARDS_MID[mask >> 11 & 0x7FF], *CARDS_HIGH[mask >> 22 & 0x3FF]]


def honours_in(mask: int) -> int:
    """How many honour points a set of cards holds."""
    return (mask & HONOUR_MASK).bit_count()


def labels(cards: Iterable[int], deck: str = "french") -> str:
    """`"♥7 ♥A"`: a space-separated list for messages."""
    return " ".join(card_label(c, deck) for c in cards)


# the labels people read (both decks), lower-cased, for `label_code`
_LABELS = {card_label(c, deck).lower(): c for c in range(32) for deck in DECKS}

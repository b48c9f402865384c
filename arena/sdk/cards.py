"""Card helpers on the wire's text codes ("AS", "TD", "7H"), for bots: no engine import needed."""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "789TJQKA"  # low to high


def suit(card: str) -> str:
    """'TS' -> 'S'."""
    return card[-1]


def rank(card: str) -> str:
    """'TS' -> 'T'."""
    return card[:-1]


def rank_value(card: str) -> int:
    """0 for a 7 up to 7 for an ace: higher beats lower within a suit."""
    return RANKS.index(card[:-1])


def is_honour(card: str) -> bool:
    """T J Q K A are honours, worth one point each."""
    return rank_value(card) >= 3


def honours(cards: Iterable[str]) -> int:
    return sum(1 for c in cards if is_honour(c))


def beats(follow: str, lead: str, trump_suit: str = "") -> bool:
    """Whether `follow` played on `lead` wins the trick: a higher card of the led suit, or a trump."""
    if suit(follow) == suit(lead):
        return rank_value(follow) > rank_value(lead)
    return bool(trump_suit) and suit(follow) == trump_suit


def of_suit(cards: Iterable[str], s: str) -> list[str]:
    return [c for c in cards if suit(c) == s]


def by_rank(cards: Iterable[str]) -> list[str]:
    """Lowest rank first (ties by suit)."""
    return sorted(cards, key=lambda c: (rank_value(c), suit(c)))

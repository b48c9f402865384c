"""Greedy play: win honours when that is cheap, never give anything away that need not go.

No memory, no look-ahead: it looks only at its hand, the legal cards and the card led.
- Following: beat a led honour with the lowest card that does it (two points for the price of my
  cheapest winner); otherwise throw the cheapest card that loses, a low blank before any honour.
- Leading: cash an ace (nothing can beat it), else lead the lowest blank, else the lowest card.
"""

from __future__ import annotations

RANKS = "789TJQKA"


def _rank(card: str) -> int:
    return RANKS.index(card[0])


def _honour(card: str) -> bool:
    return _rank(card) >= 3


def _beats(follow: str, lead: str, trump_suit: str) -> bool:
    if follow[1] == lead[1]:
        return _rank(follow) > _rank(lead)
    return bool(trump_suit) and follow[1] == trump_suit


def _cheapest(cards: list[str]) -> str:
    """Blanks before honours, low before high; the code breaks ties so play is deterministic."""
    return min(cards, key=lambda c: (_honour(c), _rank(c), c))


def choose(legal: list[str], lead: str = "", trump_suit: str = "") -> str:
    """The card to play, from the legal cards and the card led ("" when leading)."""
    if not lead:
        aces = sorted(c for c in legal if c[0] == "A")
        return aces[0] if aces else _cheapest(legal)
    winners = [c for c in legal if _beats(c, lead, trump_suit)]
    if winners and _honour(lead):
        return min(winners, key=lambda c: (_rank(c), c))
    losers = [c for c in legal if c not in winners]
    if losers:
        return _cheapest(losers)
    # Only winners left: win with the cheapest (winning cashes the honour anyway).
    return min(winners, key=lambda c: (_rank(c), c))

"""Greedy play: win honours when that is cheap, never give anything away that need not go.

No memory, no look-ahead: it looks only at the legal cards and the card led.
- Following: beat a led honour with the lowest card that does it (two points for the price of my
  cheapest winner); otherwise throw the cheapest card that loses, a low blank before any honour.
- Leading: cash an ace (nothing can beat it), else lead the lowest blank, else the lowest card.
"""

from __future__ import annotations

from arena.sdk import cards


def _cheapest(options: list[str]) -> str:
    """Blanks before honours, low before high; the code breaks ties so play is deterministic."""
    return min(options, key=lambda c: (cards.is_honour(c), cards.rank_value(c), c))


def _lowest(options: list[str]) -> str:
    return min(options, key=lambda c: (cards.rank_value(c), c))


def choose(legal: list[str] | tuple[str, ...], lead: str | None = None, trump_suit: str | None = None) -> str:
    """The card to play, from the legal cards and the card led (None when leading)."""
    if not lead:
        aces = sorted(c for c in legal if cards.rank(c) == "A")
        return aces[0] if aces else _cheapest(list(legal))
    winners = [c for c in legal if cards.beats(c, lead, trump_suit or "")]
    if winners and cards.is_honour(lead):
        return _lowest(winners)
    losers = [c for c in legal if c not in winners]
    # Only winners left: win with the cheapest (winning cashes the honour anyway).
    return _cheapest(losers) if losers else _lowest(winners)

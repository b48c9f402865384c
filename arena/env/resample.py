"""A deal's pack resampled from one seat's knowledge: OpenSpiel's `resample_from_infostate`.

The seat keeps every card it has seen where it was: its own dealt cards, its own draws, the turned trump.
The other cards are shuffled over the other positions of the pack, under the one constraint the play
so far imposes: a card the opponent played at trick t must lie in a position the opponent held before
trick t (its dealt cards, or a draw after an earlier trick). Phase 2 adds nothing: once the stock is
empty every hidden card is the opponent's, so its hand is the same set and its plays stay legal. The
plays themselves, and so every trick's winner and draw, are unchanged; the engine replays them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena.engine import Deal, Rules
from arena.engine.cards import cards_of

NEVER = 1 << 30  # a position the opponent has not held (still in the stock)


def _pick(n: int, sampler: Callable[[], float]) -> int:
    return min(int(sampler() * n), n - 1)


def resample_deck(
    rules: Rules,
    dealer: int,
    deck: Sequence[int],
    plays: Sequence[int],
    seat: int,
    sampler: Callable[[], float],
) -> list[int]:
    """A pack `seat` cannot tell from `deck` after `plays` (the cards played so far, in order), drawn at
    random with `sampler` (floats in [0, 1))."""
    deal = Deal(rules, dealer, deck)
    other = 1 - seat
    known = set(cards_of(deal.hands[seat]))
    # card -> the trick after which the opponent held it (0: dealt to it)
    held_since = dict.fromkeys(cards_of(deal.hands[other]), 0)
    if deal.trump_card is not None:
        known.add(deal.trump_card)
    played_by_other: list[tuple[int, int]] = []  # (trick number, card)
    for card in plays:
        if deal.to_move == other:
            played_by_other.append((deal.trick_no, card))
        trick = deal.play(card)
        if trick is not None and trick.winner_draw is not None:
            assert trick.loser_draw is not None
            mine, theirs = (
                (trick.winner_draw, trick.loser_draw)
                if trick.winner == seat
                else (trick.loser_draw, trick.winner_draw)
            )
            known.add(mine)
            held_since.setdefault(theirs, trick.no)
    position = {card: i for i, card in enumerate(deck)}
    hidden = [i for i, card in enumerate(deck) if card not in known]
    since = {i: held_since.get(deck[i], NEVER) for i in hidden}
    out = list(deck)
    free = set(hidden)
    played_by_other = [(t, c) for t, c in played_by_other if c not in known]  # the trump stays put
    for trick_no, card in sorted(played_by_other):  # earliest first: later cards may use any earlier slot
        slots = sorted(i for i in free if since[i] < trick_no)
        slot = slots[_pick(len(slots), sampler)]
        out[slot] = card
        free.discard(slot)
    placed = {card for _, card in played_by_other}
    rest = [deck[i] for i in hidden if deck[i] not in placed]
    slots = sorted(free)
    for slot in slots:
        out[slot] = rest.pop(_pick(len(rest), sampler))
    assert sorted(out) == sorted(deck) and all(out[position[c]] == c for c in known)
    return out

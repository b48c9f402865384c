"""The Elfern rules engine: pure, deterministic, no I/O. The API is documented in docs/engine.md."""

from arena.engine.botseed import bot_seed
from arena.engine.cards import (
    RANKS,
    SUITS,
    CardError,
    card_code,
    card_label,
    cards_of,
    code_label,
    honours_in,
    label_code,
    mask_of,
    parse_card,
)
from arena.engine.commitment import CommitmentError, check_commitment, deck_commitment
from arena.engine.deal import Deal
from arena.engine.match import DealSummary, Match
from arena.engine.rng import SplitMix64, deal_deck, dealer_draw
from arena.engine.rules import Rules, RulesError
from arena.engine.tables import check_deck
from arena.engine.types import DealOutcome, DeckError, EngineError, IllegalMove, StateError, TrickRecord
from arena.engine.view import View

__all__ = [
    "bot_seed",
    "check_commitment",
    "deck_commitment",
    "RANKS",
    "SUITS",
    "CardError",
    "CommitmentError",
    "Deal",
    "DealOutcome",
    "DealSummary",
    "DeckError",
    "EngineError",
    "IllegalMove",
    "Match",
    "Rules",
    "RulesError",
    "SplitMix64",
    "StateError",
    "TrickRecord",
    "View",
    "card_code",
    "card_label",
    "code_label",
    "cards_of",
    "check_deck",
    "deal_deck",
    "dealer_draw",
    "honours_in",
    "mask_of",
    "label_code",
    "parse_card",
]

"""The one table of the wire `View`'s fields: what each is in the engine's View and in what form it
travels. The referee's conversion (`arena.referee.convert.fill_view`) and the SDK's View
(`arena.sdk.view.View.from_request`) are driven by it, so a new View field is one row here (and its
field in referee.proto and the engine's View); tests/referee/test_view_fields.py fails on a field of
the message that is in no row. The per-move path (`arena.referee.turns`) is hand-written for speed and
pinned to `fill_view`, byte for byte, by tests/referee/test_turns.py.
"""

from __future__ import annotations

# kinds: how a value travels (engine -> wire -> SDK)
INT = "int"  # a number, as it is
NUMBER = "number"  # a 0-based engine index sent 1-based
PAIR = "pair"  # one number per seat: repeated on the wire, a (seat 0, seat 1) tuple in the SDK
CARDS = "cards"  # engine ints -> repeated card codes -> a tuple of codes
CARD = "card"  # an engine int or None -> a code or "" -> a code or None
SUIT = "suit"  # an engine suit index or None -> "C", "D", "H", "S" or "" -> a letter or None

#: (field of the wire View, and of the SDK's View, the engine View's attribute, kind)
VIEW_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("seat", "seat", INT),
    ("deal_number", "deal_index", NUMBER),
    ("trick_number", "trick_no", INT),
    ("phase", "phase", INT),
    ("dealer", "dealer", INT),
    ("leader", "leader", INT),
    ("hand", "hand", CARDS),
    ("lead_card", "table", CARD),
    ("honours", "honours", PAIR),
    ("stock_size", "stock_count", INT),
    ("trump_card", "trump_card", CARD),
    ("trump_suit", "trump_suit", SUIT),
    ("drawn", "drawn", CARDS),
    ("opponent_hand_size", "opponent_hand_size", INT),
    ("lines", "lines", PAIR),
    ("flags", "flags", PAIR),
    ("multiplier", "multiplier", INT),
    ("pot", "pot", INT),
)
#: the View's fields outside the table: a message per finished trick, and a count the engine's View
#: does not hold (the match's finished deals, passed by the caller)
OTHER_VIEW_FIELDS = ("tricks", "deals_played")

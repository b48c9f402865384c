"""The one encoding of a seat's view for learning: a flat float32 tensor, a string and an action mask,
all built from the engine's `View` (`Match.view(seat)`, docs/rules.md §8) and nothing else.

OpenSpiel's observation tensor, PettingZoo's `observation` and Gymnasium's observation are this tensor;
the action mask is `View.legal` over the 32 cards (action = the engine's card int, suit * 8 + rank).
`decode` turns a tensor back into the exact `View`, so tests/env/test_env_encoding.py can check that
what an environment shows equals the view the referee sends for the same state.

Layout (ENCODING_VERSION 1; every slot is listed in `LAYOUT`, in order):
- categorical fields are one-hot (all zeros for None): seat, status, dealer, leader, to_move, trump_suit,
  match_winner, the card led (`table`), the turned trump card;
- card sets are 32 bits, bit i for card i: hand, legal;
- counts are the plain integer as a float: deal_index, phase, trick_no, stock_count, honours,
  opponent_hand_size, lines, flags, multiplier, pot;
- each of the 16 tricks is a block: present, leader (2), lead (32), follow (32), winner (2);
- each of the seat's draws (at most 12, with hands of 4) is a one-hot card, in the order drawn.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.engine.cards import SUITS, card_code, parse_card
from arena.engine.rules import TRICKS_PER_DEAL
from arena.engine.view import BEFORE_DEAL, DEAL_OVER, MATCH_OVER, PLAYING, View

ENCODING_VERSION = 1
NUM_CARDS = 32
STATUSES = (BEFORE_DEAL, PLAYING, DEAL_OVER, MATCH_OVER)
#: the most cards one seat draws in a deal: one per phase-1 trick, and the smallest hand (4) has 12
MAX_DRAWS = TRICKS_PER_DEAL - 4
TRICK_SIZE = 1 + 2 + NUM_CARDS + NUM_CARDS + 2

#: (name, size) of each slot of the tensor, in order
LAYOUT: tuple[tuple[str, int], ...] = (
    ("seat", 2),
    ("status", len(STATUSES)),
    ("deal_index", 1),
    ("dealer", 2),
    ("leader", 2),
    ("to_move", 2),
    ("phase", 1),
    ("trick_no", 1),
    ("hand", NUM_CARDS),
    ("table", NUM_CARDS),
    ("tricks", TRICKS_PER_DEAL * TRICK_SIZE),
    ("stock_count", 1),
    ("drawn", MAX_DRAWS * NUM_CARDS),
    ("trump_card", NUM_CARDS),
    ("trump_suit", 4),
    ("honours", 2),
    ("opponent_hand_size", 1),
    ("legal", NUM_CARDS),
    ("lines", 2),
    ("flags", 2),
    ("multiplier", 1),
    ("pot", 1),
    ("match_winner", 2),
)


def _offsets() -> dict[str, slice]:
    out, at = {}, 0
    for name, size in LAYOUT:
        out[name] = slice(at, at + size)
        at += size
    return out


SLICES = _offsets()
SIZE = sum(size for _, size in LAYOUT)
#: the largest value any slot can hold (lines and the deal counter grow with the match)
HIGH = 1e9

Tensor = npt.NDArray[np.float32]


def encode(view: View, out: Tensor | None = None) -> Tensor:
    """The view as a float32 vector of `SIZE` (written into `out` when given). The ones are gathered
    as indices and written with one numpy call, the counts with another: a numpy call per slot would
    cost more than the rest of an environment's step."""
    t = np.zeros(SIZE, np.float32) if out is None else out
    if out is not None:
        t.fill(0)
    ones = [_SEAT + view.seat, _STATUS + STATUSES.index(view.status), _DEALER + view.dealer,
            _LEADER + view.leader]  # fmt: skip
    ones += [_HAND + c for c in view.hand]
    ones += [_LEGAL + c for c in view.legal]
    if view.to_move is not None:
        ones.append(_TO_MOVE + view.to_move)
    if view.table is not None:
        ones.append(_TABLE + view.table)
    for k, (leader, lead, follow, winner) in enumerate(view.tricks):
        at = _TRICKS + k * TRICK_SIZE
        ones += (
            at,
            at + 1 + leader,
            at + 3 + lead,
            at + 3 + NUM_CARDS + follow,
            at + 3 + 2 * NUM_CARDS + winner,
        )
    ones += [_DRAWN + k * NUM_CARDS + card for k, card in enumerate(view.drawn)]
    if view.trump_card is not None:
        ones.append(_TRUMP_CARD + view.trump_card)
    if view.trump_suit is not None:
        ones.append(_TRUMP_SUIT + view.trump_suit)
    if view.match_winner is not None:
        ones.append(_MATCH_WINNER + view.match_winner)
    t[ones] = 1
    t[_COUNTS] = (
        view.deal_index, view.phase, view.trick_no, view.stock_count, *view.honours, view.opponent_hand_size,
        *view.lines, *view.flags, view.multiplier, view.pot,
    )  # fmt: skip
    return t


_SEAT, _STATUS, _DEALER, _LEADER, _TO_MOVE, _HAND, _LEGAL, _TABLE, _TRICKS, _DRAWN = (
    SLICES[n].start
    for n in ("seat", "status", "dealer", "leader", "to_move", "hand", "legal", "table", "tricks", "drawn")
)
_TRUMP_CARD, _TRUMP_SUIT, _MATCH_WINNER = (
    SLICES[n].start for n in ("trump_card", "trump_suit", "match_winner")
)
#: the count slots, in the order `encode` writes them
_COUNTS = np.concatenate([
    np.arange(SLICES[n].start, SLICES[n].stop)
    for n in ("deal_index", "phase", "trick_no", "stock_count", "honours", "opponent_hand_size", "lines", "flags",
              "multiplier", "pot")
])  # fmt: skip


def action_mask(view: View) -> npt.NDArray[np.int8]:
    """1 for each legal card of the seat (all zeros when it is not on move)."""
    mask = np.zeros(NUM_CARDS, np.int8)
    if view.legal:
        mask[np.asarray(view.legal)] = 1
    return mask


def to_string(view: View) -> str:
    """The view as text: its canonical JSON (`View.to_json`, cards as wire codes)."""
    return view.to_json().decode()


def decode(tensor: Any) -> View:
    """The View a tensor of `encode` was made from (exact: every field round-trips)."""
    t = np.asarray(tensor, np.float32)
    if t.shape != (SIZE,):
        raise ValueError(f"an Elfern observation has shape ({SIZE},), not {t.shape}")
    s = SLICES

    def hot(name: str, part: Any = None) -> int | None:
        block = t[s[name]] if part is None else part
        where = np.flatnonzero(block)
        if len(where) > 1:
            raise ValueError(f"slot {name!r} has {len(where)} ones; a one-hot slot has at most one")
        return int(where[0]) if len(where) else None

    def need(name: str) -> int:
        value = hot(name)
        if value is None:
            raise ValueError(f"slot {name!r} is empty; it must hold one value")
        return value

    def cards(name: str) -> tuple[int, ...]:
        return tuple(int(c) for c in np.flatnonzero(t[s[name]]))

    def ints(name: str) -> tuple[int, ...]:
        return tuple(int(round(float(v))) for v in t[s[name]])

    tricks = []
    base = s["tricks"].start
    for k in range(TRICKS_PER_DEAL):
        block = t[base + k * TRICK_SIZE : base + (k + 1) * TRICK_SIZE]
        if not block[0]:
            break
        parts = (block[1:3], block[3 : 3 + NUM_CARDS], block[3 + NUM_CARDS : 3 + 2 * NUM_CARDS], block[-2:])
        values = [hot("tricks", p) for p in parts]
        if None in values:
            raise ValueError(f"trick {k + 1} of the observation is incomplete")
        leader, lead, follow, winner = (int(v) for v in values if v is not None)
        tricks.append((leader, lead, follow, winner))
    drawn = []
    base = s["drawn"].start
    for k in range(MAX_DRAWS):
        card = hot("drawn", t[base + k * NUM_CARDS : base + (k + 1) * NUM_CARDS])
        if card is None:
            break
        drawn.append(card)
    honours, lines, flags = ints("honours"), ints("lines"), ints("flags")
    return View(
        seat=need("seat"),
        status=STATUSES[need("status")],
        deal_index=ints("deal_index")[0],
        dealer=need("dealer"),
        leader=need("leader"),
        to_move=hot("to_move"),
        phase=ints("phase")[0],
        trick_no=ints("trick_no")[0],
        hand=cards("hand"),
        table=hot("table"),
        tricks=tuple(tricks),
        stock_count=ints("stock_count")[0],
        drawn=tuple(drawn),
        trump_card=hot("trump_card"),
        trump_suit=hot("trump_suit"),
        honours=(honours[0], honours[1]),
        opponent_hand_size=ints("opponent_hand_size")[0],
        legal=cards("legal"),
        lines=(lines[0], lines[1]),
        flags=(flags[0], flags[1]),
        multiplier=ints("multiplier")[0],
        pot=ints("pot")[0],
        match_winner=hot("match_winner"),
    )


def from_string(text: str) -> View:
    """The View a `to_string` text was made from."""
    d = json.loads(text)

    def card(code: str | None) -> int | None:
        return None if code is None else parse_card(code)

    def cards(codes: list[str]) -> tuple[int, ...]:
        return tuple(parse_card(c) for c in codes)

    return View(
        seat=d["seat"], status=d["status"], deal_index=d["deal_index"], dealer=d["dealer"],
        leader=d["leader"], to_move=d["to_move"], phase=d["phase"], trick_no=d["trick_no"],
        hand=cards(d["hand"]), table=card(d["table"]),
        tricks=tuple(
            (t["leader"], parse_card(t["lead"]), parse_card(t["follow"]), t["winner"]) for t in d["tricks"]
        ),
        stock_count=d["stock_count"], drawn=cards(d["drawn"]), trump_card=card(d["trump_card"]),
        trump_suit=None if d["trump_suit"] is None else SUITS.index(d["trump_suit"]),
        honours=tuple(d["honours"]), opponent_hand_size=d["opponent_hand_size"], legal=cards(d["legal"]),
        lines=tuple(d["lines"]), flags=tuple(d["flags"]), multiplier=d["multiplier"], pot=d["pot"],
        match_winner=d["match_winner"],
    )  # fmt: skip


def card_name(card: int) -> str:
    """An action's name: the card's wire code (`7C`, `TS`, `AH`)."""
    return card_code(card)

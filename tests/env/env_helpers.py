"""What the referee sends, for comparing the environments' observations with it: a finished match's
deals replayed through the referee's per-move path (arena.referee.turns.DealTurns, the TurnRequests a
bot receives, pinned to the engine's view by tests/referee/test_turns.py)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from arena.engine import Match, Rules
from arena.env import encoding
from arena.proto import referee_pb2 as pb
from arena.referee import convert
from arena.referee.clock import SeatClock, TimeControl
from arena.referee.turns import DealTurns

VARIANTS = [
    Rules(max_deals=2),
    Rules(max_deals=2, trumps=True),
    Rules(max_deals=2, trumps=True, must_head_phase2=True, hand_size=5, standoff="pot"),
    Rules(max_deals=2, hand_size=4, must_head_phase2=True, next_dealer="alternate", scoring="altenburg"),
    Rules(max_deals=3, trumps=True, hand_size=4, dealer_after_tie="same", next_dealer="loser"),
]


def referee_turns(match: Match) -> Iterator[tuple[int, pb.TurnRequest]]:
    """(seat, TurnRequest) for every turn of `match`'s finished deals, in order, as the referee sent them."""
    replay = Match(match.rules, 0)
    clocks = [SeatClock(TimeControl()), SeatClock(TimeControl())]
    turn_id = 0
    for summary in match.deals:
        deal = replay.start_deal(deck=summary.deck, dealer=summary.dealer)
        turns = DealTurns(replay)
        later = None  # as the runner does: the other seat's view gets the trick after the next request
        for card in summary.plays:
            seat = deal.to_move
            assert seat is not None
            turn_id += 1
            msg = turns.request(seat, turn_id, clocks[seat])
            if later is not None:
                turns.trick_done(*later)
                later = None
            request = pb.TurnRequest()
            request.CopyFrom(msg.turn_request)
            yield seat, request
            trick = replay.play(card)
            if trick is not None and not deal.done:
                assert deal.to_move is not None
                turns.trick_done(trick, deal.to_move)
                later = (trick, 1 - deal.to_move)


def assert_matches_referee(
    tensor: np.ndarray, mask: np.ndarray, text: str | None, request: pb.TurnRequest
) -> None:
    """The decoded observation is the referee's view of that turn, field for field, and the action
    mask is its legal cards."""
    view = encoding.decode(tensor)
    assert convert.view_to_proto(view, view.deal_index) == request.view
    assert convert.codes(view.legal) == list(request.legal_cards)
    assert [c for c in range(32) if mask[c]] == list(view.legal)
    if text is not None:
        assert encoding.from_string(text) == view

"""The encoding of a seat's view round-trips every field, in every status (before, during and between
deals, after the match), and refuses a tensor that is not one."""

from __future__ import annotations

import random
from dataclasses import fields

import numpy as np
import pytest
from env_helpers import VARIANTS

from arena.engine import Match, View
from arena.env import encoding


def _views(seed: int):
    for rules in VARIANTS:
        m = Match(rules, seed)
        rng = random.Random(seed)
        yield m.view(0)
        while not m.over:
            deal = m.start_deal()
            while not deal.done:
                yield from (m.view(0), m.view(1))
                m.play(rng.choice(deal.legal_cards()))
            yield m.view(1)


def test_every_view_round_trips_through_tensor_and_string() -> None:
    statuses = set()
    for view in _views(3):
        tensor = encoding.encode(view)
        assert tensor.shape == (encoding.SIZE,) and tensor.dtype == np.float32
        assert encoding.decode(tensor) == view
        assert encoding.from_string(encoding.to_string(view)) == view
        assert encoding.action_mask(view).sum() == len(view.legal)
        statuses.add(view.status)
    assert statuses == set(encoding.STATUSES)


def test_the_layout_covers_every_view_field() -> None:
    assert {name for name, _ in encoding.LAYOUT} == {f.name for f in fields(View)}
    assert encoding.SIZE == sum(s.stop - s.start for s in encoding.SLICES.values())


def test_encoding_into_a_buffer_clears_it() -> None:
    views = list(_views(1))
    buffer = encoding.encode(views[40])
    assert np.array_equal(encoding.encode(views[3], buffer), encoding.encode(views[3]))


def test_a_malformed_tensor_is_refused_with_the_slot() -> None:
    with pytest.raises(ValueError, match=r"has shape \(1647,\), not \(5,\)"):
        encoding.decode(np.zeros(5))
    with pytest.raises(ValueError, match="slot 'seat' is empty"):
        encoding.decode(np.zeros(encoding.SIZE))
    tensor = encoding.encode(next(_views(0)))
    tensor[encoding.SLICES["dealer"]] = 1
    with pytest.raises(ValueError, match="slot 'dealer' has 2 ones"):
        encoding.decode(tensor)

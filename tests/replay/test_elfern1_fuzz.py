"""Hostile records: whatever JSON a file holds, verify answers with a FAIL line, never a traceback."""

from __future__ import annotations

import copy

from elfern1_helpers import seeded_record
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.replay.verify import RecordFailure, replay_json

BASE = seeded_record(5)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=300, deadline=None)
@given(path=st.sampled_from(PATHS), value=json_values)
def test_any_single_replacement_fails_cleanly_or_verifies(path: tuple, value) -> None:
    record = copy.deepcopy(BASE)
    node = record
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        replay_json(record)
    except RecordFailure as failure:
        assert failure.reason and "\n" not in str(failure)


@settings(max_examples=100, deadline=None)
@given(value=json_values)
def test_any_json_document_fails_cleanly(value) -> None:
    try:
        replay_json(value)
    except RecordFailure as failure:
        assert failure.reason

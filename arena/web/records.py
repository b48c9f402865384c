"""Stored replays (the binary match record) as the elfern/1 JSON the viewer and downloads use.

The conversion is the replay layer's (`arena.replay.export.record_to_json`, which re-simulates the
record with the engine). This module turns its failures into an HTTP error and caches the last few
conversions, since a viewer page without JavaScript asks for the same match again at every step.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from fastapi import HTTPException

from arena.engine import EngineError
from arena.proto.codec import decode_record
from arena.replay.export import record_to_json

RECORD_MEDIA_TYPE = "application/x-elfern-record"

_CACHE: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CACHE_SIZE = 64


def match_record(data: bytes) -> dict[str, Any]:
    """The elfern/1 dict of a stored record (shared: do not modify); HTTP 422 if it cannot be read."""
    digest = hashlib.sha256(data).hexdigest()
    if digest in _CACHE:
        _CACHE.move_to_end(digest)
        return _CACHE[digest]
    try:
        record = record_to_json(decode_record(data))
    except (ValueError, KeyError, EngineError) as exc:  # RecordError is a ValueError
        raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None
    _CACHE[digest] = record
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return record

"""Stored replays (the binary match record) as the elfern/1 JSON the viewer and downloads use.

The conversion belongs to `arena.replay.export`; while that module is not there, a local reading of
the record stands in (`_from_proto`, with the `verdict` of docs/records.md for early ends). Conversions are cached, since a viewer page without
JavaScript asks for the same match again at every step.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException

RECORD_MEDIA_TYPE = "application/x-elfern-record"


def _from_proto(data: bytes) -> dict[str, Any]:
    from arena.proto.codec import decode_record
    from arena.replay.record import rules_of

    rec = decode_record(data)
    rules = {k: v for k, v in rules_of(rec).to_dict().items() if v is not None}
    seats = [p.name for p in sorted(rec.players, key=lambda p: p.seat)] or ["seat 0", "seat 1"]
    deals = []
    before = [0, 0]
    for d in rec.deals:
        entry: dict[str, Any] = {"dealer": d.dealer, "deck": list(d.deck), "plays": [p.card for p in d.plays]}
        if d.HasField("outcome"):
            after = list(d.outcome.lines)
            entry.update(honours=list(d.outcome.honours), winner=None if d.outcome.winner < 0 else d.outcome.winner,
                       lines=[after[0] - before[0], after[1] - before[1]])
            before = after
        deals.append(entry)
    res = rec.result
    out: dict[str, Any] = {"format": "elfern/1", "rules": rules, "seats": seats, "seed": rec.seed, "deals": deals,
                           "lines": before, "winner": None if res.winner < 0 else res.winner}
    failed = [(seat, v) for seat, v in enumerate(res.verdicts) if v and v != "OK"]
    if failed or res.end_reason in ("VERDICT", "SHUTDOWN"):
        seat, status = failed[0] if failed else (None, res.end_reason)
        detail = res.details[seat] if seat is not None and seat < len(res.details) else ""
        out["verdict"] = {"status": status, "seat": seat, "detail": detail}
    return out


_CACHE: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CACHE_SIZE = 64


def _converter() -> Callable[[bytes], dict[str, Any]]:
    try:
        from arena.replay.export import record_to_json  # the replay layer's own export, once it exists
    except ImportError:
        return _from_proto
    from arena.proto.codec import decode_record

    return lambda data: record_to_json(decode_record(data))


def match_record(data: bytes) -> dict[str, Any]:
    """The elfern/1 dict of a stored record (shared: do not modify); HTTP 422 if it cannot be read."""
    digest = hashlib.sha256(data).hexdigest()
    if digest in _CACHE:
        _CACHE.move_to_end(digest)
        return _CACHE[digest]
    try:
        record = _converter()(data)
    except (ValueError, KeyError) as exc:
        raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None
    _CACHE[digest] = record
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return record

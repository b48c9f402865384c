"""Stored replays as the web serves them: the public record, a seat owner's record, and elfern/1 JSON.

The store keeps the record as the referee wrote it, with both seats' `Log` lines. Nothing leaves the
web in that form except to the admin: spectators get `arena.replay.privacy.public_record` (no logs, no
private details, no self-reported names), an owner gets their own seat's private parts and never the
opponent's. Seats are always labelled with the names and versions the store registered, whatever
the record or the bot called itself.

The elfern/1 conversion is the replay layer's (`arena.replay.export.record_to_json`, which
re-simulates the record with the engine). This module turns its failures into an HTTP error and
caches the last few conversions, since a viewer page without JavaScript asks for the same match
again at every step. The viewer's timeline is built from the binary record in one walk of it
(`arena.web.timeline.record_timeline`), cached the same way. The match page and the per-deal JSON
ask for one deal at a time (`arena.web.deals`): a record's outline is cached by the stored bytes'
hash, so a request for a cached match's deal neither rebuilds its public record nor walks it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Any

from fastapi import HTTPException

from arena.engine import EngineError
from arena.memo import Memo
from arena.proto import replay_pb2
from arena.proto.codec import decode_record, encode_record
from arena.replay.export import record_to_json
from arena.replay.privacy import private_record, public_record
from arena.web.deals import Outline, deal_timeline, empty_timeline, record_outline
from arena.web.reveal import first_line
from arena.web.timeline import record_timeline

RECORD_MEDIA_TYPE = "application/x-elfern-record"

_RECORDS: Memo[str, dict[str, Any]] = Memo(64)
_TIMELINES: Memo[tuple[str, int | None], dict[str, Any]] = Memo(16)  # whole, up to 50 deals: a few MB each
_OUTLINES: Memo[str, Outline] = Memo(8)  # a 2,000-deal outline holds about 8 MB
_DEALS: Memo[tuple[str, int | None, int], dict[str, Any]] = Memo(128)

Seats = Sequence[tuple[str, int, str]]  # (registered name, version number, owner) per seat


def _decode(data: bytes) -> replay_pb2.MatchRecord:
    try:
        return decode_record(data)
    except ValueError as exc:  # RecordError
        raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None


def _registered(record: replay_pb2.MatchRecord, seats: Seats) -> None:
    """Label every seat with its registered name and version, in place."""
    for player in record.players:
        if player.seat < len(seats):
            name, number, _ = seats[player.seat]
            player.name, player.version = name, str(number)


def _arena_sentences(record: replay_pb2.MatchRecord, keep: Collection[int]) -> None:
    """Cut the verdict details of the seats not in `keep` to their first line, the arena's sentence
    (older records append the bot's last output after it), in place."""
    details = [d if seat in keep else first_line(d) for seat, d in enumerate(record.result.details)]
    record.result.ClearField("details")
    record.result.details.extend(details)


def _public(data: bytes, seats: Seats) -> replay_pb2.MatchRecord:
    record = public_record(_decode(data))
    _arena_sentences(record, ())
    _registered(record, seats)
    return record


def public_bytes(data: bytes, seats: Seats) -> bytes:
    """The record every public download serves (HTTP 422 if the stored bytes are not a record)."""
    return encode_record(_public(data, seats))


def private_bytes(data: bytes, seats: Seats, keep: Collection[int]) -> bytes:
    """The record with the private parts (logs, private details, self-reported name) of `keep` only."""
    record = private_record(_decode(data), keep)
    _arena_sentences(record, keep)
    _registered(record, seats)
    return encode_record(record)


def match_record(data: bytes) -> dict[str, Any]:
    """The elfern/1 dict of a record (shared: do not modify); HTTP 422 if it cannot be read."""

    def convert() -> dict[str, Any]:
        try:
            return record_to_json(_decode(data))
        except (ValueError, KeyError, EngineError) as exc:
            raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None

    return _RECORDS.get(hashlib.sha256(data).hexdigest(), convert)


def labelled_record(data: bytes, seats: Seats) -> dict[str, Any]:
    """The public elfern/1 record with the seats named `name@version` as registered."""
    record = match_record(public_bytes(data, seats))
    return {**record, "seats": [f"{name}@{number}" for name, number, _ in seats]}


def match_timeline(data: bytes, seats: Seats, perspective: int | None) -> dict[str, Any]:
    """The viewer's timeline of a public record, seats named `name@version` (shared: do not modify):
    one walk of the record, cached; HTTP 422 if it cannot be read or does not re-simulate."""
    names = [f"{name}@{number}" for name, number, _ in seats]

    def build() -> dict[str, Any]:
        try:
            return record_timeline(_decode(data), names, perspective)
        except (ValueError, KeyError, EngineError) as exc:
            raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None

    return _TIMELINES.get((hashlib.sha256(data).hexdigest() + "\0".join(names), perspective), build)


def match_outline(stored: bytes, seats: Seats) -> tuple[str, Outline]:
    """The outline of a match's public record, from its stored bytes, and the memo key it is kept
    under (the stored bytes' hash and the seats' labels). The public record is made only on a miss."""
    names = [f"{name}@{number}" for name, number, _ in seats]
    key = hashlib.sha256(stored).hexdigest() + "\0".join(names)

    def build() -> Outline:
        try:
            return record_outline(_public(stored, seats), names)  # what public_bytes serves
        except (ValueError, KeyError, EngineError) as exc:
            raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None

    return key, _OUTLINES.get(key, build)


def deal_of(stored: bytes, seats: Seats, perspective: int | None, deal: int) -> dict[str, Any]:
    """One deal's timeline of a match's public record (`arena.web.deals.deal_timeline`, shared: do
    not modify); HTTP 404 naming the match's deals when it has no deal `deal`."""
    key, outline = match_outline(stored, seats)
    if outline.count == 0:
        return empty_timeline(outline, perspective)
    if not 1 <= deal <= outline.count:
        raise HTTPException(404, f"there is no deal {deal}: ask for a deal from 1 to {outline.count}")

    def build() -> dict[str, Any]:
        try:
            return deal_timeline(outline, deal, perspective)
        except (ValueError, KeyError, EngineError) as exc:
            raise HTTPException(422, f"the stored replay cannot be read: {exc}") from None

    return _DEALS.get((key, perspective, deal), build)

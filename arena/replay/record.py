"""Reading binary match records (replay.proto, framed by arena.proto.codec) from files."""

from __future__ import annotations

import os
from pathlib import Path

from arena.engine import Rules, parse_card
from arena.proto import replay_pb2
from arena.proto.codec import MAX_RECORD_BYTES, RecordError, decode_record

REPLAY_DIR = Path("var") / "replays"  # without ARENA_HOME, under the current directory
REPLAY_SUFFIX = ".replay"


def replay_dir() -> Path:
    """Where `arena play` writes replays and where `last` looks: `$ARENA_HOME/replays`, the data
    folder the store uses too, or `./var/replays` when ARENA_HOME is not set."""
    home = os.environ.get("ARENA_HOME")
    return Path(home).resolve() / "replays" if home else REPLAY_DIR


class ReplayNotFound(FileNotFoundError):
    """No such replay file (or no replay at all for `last`); the message says where we looked."""


def resolve(spec: str | Path, directory: Path | None = None) -> Path:
    """A path, or `last` for the newest replay under `directory` (default: `replay_dir()`)."""
    directory = replay_dir() if directory is None else directory
    if str(spec) == "last":
        found = sorted(directory.glob(f"*{REPLAY_SUFFIX}"), key=lambda p: (p.stat().st_mtime, p.name))
        if not found:
            raise ReplayNotFound(f"no replays in {directory}/ yet; play a match first with `arena play A B`")
        return found[-1]
    path = Path(spec)
    if not path.is_file():
        raise ReplayNotFound(f"{spec}: no such replay file (or use `last` for the newest in {directory}/)")
    return path


def load_record(spec: str | Path, directory: Path | None = None) -> replay_pb2.MatchRecord:
    """Read and decode one record; RecordError for bytes that are not one."""
    path = resolve(spec, directory)
    try:
        with open(path, "rb") as fh:  # at most the cap and one byte more: a huge file is not read whole
            data = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if len(data) > MAX_RECORD_BYTES:
            raise RecordError(f"larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB; not a match record")
        return check_record(decode_record(data))
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def check_record(record: replay_pb2.MatchRecord) -> replay_pb2.MatchRecord:
    """`record` if its fields are ones the engine can replay, else RecordError naming the first that
    is not: rules, seats, each deal's dealer and card codes. (Whether the plays are legal is the
    re-simulation's business; this only keeps garbage from reaching it.)"""
    if not record.rules.scoring and not record.deals:
        raise RecordError("the record is empty (no rules, no deals); it was not written by a referee")
    try:
        rules_of(record)
    except ValueError as exc:
        raise RecordError(f"bad rules: {exc}") from None
    for p in record.players:
        if p.seat not in (0, 1):
            raise RecordError(f"player {p.name[:40]!r} has seat {p.seat}; seats are 0 and 1")
    for i, d in enumerate(record.deals, start=1):
        if d.dealer not in (0, 1):
            raise RecordError(f"deal {i}: dealer {d.dealer}; the dealer is seat 0 or 1")
        for what, cards in (("deck", d.deck), ("plays", [p.card for p in d.plays])):
            for c in cards:
                try:
                    parse_card(c)
                except ValueError:
                    raise RecordError(f"deal {i}: {what} has {c[:20]!r}, not a card code") from None
    return record


def rules_of(record: replay_pb2.MatchRecord) -> Rules:
    """The engine Rules a record was played under (its Rules message mirrors the dataclass)."""
    fields = {f.name: getattr(record.rules, f.name) for f in record.rules.DESCRIPTOR.fields}
    fields["max_deals"] = fields["max_deals"] or None
    return Rules.from_dict(fields)

"""Reading binary match records (replay.proto, framed by arena.proto.codec) from files."""

from __future__ import annotations

import os
from pathlib import Path

from arena.engine import Rules
from arena.proto import replay_pb2
from arena.proto.codec import RecordError, decode_record

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
        return decode_record(path.read_bytes())
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def rules_of(record: replay_pb2.MatchRecord) -> Rules:
    """The engine Rules a record was played under (its Rules message mirrors the dataclass)."""
    fields = {f.name: getattr(record.rules, f.name) for f in record.rules.DESCRIPTOR.fields}
    fields["max_deals"] = fields["max_deals"] or None
    return Rules.from_dict(fields)

"""What a match is before it starts (`MatchSpec`), and the Welcome each seat gets from it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from arena.engine import Rules
from arena.engine.botseed import bot_seed
from arena.proto import referee_pb2 as pb
from arena.proto.protocol import PROTOCOL_VERSION
from arena.referee import convert
from arena.referee.clock import TimeControl
from arena.referee.session import LogLimits, Seat

REMOTE = "remote"  # the recorded name of a seat nobody registered (the Join's name is never used)


@dataclass(frozen=True)
class MatchSpec:
    rules: Rules = field(default_factory=Rules)
    seed: int = 0
    time_control: TimeControl = field(default_factory=TimeControl)
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    # (name, version) per seat as the caller registered them: the only names recorded and shown
    names: tuple[tuple[str, str], tuple[str, str]] | None = None
    log_limits: LogLimits = field(default_factory=LogLimits)
    salt: bytes | None = None  # the deck commitment's 16 bytes (docs/shuffle.md); None: drawn here


def welcome(spec: MatchSpec, seat: Seat, opponent: Seat, commitment: str) -> pb.RefereeMessage:
    """Seat's Welcome: the match, its seat, the rules and clocks, the opponent's registered name, and the
    deck commitment fixed before any deal."""
    return pb.RefereeMessage(welcome=pb.Welcome(
        match_id=spec.match_id, seat=seat.index, rules=convert.rules_to_proto(spec.rules),
        time_control=spec.time_control.to_proto(), opponent_name=opponent.name,
        opponent_version=opponent.version, protocol_version=PROTOCOL_VERSION,
        log_limits=spec.log_limits.to_proto(), commitment=commitment,
        bot_seed=bot_seed(spec.seed, seat.index),  # one-way: docs/shuffle.md §6
    ))  # fmt: skip

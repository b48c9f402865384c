from arena.proto import referee_pb2 as _referee_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchRecord(_message.Message):
    __slots__ = ("format", "match_id", "seed", "rules", "time_control", "players", "deals", "result", "logs", "stats", "timing", "commitment", "salt")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    SALT_FIELD_NUMBER: _ClassVar[int]
    format: int
    match_id: str
    seed: int
    rules: _referee_pb2.Rules
    time_control: _referee_pb2.TimeControl
    players: _containers.RepeatedCompositeFieldContainer[PlayerRecord]
    deals: _containers.RepeatedCompositeFieldContainer[DealRecord]
    result: ResultRecord
    logs: _containers.RepeatedCompositeFieldContainer[LogRecord]
    stats: _containers.RepeatedCompositeFieldContainer[SeatStats]
    timing: TimingRecord
    commitment: str
    salt: str
    def __init__(self, format: _Optional[int] = ..., match_id: _Optional[str] = ..., seed: _Optional[int] = ..., rules: _Optional[_Union[_referee_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., players: _Optional[_Iterable[_Union[PlayerRecord, _Mapping]]] = ..., deals: _Optional[_Iterable[_Union[DealRecord, _Mapping]]] = ..., result: _Optional[_Union[ResultRecord, _Mapping]] = ..., logs: _Optional[_Iterable[_Union[LogRecord, _Mapping]]] = ..., stats: _Optional[_Iterable[_Union[SeatStats, _Mapping]]] = ..., timing: _Optional[_Union[TimingRecord, _Mapping]] = ..., commitment: _Optional[str] = ..., salt: _Optional[str] = ...) -> None: ...

class PlayerRecord(_message.Message):
    __slots__ = ("seat", "name", "version", "self_reported_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SELF_REPORTED_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    version: str
    self_reported_name: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., self_reported_name: _Optional[str] = ...) -> None: ...

class DealRecord(_message.Message):
    __slots__ = ("number", "dealer", "deck", "plays", "outcome")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    number: int
    dealer: int
    deck: _containers.RepeatedScalarFieldContainer[str]
    plays: _containers.RepeatedCompositeFieldContainer[PlayRecord]
    outcome: DealOutcomeRecord
    def __init__(self, number: _Optional[int] = ..., dealer: _Optional[int] = ..., deck: _Optional[_Iterable[str]] = ..., plays: _Optional[_Iterable[_Union[PlayRecord, _Mapping]]] = ..., outcome: _Optional[_Union[DealOutcomeRecord, _Mapping]] = ...) -> None: ...

class PlayRecord(_message.Message):
    __slots__ = ("seat", "card", "think_us")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    THINK_US_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    think_us: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., think_us: _Optional[int] = ...) -> None: ...

class DealOutcomeRecord(_message.Message):
    __slots__ = ("honours", "winner", "value", "lines")
    HONOURS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    honours: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    value: int
    lines: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, honours: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ..., value: _Optional[int] = ..., lines: _Optional[_Iterable[int]] = ...) -> None: ...

class ResultRecord(_message.Message):
    __slots__ = ("winner", "void", "verdicts", "details", "lines", "flags", "deals_played", "end_reason", "failed_deal", "failed_trick", "failed_turn_id", "private_details")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VOID_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    DEALS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    FAILED_DEAL_FIELD_NUMBER: _ClassVar[int]
    FAILED_TRICK_FIELD_NUMBER: _ClassVar[int]
    FAILED_TURN_ID_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_DETAILS_FIELD_NUMBER: _ClassVar[int]
    winner: int
    void: bool
    verdicts: _containers.RepeatedScalarFieldContainer[str]
    details: _containers.RepeatedScalarFieldContainer[str]
    lines: _containers.RepeatedScalarFieldContainer[int]
    flags: _containers.RepeatedScalarFieldContainer[int]
    deals_played: int
    end_reason: str
    failed_deal: int
    failed_trick: int
    failed_turn_id: int
    private_details: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, winner: _Optional[int] = ..., void: _Optional[bool] = ..., verdicts: _Optional[_Iterable[str]] = ..., details: _Optional[_Iterable[str]] = ..., lines: _Optional[_Iterable[int]] = ..., flags: _Optional[_Iterable[int]] = ..., deals_played: _Optional[int] = ..., end_reason: _Optional[str] = ..., failed_deal: _Optional[int] = ..., failed_trick: _Optional[int] = ..., failed_turn_id: _Optional[int] = ..., private_details: _Optional[_Iterable[str]] = ...) -> None: ...

class LogRecord(_message.Message):
    __slots__ = ("seat", "deal", "trick", "text", "source")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deal: int
    trick: int
    text: str
    source: str
    def __init__(self, seat: _Optional[int] = ..., deal: _Optional[int] = ..., trick: _Optional[int] = ..., text: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class SeatStats(_message.Message):
    __slots__ = ("seat", "stale_actions", "logs_dropped", "logs_truncated")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STALE_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    LOGS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    LOGS_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    stale_actions: int
    logs_dropped: int
    logs_truncated: int
    def __init__(self, seat: _Optional[int] = ..., stale_actions: _Optional[int] = ..., logs_dropped: _Optional[int] = ..., logs_truncated: _Optional[int] = ...) -> None: ...

class TimingRecord(_message.Message):
    __slots__ = ("started_unix_ms", "duration_ms", "bank_left_ms", "think_total_us", "moves")
    STARTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    THINK_TOTAL_US_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    started_unix_ms: int
    duration_ms: int
    bank_left_ms: _containers.RepeatedScalarFieldContainer[int]
    think_total_us: _containers.RepeatedScalarFieldContainer[int]
    moves: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, started_unix_ms: _Optional[int] = ..., duration_ms: _Optional[int] = ..., bank_left_ms: _Optional[_Iterable[int]] = ..., think_total_us: _Optional[_Iterable[int]] = ..., moves: _Optional[_Iterable[int]] = ...) -> None: ...

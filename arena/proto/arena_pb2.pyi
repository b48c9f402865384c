from arena.proto import referee_pb2 as _referee_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateMatchRequest(_message.Message):
    __slots__ = ("rules", "seed", "time_control", "match_id")
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    time_control: _referee_pb2.TimeControl
    match_id: str
    def __init__(self, rules: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., match_id: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "tokens")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id", "wait")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait: bool
    def __init__(self, match_id: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class MatchStatus(_message.Message):
    __slots__ = ("match_id", "state", "result", "record")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    state: str
    result: _referee_pb2.MatchResult
    record: bytes
    def __init__(self, match_id: _Optional[str] = ..., state: _Optional[str] = ..., result: _Optional[_Union[_referee_pb2.MatchResult, _Mapping]] = ..., record: _Optional[bytes] = ...) -> None: ...

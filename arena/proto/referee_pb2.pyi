from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("join", "action", "log")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    join: Join
    action: Action
    log: Log
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., log: _Optional[_Union[Log, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("token", "bot_name", "bot_version", "protocol_version")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    bot_version: str
    protocol_version: int
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("turn_id", "card")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    card: str
    def __init__(self, turn_id: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Log(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "turn_request", "deal_result", "match_result", "error")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    TURN_REQUEST_FIELD_NUMBER: _ClassVar[int]
    DEAL_RESULT_FIELD_NUMBER: _ClassVar[int]
    MATCH_RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    turn_request: TurnRequest
    deal_result: DealResult
    match_result: MatchResult
    error: Error
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., turn_request: _Optional[_Union[TurnRequest, _Mapping]] = ..., deal_result: _Optional[_Union[DealResult, _Mapping]] = ..., match_result: _Optional[_Union[MatchResult, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("scoring", "hand_size", "trumps", "must_head_phase2", "standoff", "next_dealer", "dealer_after_tie", "flags", "max_deals", "deck")
    SCORING_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    TRUMPS_FIELD_NUMBER: _ClassVar[int]
    MUST_HEAD_PHASE2_FIELD_NUMBER: _ClassVar[int]
    STANDOFF_FIELD_NUMBER: _ClassVar[int]
    NEXT_DEALER_FIELD_NUMBER: _ClassVar[int]
    DEALER_AFTER_TIE_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    MAX_DEALS_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    scoring: str
    hand_size: int
    trumps: bool
    must_head_phase2: bool
    standoff: str
    next_dealer: str
    dealer_after_tie: str
    flags: int
    max_deals: int
    deck: str
    def __init__(self, scoring: _Optional[str] = ..., hand_size: _Optional[int] = ..., trumps: _Optional[bool] = ..., must_head_phase2: _Optional[bool] = ..., standoff: _Optional[str] = ..., next_dealer: _Optional[str] = ..., dealer_after_tie: _Optional[str] = ..., flags: _Optional[int] = ..., max_deals: _Optional[int] = ..., deck: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("startup_ms", "move_ms", "bank_ms")
    STARTUP_MS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    startup_ms: int
    move_ms: int
    bank_ms: int
    def __init__(self, startup_ms: _Optional[int] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class LogLimits(_message.Message):
    __slots__ = ("max_line_bytes", "max_lines", "lines_per_second", "burst")
    MAX_LINE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_LINES_FIELD_NUMBER: _ClassVar[int]
    LINES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    BURST_FIELD_NUMBER: _ClassVar[int]
    max_line_bytes: int
    max_lines: int
    lines_per_second: int
    burst: int
    def __init__(self, max_line_bytes: _Optional[int] = ..., max_lines: _Optional[int] = ..., lines_per_second: _Optional[int] = ..., burst: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "rules", "time_control", "opponent_name", "opponent_version", "protocol_version", "log_limits", "commitment", "bot_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    LOG_LIMITS_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    rules: Rules
    time_control: TimeControl
    opponent_name: str
    opponent_version: str
    protocol_version: int
    log_limits: LogLimits
    commitment: str
    bot_seed: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., opponent_name: _Optional[str] = ..., opponent_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., log_limits: _Optional[_Union[LogLimits, _Mapping]] = ..., commitment: _Optional[str] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class DealStart(_message.Message):
    __slots__ = ("deal_number", "dealer", "hand", "trump_card", "stock_size", "lines", "multiplier", "pot")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    POT_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    dealer: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    trump_card: str
    stock_size: int
    lines: _containers.RepeatedScalarFieldContainer[int]
    multiplier: int
    pot: int
    def __init__(self, deal_number: _Optional[int] = ..., dealer: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., trump_card: _Optional[str] = ..., stock_size: _Optional[int] = ..., lines: _Optional[_Iterable[int]] = ..., multiplier: _Optional[int] = ..., pot: _Optional[int] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("number", "leader", "lead_card", "follow_card", "winner", "honours")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEAD_CARD_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_CARD_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    HONOURS_FIELD_NUMBER: _ClassVar[int]
    number: int
    leader: int
    lead_card: str
    follow_card: str
    winner: int
    honours: int
    def __init__(self, number: _Optional[int] = ..., leader: _Optional[int] = ..., lead_card: _Optional[str] = ..., follow_card: _Optional[str] = ..., winner: _Optional[int] = ..., honours: _Optional[int] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("seat", "deal_number", "trick_number", "phase", "dealer", "leader", "hand", "lead_card", "tricks", "honours", "stock_size", "trump_card", "trump_suit", "drawn", "opponent_hand_size", "lines", "flags", "multiplier", "pot", "deals_played")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    LEAD_CARD_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    HONOURS_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_SUIT_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    POT_FIELD_NUMBER: _ClassVar[int]
    DEALS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deal_number: int
    trick_number: int
    phase: int
    dealer: int
    leader: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    lead_card: str
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    honours: _containers.RepeatedScalarFieldContainer[int]
    stock_size: int
    trump_card: str
    trump_suit: str
    drawn: _containers.RepeatedScalarFieldContainer[str]
    opponent_hand_size: int
    lines: _containers.RepeatedScalarFieldContainer[int]
    flags: _containers.RepeatedScalarFieldContainer[int]
    multiplier: int
    pot: int
    deals_played: int
    def __init__(self, seat: _Optional[int] = ..., deal_number: _Optional[int] = ..., trick_number: _Optional[int] = ..., phase: _Optional[int] = ..., dealer: _Optional[int] = ..., leader: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., lead_card: _Optional[str] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., honours: _Optional[_Iterable[int]] = ..., stock_size: _Optional[int] = ..., trump_card: _Optional[str] = ..., trump_suit: _Optional[str] = ..., drawn: _Optional[_Iterable[str]] = ..., opponent_hand_size: _Optional[int] = ..., lines: _Optional[_Iterable[int]] = ..., flags: _Optional[_Iterable[int]] = ..., multiplier: _Optional[int] = ..., pot: _Optional[int] = ..., deals_played: _Optional[int] = ...) -> None: ...

class TurnRequest(_message.Message):
    __slots__ = ("turn_id", "view", "legal_cards", "move_ms", "bank_ms", "deadline_ms", "trick_result", "deal_start")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TRICK_RESULT_FIELD_NUMBER: _ClassVar[int]
    DEAL_START_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    view: View
    legal_cards: _containers.RepeatedScalarFieldContainer[str]
    move_ms: int
    bank_ms: int
    deadline_ms: int
    trick_result: TrickResult
    deal_start: DealStart
    def __init__(self, turn_id: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal_cards: _Optional[_Iterable[str]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., trick_result: _Optional[_Union[TrickResult, _Mapping]] = ..., deal_start: _Optional[_Union[DealStart, _Mapping]] = ...) -> None: ...

class TrickResult(_message.Message):
    __slots__ = ("deal_number", "trick", "honours", "drawn_card", "opponent_drew", "opponent_drawn_card", "stock_size")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    HONOURS_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_DREW_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    trick: Trick
    honours: _containers.RepeatedScalarFieldContainer[int]
    drawn_card: str
    opponent_drew: bool
    opponent_drawn_card: str
    stock_size: int
    def __init__(self, deal_number: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ..., honours: _Optional[_Iterable[int]] = ..., drawn_card: _Optional[str] = ..., opponent_drew: _Optional[bool] = ..., opponent_drawn_card: _Optional[str] = ..., stock_size: _Optional[int] = ...) -> None: ...

class DealResult(_message.Message):
    __slots__ = ("deal_number", "honours", "winner", "value", "lines", "flags", "multiplier", "pot", "last_trick")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HONOURS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    POT_FIELD_NUMBER: _ClassVar[int]
    LAST_TRICK_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    honours: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    value: int
    lines: _containers.RepeatedScalarFieldContainer[int]
    flags: _containers.RepeatedScalarFieldContainer[int]
    multiplier: int
    pot: int
    last_trick: TrickResult
    def __init__(self, deal_number: _Optional[int] = ..., honours: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ..., value: _Optional[int] = ..., lines: _Optional[_Iterable[int]] = ..., flags: _Optional[_Iterable[int]] = ..., multiplier: _Optional[int] = ..., pot: _Optional[int] = ..., last_trick: _Optional[_Union[TrickResult, _Mapping]] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("winner", "void", "verdicts", "details", "lines", "flags", "deals_played", "end_reason")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VOID_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    DEALS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    winner: int
    void: bool
    verdicts: _containers.RepeatedScalarFieldContainer[str]
    details: _containers.RepeatedScalarFieldContainer[str]
    lines: _containers.RepeatedScalarFieldContainer[int]
    flags: _containers.RepeatedScalarFieldContainer[int]
    deals_played: int
    end_reason: str
    def __init__(self, winner: _Optional[int] = ..., void: _Optional[bool] = ..., verdicts: _Optional[_Iterable[str]] = ..., details: _Optional[_Iterable[str]] = ..., lines: _Optional[_Iterable[int]] = ..., flags: _Optional[_Iterable[int]] = ..., deals_played: _Optional[int] = ..., end_reason: _Optional[str] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "message", "fatal", "turn_id")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FATAL_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    fatal: bool
    turn_id: int
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ..., fatal: _Optional[bool] = ..., turn_id: _Optional[int] = ...) -> None: ...

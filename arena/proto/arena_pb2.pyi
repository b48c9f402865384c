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
    __slots__ = ("match_id", "wait", "offset")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait: bool
    offset: int
    def __init__(self, match_id: _Optional[str] = ..., wait: _Optional[bool] = ..., offset: _Optional[int] = ...) -> None: ...

class MatchStatus(_message.Message):
    __slots__ = ("match_id", "state", "result", "record", "total_size", "next_offset", "sha256")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    state: str
    result: _referee_pb2.MatchResult
    record: bytes
    total_size: int
    next_offset: int
    sha256: bytes
    def __init__(self, match_id: _Optional[str] = ..., state: _Optional[str] = ..., result: _Optional[_Union[_referee_pb2.MatchResult, _Mapping]] = ..., record: _Optional[bytes] = ..., total_size: _Optional[int] = ..., next_offset: _Optional[int] = ..., sha256: _Optional[bytes] = ...) -> None: ...

class SubmitBotChunk(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: SubmitBotHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[SubmitBotHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SubmitBotHeader(_message.Message):
    __slots__ = ("name", "format", "size", "owner")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    name: str
    format: str
    size: int
    owner: str
    def __init__(self, name: _Optional[str] = ..., format: _Optional[str] = ..., size: _Optional[int] = ..., owner: _Optional[str] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("version", "new", "build_log")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NEW_FIELD_NUMBER: _ClassVar[int]
    BUILD_LOG_FIELD_NUMBER: _ClassVar[int]
    version: BotVersion
    new: bool
    build_log: str
    def __init__(self, version: _Optional[_Union[BotVersion, _Mapping]] = ..., new: _Optional[bool] = ..., build_log: _Optional[str] = ...) -> None: ...

class SubmitBotProgress(_message.Message):
    __slots__ = ("output", "running_seconds", "truncated", "done")
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    output: str
    running_seconds: int
    truncated: bool
    done: SubmitBotResponse
    def __init__(self, output: _Optional[str] = ..., running_seconds: _Optional[int] = ..., truncated: _Optional[bool] = ..., done: _Optional[_Union[SubmitBotResponse, _Mapping]] = ...) -> None: ...

class BotVersion(_message.Message):
    __slots__ = ("number", "content_hash", "language", "protocol", "build_ok", "created_at")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    BUILD_OK_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    number: int
    content_hash: str
    language: str
    protocol: str
    build_ok: bool
    created_at: str
    def __init__(self, number: _Optional[int] = ..., content_hash: _Optional[str] = ..., language: _Optional[str] = ..., protocol: _Optional[str] = ..., build_ok: _Optional[bool] = ..., created_at: _Optional[str] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ("owner", "include_retired", "limit", "page_token")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RETIRED_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    owner: str
    include_retired: bool
    limit: int
    page_token: str
    def __init__(self, owner: _Optional[str] = ..., include_retired: _Optional[bool] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots", "next_page_token")
    BOTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    next_page_token: str
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RetireBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("name", "owner", "state", "suspension_reason", "versions", "verdicts", "recent", "version_count")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUSPENSION_REASON_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    name: str
    owner: str
    state: str
    suspension_reason: str
    versions: _containers.RepeatedCompositeFieldContainer[BotVersion]
    verdicts: _containers.RepeatedCompositeFieldContainer[VerdictCount]
    recent: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    version_count: int
    def __init__(self, name: _Optional[str] = ..., owner: _Optional[str] = ..., state: _Optional[str] = ..., suspension_reason: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[BotVersion, _Mapping]]] = ..., verdicts: _Optional[_Iterable[_Union[VerdictCount, _Mapping]]] = ..., recent: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ..., version_count: _Optional[int] = ...) -> None: ...

class VerdictCount(_message.Message):
    __slots__ = ("verdict", "count")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    verdict: str
    count: int
    def __init__(self, verdict: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class GetBotLogsRequest(_message.Message):
    __slots__ = ("name", "match_id", "limit")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    name: str
    match_id: int
    limit: int
    def __init__(self, name: _Optional[str] = ..., match_id: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class BotLogs(_message.Message):
    __slots__ = ("name", "builds", "matches", "held", "left_out")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUILDS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    name: str
    builds: _containers.RepeatedCompositeFieldContainer[VersionBuildLog]
    matches: _containers.RepeatedCompositeFieldContainer[MatchLogEntry]
    held: int
    left_out: int
    def __init__(self, name: _Optional[str] = ..., builds: _Optional[_Iterable[_Union[VersionBuildLog, _Mapping]]] = ..., matches: _Optional[_Iterable[_Union[MatchLogEntry, _Mapping]]] = ..., held: _Optional[int] = ..., left_out: _Optional[int] = ...) -> None: ...

class VersionBuildLog(_message.Message):
    __slots__ = ("version", "build_ok", "log")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BUILD_OK_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    version: int
    build_ok: bool
    log: str
    def __init__(self, version: _Optional[int] = ..., build_ok: _Optional[bool] = ..., log: _Optional[str] = ...) -> None: ...

class MatchLogEntry(_message.Message):
    __slots__ = ("match_id", "seat", "verdict", "text")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    seat: int
    verdict: str
    text: str
    def __init__(self, match_id: _Optional[int] = ..., seat: _Optional[int] = ..., verdict: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ListSeasonsRequest(_message.Message):
    __slots__ = ("limit", "page_token")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    limit: int
    page_token: str
    def __init__(self, limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSeasonsResponse(_message.Message):
    __slots__ = ("seasons", "next_page_token")
    SEASONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    seasons: _containers.RepeatedCompositeFieldContainer[SeasonInfo]
    next_page_token: str
    def __init__(self, seasons: _Optional[_Iterable[_Union[SeasonInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SeasonInfo(_message.Message):
    __slots__ = ("name", "status", "rules", "time_control", "duplicate", "matches_done", "matches_pending", "created_at", "paused")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_DONE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_PENDING_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    name: str
    status: str
    rules: _containers.RepeatedScalarFieldContainer[str]
    time_control: _referee_pb2.TimeControl
    duplicate: bool
    matches_done: int
    matches_pending: int
    created_at: str
    paused: bool
    def __init__(self, name: _Optional[str] = ..., status: _Optional[str] = ..., rules: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., duplicate: _Optional[bool] = ..., matches_done: _Optional[int] = ..., matches_pending: _Optional[int] = ..., created_at: _Optional[str] = ..., paused: _Optional[bool] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("season", "los_top", "los_around", "los_bots", "limit", "page_token", "bot")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    LOS_TOP_FIELD_NUMBER: _ClassVar[int]
    LOS_AROUND_FIELD_NUMBER: _ClassVar[int]
    LOS_BOTS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    season: str
    los_top: int
    los_around: str
    los_bots: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    page_token: str
    bot: str
    def __init__(self, season: _Optional[str] = ..., los_top: _Optional[int] = ..., los_around: _Optional[str] = ..., los_bots: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ..., bot: _Optional[str] = ...) -> None: ...

class Standings(_message.Message):
    __slots__ = ("season", "status", "rows", "los_bots", "los", "next_page_token", "total", "first")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    LOS_BOTS_FIELD_NUMBER: _ClassVar[int]
    LOS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    season: str
    status: str
    rows: _containers.RepeatedCompositeFieldContainer[StandingRow]
    los_bots: _containers.RepeatedScalarFieldContainer[str]
    los: _containers.RepeatedCompositeFieldContainer[LosRow]
    next_page_token: str
    total: int
    first: int
    def __init__(self, season: _Optional[str] = ..., status: _Optional[str] = ..., rows: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., los_bots: _Optional[_Iterable[str]] = ..., los: _Optional[_Iterable[_Union[LosRow, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total: _Optional[int] = ..., first: _Optional[int] = ...) -> None: ...

class LosRow(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class StandingRow(_message.Message):
    __slots__ = ("rank", "bot", "owner", "elo", "has_ci95", "ci95", "live_elo", "games", "wins", "draws", "losses", "provisional", "active", "unrated", "group", "bound", "anchor", "suspended", "has_los_next", "los_next")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ELO_FIELD_NUMBER: _ClassVar[int]
    HAS_CI95_FIELD_NUMBER: _ClassVar[int]
    CI95_FIELD_NUMBER: _ClassVar[int]
    LIVE_ELO_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    LOSSES_FIELD_NUMBER: _ClassVar[int]
    PROVISIONAL_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    UNRATED_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    BOUND_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    HAS_LOS_NEXT_FIELD_NUMBER: _ClassVar[int]
    LOS_NEXT_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    owner: str
    elo: float
    has_ci95: bool
    ci95: float
    live_elo: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    active: bool
    unrated: bool
    group: int
    bound: str
    anchor: bool
    suspended: bool
    has_los_next: bool
    los_next: float
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., owner: _Optional[str] = ..., elo: _Optional[float] = ..., has_ci95: _Optional[bool] = ..., ci95: _Optional[float] = ..., live_elo: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., draws: _Optional[int] = ..., losses: _Optional[int] = ..., provisional: _Optional[bool] = ..., active: _Optional[bool] = ..., unrated: _Optional[bool] = ..., group: _Optional[int] = ..., bound: _Optional[str] = ..., anchor: _Optional[bool] = ..., suspended: _Optional[bool] = ..., has_los_next: _Optional[bool] = ..., los_next: _Optional[float] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("season", "bot", "verdict", "kind", "status", "limit", "offset", "page_token")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    season: str
    bot: str
    verdict: str
    kind: str
    status: str
    limit: int
    offset: int
    page_token: str
    def __init__(self, season: _Optional[str] = ..., bot: _Optional[str] = ..., verdict: _Optional[str] = ..., kind: _Optional[str] = ..., status: _Optional[str] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "total", "next_page_token", "total_capped")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CAPPED_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    total: int
    next_page_token: str
    total_capped: bool
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ..., total: _Optional[int] = ..., next_page_token: _Optional[str] = ..., total_capped: _Optional[bool] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("id", "season", "kind", "status", "players", "revealed", "winner", "void", "verdicts", "details", "lines", "commitment", "has_seed", "seed", "salt", "started_at", "finished_at", "requested_by", "void_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    SEASON_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VOID_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    HAS_SEED_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SALT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    VOID_REASON_FIELD_NUMBER: _ClassVar[int]
    id: int
    season: str
    kind: str
    status: str
    players: _containers.RepeatedScalarFieldContainer[str]
    revealed: bool
    winner: int
    void: bool
    verdicts: _containers.RepeatedScalarFieldContainer[str]
    details: _containers.RepeatedScalarFieldContainer[str]
    lines: _containers.RepeatedScalarFieldContainer[int]
    commitment: str
    has_seed: bool
    seed: int
    salt: str
    started_at: str
    finished_at: str
    requested_by: str
    void_reason: str
    def __init__(self, id: _Optional[int] = ..., season: _Optional[str] = ..., kind: _Optional[str] = ..., status: _Optional[str] = ..., players: _Optional[_Iterable[str]] = ..., revealed: _Optional[bool] = ..., winner: _Optional[int] = ..., void: _Optional[bool] = ..., verdicts: _Optional[_Iterable[str]] = ..., details: _Optional[_Iterable[str]] = ..., lines: _Optional[_Iterable[int]] = ..., commitment: _Optional[str] = ..., has_seed: _Optional[bool] = ..., seed: _Optional[int] = ..., salt: _Optional[str] = ..., started_at: _Optional[str] = ..., finished_at: _Optional[str] = ..., requested_by: _Optional[str] = ..., void_reason: _Optional[str] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("match_id", "private", "offset")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    private: bool
    offset: int
    def __init__(self, match_id: _Optional[int] = ..., private: _Optional[bool] = ..., offset: _Optional[int] = ...) -> None: ...

class Replay(_message.Message):
    __slots__ = ("match_id", "record", "private", "total_size", "next_offset", "sha256")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    record: bytes
    private: bool
    total_size: int
    next_offset: int
    sha256: bytes
    def __init__(self, match_id: _Optional[int] = ..., record: _Optional[bytes] = ..., private: _Optional[bool] = ..., total_size: _Optional[int] = ..., next_offset: _Optional[int] = ..., sha256: _Optional[bytes] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class WatchEvent(_message.Message):
    __slots__ = ("status", "deal", "trick", "deal_end")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    DEAL_END_FIELD_NUMBER: _ClassVar[int]
    status: MatchInfo
    deal: WatchDeal
    trick: WatchTrick
    deal_end: WatchDealEnd
    def __init__(self, status: _Optional[_Union[MatchInfo, _Mapping]] = ..., deal: _Optional[_Union[WatchDeal, _Mapping]] = ..., trick: _Optional[_Union[WatchTrick, _Mapping]] = ..., deal_end: _Optional[_Union[WatchDealEnd, _Mapping]] = ...) -> None: ...

class WatchDeal(_message.Message):
    __slots__ = ("deal", "dealer")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    deal: int
    dealer: int
    def __init__(self, deal: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class WatchTrick(_message.Message):
    __slots__ = ("deal", "trick", "leader", "cards", "winner", "tricks_won")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    deal: int
    trick: int
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deal: _Optional[int] = ..., trick: _Optional[int] = ..., leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ..., tricks_won: _Optional[_Iterable[int]] = ...) -> None: ...

class WatchDealEnd(_message.Message):
    __slots__ = ("deal", "winner", "lines")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    deal: int
    winner: int
    lines: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deal: _Optional[int] = ..., winner: _Optional[int] = ..., lines: _Optional[_Iterable[int]] = ...) -> None: ...

class ChallengeRequest(_message.Message):
    __slots__ = ("my_bot", "opponent", "rules", "deals", "time_control")
    MY_BOT_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    my_bot: str
    opponent: str
    rules: _containers.RepeatedScalarFieldContainer[str]
    deals: int
    time_control: _referee_pb2.TimeControl
    def __init__(self, my_bot: _Optional[str] = ..., opponent: _Optional[str] = ..., rules: _Optional[_Iterable[str]] = ..., deals: _Optional[int] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ...) -> None: ...

class ChallengeResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class CreateSeasonRequest(_message.Message):
    __slots__ = ("name", "rules", "time_control", "duplicate", "anchors", "pair_same_owner")
    class AnchorsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    ANCHORS_FIELD_NUMBER: _ClassVar[int]
    PAIR_SAME_OWNER_FIELD_NUMBER: _ClassVar[int]
    name: str
    rules: _containers.RepeatedScalarFieldContainer[str]
    time_control: _referee_pb2.TimeControl
    duplicate: bool
    anchors: _containers.ScalarMap[str, float]
    pair_same_owner: bool
    def __init__(self, name: _Optional[str] = ..., rules: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., duplicate: _Optional[bool] = ..., anchors: _Optional[_Mapping[str, float]] = ..., pair_same_owner: _Optional[bool] = ...) -> None: ...

class SeasonRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class SuspendBotRequest(_message.Message):
    __slots__ = ("name", "reason")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    name: str
    reason: str
    def __init__(self, name: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ListOwnersRequest(_message.Message):
    __slots__ = ("limit", "page_token")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    limit: int
    page_token: str
    def __init__(self, limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListOwnersResponse(_message.Message):
    __slots__ = ("owners", "next_page_token")
    OWNERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    owners: _containers.RepeatedCompositeFieldContainer[OwnerInfo]
    next_page_token: str
    def __init__(self, owners: _Optional[_Iterable[_Union[OwnerInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class OwnerInfo(_message.Message):
    __slots__ = ("name", "token_prefix", "revoked", "bots", "created_at", "rotated_at", "suspended", "suspension_reason")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_PREFIX_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ROTATED_AT_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    SUSPENSION_REASON_FIELD_NUMBER: _ClassVar[int]
    name: str
    token_prefix: str
    revoked: bool
    bots: int
    created_at: str
    rotated_at: str
    suspended: bool
    suspension_reason: str
    def __init__(self, name: _Optional[str] = ..., token_prefix: _Optional[str] = ..., revoked: _Optional[bool] = ..., bots: _Optional[int] = ..., created_at: _Optional[str] = ..., rotated_at: _Optional[str] = ..., suspended: _Optional[bool] = ..., suspension_reason: _Optional[str] = ...) -> None: ...

class OwnerRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class OwnerToken(_message.Message):
    __slots__ = ("name", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class RequeueFailedRequest(_message.Message):
    __slots__ = ("season", "match_id")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    season: str
    match_id: int
    def __init__(self, season: _Optional[str] = ..., match_id: _Optional[int] = ...) -> None: ...

class RequeueFailedResponse(_message.Message):
    __slots__ = ("match_ids",)
    MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    match_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class VoidMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    reason: str
    def __init__(self, match_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class RecomputeRatingsResponse(_message.Message):
    __slots__ = ("season", "entries", "changed_entries", "changed_ratings", "results")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    CHANGED_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    CHANGED_RATINGS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    season: str
    entries: int
    changed_entries: int
    changed_ratings: int
    results: int
    def __init__(self, season: _Optional[str] = ..., entries: _Optional[int] = ..., changed_entries: _Optional[int] = ..., changed_ratings: _Optional[int] = ..., results: _Optional[int] = ...) -> None: ...

class SuspendOwnerRequest(_message.Message):
    __slots__ = ("name", "reason")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    name: str
    reason: str
    def __init__(self, name: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ListWorkersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("name", "running", "draining", "drained_by", "reason")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    DRAINED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    name: str
    running: int
    draining: bool
    drained_by: str
    reason: str
    def __init__(self, name: _Optional[str] = ..., running: _Optional[int] = ..., draining: _Optional[bool] = ..., drained_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ListWorkersResponse(_message.Message):
    __slots__ = ("workers",)
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    def __init__(self, workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ...) -> None: ...

class DrainWorkerRequest(_message.Message):
    __slots__ = ("worker", "reason")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    worker: str
    reason: str
    def __init__(self, worker: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ListAdminActionsRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class AdminAction(_message.Message):
    __slots__ = ("id", "at", "actor", "action", "target", "detail")
    ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    id: int
    at: str
    actor: str
    action: str
    target: str
    detail: str
    def __init__(self, id: _Optional[int] = ..., at: _Optional[str] = ..., actor: _Optional[str] = ..., action: _Optional[str] = ..., target: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class ListAdminActionsResponse(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[AdminAction]
    def __init__(self, actions: _Optional[_Iterable[_Union[AdminAction, _Mapping]]] = ...) -> None: ...

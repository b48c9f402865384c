"""The shapes the web shows, as pydantic models: the JSON API returns them as they are (and FastAPI
documents them on /docs), and the HTML templates render the very same objects, so the two never drift."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from arena.ladder.queries import HISTORY_SHOWN, OPPONENTS_SHOWN
from arena.limits import request_limit


# ---- what callers send: every string within its maximum (arena.limits, docs/security.md) ----------
def _within(field: str) -> AfterValidator:
    """A validator holding a request string to `arena.limits`' maximum for `field`; the 422 names the
    field, its maximum and the length given, as gRPC's INVALID_ARGUMENT does."""
    limit = request_limit(field)
    check: Callable[[str], str] = lambda value: limit.check(value, field)  # noqa: E731
    return AfterValidator(check)


Name = Annotated[str, _within("name")]  # a bot's, an owner's or a season's name
RulePair = Annotated[str, _within("rules")]  # one "key=value" rules option
AnchorName = Annotated[str, _within("anchors")]  # NAME or NAME@VERSION
Reason = Annotated[str, _within("reason")]


class SeasonOut(BaseModel):
    name: str
    status: str
    rules: list[str] = Field(default_factory=list, description="Rules options, as `key=value` pairs")
    duplicate: bool = False
    matches: int = Field(0, description="Matches recorded in this season")
    created_at: datetime | None = None
    paused: bool = Field(False, description="The organiser paused it: no match starts until it is resumed")


class StandingRow(BaseModel):
    rank: int
    bot: str
    version: int | None = None
    elo: float
    interval: float | None = Field(None, description="Half-width of the 95% interval (Elo ± interval)")
    bound: str | None = Field(None, description="lower/upper: a perfect/zero score, elo is that 97.5% bound")
    live: float | None = Field(None, description="The live Elo rating (updated after every match)")
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool = Field(description="Fewer than 20 rated matches")
    trend: float = Field(0.0, description="Rating change over the bot's last 10 rated matches in this season")
    recent: list[float] = Field(
        default_factory=list, description="Its last ratings, oldest first (for a sparkline)"
    )
    los_next: float | None = Field(
        None,
        description="Likelihood of superiority over the next row of its group: the probability that it "
        "is stronger (from the season fit; null for the last of a group and in frozen or live standings)",
    )


class StandingsOut(BaseModel):
    season: SeasonOut | None
    seasons: list[SeasonOut]
    source: str = Field(description="`frozen` (closed season), `fit` (maximum likelihood) or `live` (Elo)")
    rows: list[StandingRow] = Field(description="One page of the rated rows, in rank order")
    first: int = Field(1, description="The place (1-based) of the page's first row in the whole table")
    total: int = Field(0, description="Rated rows in the whole table")
    limit: int = Field(100, description="The most rows a page holds (as asked)")
    next_after: int | None = Field(
        None, description="`after` of the next page (pass it as `?after=`); null on the last page"
    )
    prev_after: int | None = Field(None, description="`after` of the page before; null on the first page")
    focus: str | None = Field(None, description="The row of the bot asked for with `?bot=` (name@version)")
    los: list[list[float]] | None = Field(
        None,
        description="Always null: a whole ladder's n×n table is never sent (issue #30); each row's "
        "`los_next` is its likelihood of superiority over the next",
    )


class VersionOut(BaseModel):
    number: int
    content_hash: str
    language: str
    protocol: str
    created_at: datetime | None = None
    build_ok: bool = True


class RatingPoint(BaseModel):
    match_id: int
    season: str
    at: datetime | None = None
    rating: float


class MatchSummary(BaseModel):
    id: int
    season: str | None = None
    kind: str
    status: str
    bots: list[str] = Field(description="Bot name per seat")
    versions: list[str] = Field(description="`bot@version` per seat")
    winner: int | None = Field(
        None, description="Winning seat, or null for a draw, a void or an unfinished match"
    )
    void: bool = False
    void_reason: str | None = Field(
        None, description="The organiser voided this played match, for this reason"
    )
    verdicts: list[str] = Field(
        default_factory=list, description="Verdict per seat (OK when the seat behaved)"
    )
    lines: list[int] = Field(default_factory=list)
    deals: int = 0
    finished_at: datetime | None = None
    revealed: bool = Field(
        True,
        description="False until this match and its duplicate twin have both finished: until then the "
        "result, seed, salt and replay are withheld and the result fields above are empty",
    )
    commitment: str = Field("", description="SHA-256 commitment to the decks, public from the start (hex)")


class HeadToHead(BaseModel):
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int


class BotRating(BaseModel):
    season: str
    version: int
    rating: float
    games: int
    provisional: bool


class BotOut(BaseModel):
    name: str
    owner: str
    retired: bool
    suspended: bool
    suspension_reason: str | None = None
    versions: list[VersionOut]
    ratings: list[BotRating]
    history: list[RatingPoint] = Field(
        description=f"Live Elo after each of the newest {HISTORY_SHOWN} revealed rated matches of each season entry"
    )
    recent: list[MatchSummary]  # its newest finished matches but challenges (ladder, final, compare)
    challenges: list[MatchSummary] = []  # its newest finished challenges (unrated), listed apart
    head_to_head: list[HeadToHead] = Field(
        description=f"Revealed results against the {OPPONENTS_SHOWN} opponents it played most, most games first"
    )
    opponents: int = Field(
        0,
        description=f"How many opponents it has revealed games against (head_to_head: the first {OPPONENTS_SHOWN})",
    )
    verdicts: dict[str, int] = Field(description="How this bot's matches ended for it, by verdict")


class MatchOut(MatchSummary):
    rules: dict = Field(default_factory=dict)
    seed: int | None = Field(None, description="The match seed; null until the match is revealed")
    salt: str | None = Field(
        None, description="The commitment's salt (hex); null until the match is revealed"
    )
    commitment_id: str = Field(
        "", description="The match id inside the commitment: `deck_commitment(seed, commitment_id, salt)`"
    )
    duration: float | None = None
    verdict_details: list[str] = Field(
        default_factory=list, description="The arena's one-line sentence per seat (never the bot's output)"
    )
    has_replay: bool = Field(False, description="A public replay can be downloaded")
    sealed: str | None = Field(None, description="Why the replay and result are withheld, while they are")


class MatchPage(BaseModel):
    total: int = Field(description="Matches that fit the filters, counted up to 1000 (see total_capped)")
    total_capped: bool = Field(False, description="True: at least `total` fit; the count stopped there")
    limit: int
    next_after: int | None = Field(
        None, description="Pass as `after` for the next (older) page; null on the last page"
    )
    matches: list[MatchSummary]


class LogEntry(BaseModel):
    match_id: int | None = Field(None, description="The match, or null for a build log")
    version: int | None = None
    seat: int | None = None
    text: str


class LogsOut(BaseModel):
    bot: str
    logs: list[LogEntry]
    held: int = Field(
        0, description="Match logs held back because the match or its duplicate twin is not over yet"
    )

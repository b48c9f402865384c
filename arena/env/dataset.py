"""A season's revealed matches as a training dataset: one row per card played (`arena export dataset`).

Each row is one move as its mover saw it: the mover's view just before the card (the engine's
`Match.view`, the same view the referee sent the bot, as canonical JSON), its legal cards, the card it
played, the deal's and the match's outcome, and the two bots' registered names and versions. Rows come
from re-simulating each stored record with the engine (`arena.replay.walk.Walk`), so they hold only
what the seat could see: no deck, no opponent's hand, and nothing of a record's private fields (the
bots' logs, private verdict details, the names the bots gave themselves). Only revealed matches are
read (`arena.ladder.visibility`: a match and its duplicate twin both over), as `arena season export`
does. Matches are read a page at a time and rows written in batches: memory stays constant however
many millions of moves a season holds.

SCHEMA_VERSION changes whenever a column is added, removed or changes meaning; `COLUMNS` documents each.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from sqlalchemy import select

from arena.engine import Match as Game
from arena.engine.cards import card_code
from arena.env import encoding
from arena.ladder.visibility import unrevealed_ids
from arena.proto.codec import decode_record
from arena.replay.record import rules_of
from arena.replay.walk import DealEnd, DealStart, Played, Walk, record_deals
from arena.store import Store
from arena.store.models import Match, Replay

SCHEMA_VERSION = 1
PAGE = 200  # matches read per query
BATCH = 8192  # rows per Parquet row group


class Format(StrEnum):
    PARQUET = "parquet"
    JSONL = "jsonl"


#: (column, type, meaning); types: int, str, bool, "str list", and "?" for a value that may be null
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("schema_version", "int", f"this schema's version ({SCHEMA_VERSION})"),
    ("season", "str", "the season's name"),
    ("match", "int", "the match's id in the store (`arena matches`, /matches/ID)"),
    ("kind", "str", "the match's kind (ladder, challenge, ...)"),
    ("deal", "int", "the deal, 1-based"),
    ("move", "int", "the card's place in the deal, 1 to 32"),
    ("seat", "int", "the mover's seat, 0 or 1"),
    ("bot", "str", "the mover's registered name"),
    ("version", "str", "the mover's registered version"),
    ("opponent", "str", "the opponent's registered name"),
    ("opponent_version", "str", "the opponent's registered version"),
    ("view", "str", "the mover's view before the card: the engine View's canonical JSON (docs/training.md)"),
    ("legal", "str list", "the mover's legal cards, wire codes, ascending"),
    ("card", "str", "the card played, a wire code"),
    ("deal_honours", "int?", "the mover's honours at the deal's end (null: the deal was cut short)"),
    ("deal_winner", "int?", "the deal's winner's seat, -1 for a Ständer (null: cut short)"),
    ("deal_lines", "int?", "the lines the mover scored with the deal (null: cut short)"),
    ("match_winner", "int", "the match's winner's seat, -1 for a draw or a void match"),
    ("match_void", "bool", "the match was void (both seats failed, or the arena cut it short)"),
    ("mover_lines", "int", "the mover's lines at the match's end"),
    ("opponent_lines", "int", "the opponent's lines at the match's end"),
)

NAMES = tuple(name for name, _, _ in COLUMNS)


@dataclass
class Written:
    matches: int = 0
    rows: int = 0


def season_rows(store: Store, season: str) -> Iterator[dict[str, Any]]:
    """Every row of `season`'s revealed matches, match by match in recording order."""
    season_id = store.season(season).id
    after = -1
    while True:
        with store.read() as s:
            page = list(
                s.scalars(
                    select(Match)
                    .where(Match.season_id == season_id, Match.record_seq > after)
                    .order_by(Match.record_seq)
                    .limit(PAGE)
                )
            )
            if not page:
                return
            hidden = unrevealed_ids(s, page)
            shown = [(m.id, m.kind) for m in page if m.id not in hidden]
            after = page[-1].record_seq or after
        for match_id, kind in shown:
            with store.read() as s:
                data = s.scalar(select(Replay.data).where(Replay.match_id == match_id))
            if data is not None:
                yield from match_rows(decode_record(data), season, match_id, kind)


def match_rows(record: Any, season: str, match_id: int, kind: str) -> Iterator[dict[str, Any]]:
    """One record's rows: the engine re-plays it, each move's row built from the mover's view."""
    players = {p.seat: p for p in record.players}
    result = record.result
    lines = list(result.lines) or [0, 0]
    game = Game(rules_of(record), record.seed)
    pending: list[dict[str, Any]] = []
    view = None
    for step in Walk(game, record_deals(record)):
        if isinstance(step, DealStart):
            pending, view = [], _next_view(game)
        elif isinstance(step, Played):
            assert view is not None and view.seat == step.seat
            me, them = players.get(step.seat), players.get(1 - step.seat)
            pending.append({
                "schema_version": SCHEMA_VERSION, "season": season, "match": match_id, "kind": kind,
                "deal": step.number, "move": step.k, "seat": step.seat,
                "bot": me.name if me else "", "version": me.version if me else "",
                "opponent": them.name if them else "", "opponent_version": them.version if them else "",
                "view": encoding.to_string(view), "legal": [card_code(c) for c in view.legal],
                "card": card_code(step.card),
                "match_winner": result.winner if not result.void else -1, "match_void": result.void,
                "mover_lines": lines[step.seat], "opponent_lines": lines[1 - step.seat],
            })  # fmt: skip
            view = _next_view(game)
        elif isinstance(step, DealEnd):
            out = step.deal.outcome
            for row in pending:
                seat = row["seat"]
                row["deal_honours"] = None if out is None else out.honours[seat]
                row["deal_winner"] = None if out is None else (-1 if out.winner is None else out.winner)
                row["deal_lines"] = None if out is None else out.lines[seat]
            yield from ({name: row[name] for name in NAMES} for row in pending)  # in COLUMNS' order
            pending = []


def _next_view(game: Game) -> Any:
    deal = game.deal
    if deal is None or deal.done or deal.to_move is None:
        return None
    return game.view(deal.to_move)


def write(rows: Iterator[dict[str, Any]], out: Path, fmt: Format) -> Written:
    """Stream `rows` into `out` as Parquet (row groups of BATCH) or JSON lines."""
    done = Written()
    last_match = None

    def count(row: dict[str, Any]) -> dict[str, Any]:
        nonlocal last_match
        done.rows += 1
        if row["match"] != last_match:
            done.matches += 1
            last_match = row["match"]
        return row

    if fmt is Format.JSONL:
        with out.open("w", encoding="utf-8") as f:
            _write_jsonl((count(r) for r in rows), f)
        return done
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    schema = arrow_schema()
    with pq.ParquetWriter(str(out), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(count(row))
            if len(batch) >= BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch or done.rows == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return done


def _write_jsonl(rows: Iterator[dict[str, Any]], f: IO[str]) -> None:
    for row in rows:
        f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def arrow_schema() -> Any:
    """The Parquet schema of COLUMNS, with the schema version in its metadata."""
    import pyarrow as pa

    kinds = {"int": pa.int64(), "str": pa.string(), "bool": pa.bool_(), "str list": pa.list_(pa.string())}
    fields = [
        pa.field(name, kinds[kind.rstrip("?")], nullable=kind.endswith("?")) for name, kind, _ in COLUMNS
    ]
    return pa.schema(fields, metadata={"elfern_dataset_schema": str(SCHEMA_VERSION)})

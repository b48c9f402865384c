"""`arena export dataset`: one row per move of a season's revealed matches, on SQLite and PostgreSQL.
Each row re-plays against the engine (its view is the engine's view of the mover at that card, its
card legal there), hidden matches and the records' private fields stay out, and Parquet and JSON lines
hold the same rows."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
from click.testing import CliRunner

from arena.cli import cli
from arena.engine import Match as Game
from arena.engine import Rules
from arena.env import encoding
from arena.env.dataset import COLUMNS, SCHEMA_VERSION
from arena.proto import replay_pb2
from arena.proto.codec import FORMAT, encode_record
from arena.referee.convert import codes, rules_to_proto
from arena.store import Store
from arena.store.models import Match, Replay, Season

RULES = Rules(max_deals=2, trumps=True)
SECRET = "a private log line"


def _record(seed: int) -> tuple[bytes, Game]:
    """A real match of random legal cards, recorded as the referee records it, with private fields."""
    game, pick = Game(RULES, seed), random.Random(seed)
    record = replay_pb2.MatchRecord(
        format=FORMAT, match_id=f"m{seed}", seed=seed, rules=rules_to_proto(RULES)
    )
    for seat, (name, version) in enumerate((("alpha", "1"), ("beta", "2"))):
        record.players.add(seat=seat, name=name, version=version, self_reported_name=SECRET)
    while not game.over:
        deal = game.start_deal()
        plays = record.deals.add(number=deal.index + 1, dealer=deal.dealer, deck=codes(deal.deck)).plays
        while not deal.done:
            seat, card = deal.to_move, pick.choice(deal.legal_cards())
            game.play(card)
            plays.add(seat=seat, card=codes([card])[0])
    record.logs.add(seat=0, deal=1, trick=1, text=SECRET)
    winner = -1 if game.winner is None else game.winner
    record.result.CopyFrom(replay_pb2.ResultRecord(winner=winner, lines=game.lines, deals_played=2,
                                                   end_reason="COMPLETED", private_details=[SECRET, ""]))  # fmt: skip
    return encode_record(record), game


def _season(store: Store) -> dict[int, Game]:
    a = store.add_version("alpha", "o", content_hash="h-a", path="/b/a").version.id
    b = store.add_version("beta", "o", content_hash="h-b", path="/b/b").version.id
    games = {}
    with store.tx() as s:
        season = Season(name="ds", seed=1)
        s.add(season)
        s.flush()
        # (pair, seed, status, recorded): pair 0 both done; pair 1's twin still queued (hidden)
        for seq, (pair, seed, status) in enumerate(
            ((0, 5, "done"), (0, 5, "done"), (1, 6, "done"), (1, 6, "queued"))
        ):
            m = Match(season_id=season.id, pair=pair, version0_id=a, version1_id=b, seed=seed, status=status)
            s.add(m)
            s.flush()
            if status == "done":
                m.record_seq = seq + 1
                data, game = _record(seed * 10 + seq)
                s.add(Replay(match_id=m.id, data=data))
                games[m.id] = game
    return games


def _export(monkeypatch, database_url: str, *args: str) -> dict:
    monkeypatch.setenv("ARENA_DATABASE_URL", database_url)
    monkeypatch.delenv("ARENA_SERVER", raising=False)
    out = CliRunner().invoke(cli, ["export", "dataset", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_rows_replay_against_the_engine_and_hide_what_they_must(
    store, database_url, tmp_path, monkeypatch
) -> None:
    games = _season(store)
    shown = _export(monkeypatch, database_url, "ds", "--format", "jsonl", "--out", str(tmp_path / "d.jsonl"))
    text = (tmp_path / "d.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    assert SECRET not in text
    hidden = max(games)  # the match of pair 1: its twin is still queued
    assert {r["match"] for r in rows} == set(games) - {hidden}
    assert shown["rows"] == len(rows) == 64 * 2 and shown["matches"] == 2
    assert list(rows[0]) == [name for name, _, _ in COLUMNS] and rows[0]["schema_version"] == SCHEMA_VERSION
    for match_id in {r["match"] for r in rows}:
        mine = [r for r in rows if r["match"] == match_id]
        original = games[match_id]
        replay = Game(RULES, original.seed)
        for r in mine:
            if replay.deal is None or replay.deal.done:
                replay.start_deal()
            seat = replay.deal.to_move
            assert (r["seat"], r["bot"], r["opponent"]) == (
                seat,
                ("alpha", "beta")[seat],
                ("beta", "alpha")[seat],
            )
            assert encoding.from_string(r["view"]) == replay.view(seat)
            assert r["legal"] == codes(replay.deal.legal_cards()) and r["card"] in r["legal"]
            replay.play(encoding.from_string(r["view"]).legal[r["legal"].index(r["card"])])
            if replay.deal.done:
                summary = replay.deals[-1]
                for done in mine:
                    if done["deal"] == summary.index + 1:
                        assert done["deal_honours"] == summary.honours[done["seat"]]
                        assert done["deal_lines"] == summary.lines[done["seat"]]
        assert replay.lines == original.lines
        assert all(r["mover_lines"] == original.lines[r["seat"]] for r in mine)


def test_parquet_holds_the_same_rows_with_the_schema_version(
    store, database_url, tmp_path, monkeypatch
) -> None:
    from arena.env import dataset

    _season(store)
    _export(monkeypatch, database_url, "ds", "--format", "jsonl", "--out", str(tmp_path / "d.jsonl"))
    monkeypatch.setattr(dataset, "PAGE", 1)  # a match per query and 50 rows per row group: the streaming
    monkeypatch.setattr(dataset, "BATCH", 50)  # paths are taken, and give the same rows
    shown = _export(monkeypatch, database_url, "ds", "--out", str(tmp_path / "d.parquet"))
    assert pq.ParquetFile(tmp_path / "d.parquet").num_row_groups == 3  # 128 rows
    table = pq.read_table(tmp_path / "d.parquet")
    assert table.schema.metadata[b"elfern_dataset_schema"] == str(SCHEMA_VERSION).encode()
    lines = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert table.to_pylist() == lines and shown["rows"] == len(lines)


def test_an_unknown_season_is_one_line_and_no_file(store, database_url, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", database_url)
    monkeypatch.delenv("ARENA_SERVER", raising=False)
    out = CliRunner().invoke(cli, ["export", "dataset", "nope", "--out", str(tmp_path / "x.parquet")])
    assert out.exit_code != 0 and "no season named 'nope'" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "x.parquet").exists()


def test_the_export_refuses_to_run_against_a_server(tmp_path, monkeypatch) -> None:
    """The dataset is the organiser's, read from the local store; set to act on a server, it refuses."""
    monkeypatch.setenv("ARENA_SERVER", "127.0.0.1:50051")
    out = CliRunner().invoke(cli, ["export", "dataset", "ds", "--out", str(tmp_path / "x.parquet")])
    assert out.exit_code != 0 and "works on the local store only" in out.output
    assert not (tmp_path / "x.parquet").exists()

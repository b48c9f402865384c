"""`arena bench scale`: the synthetic store's content, its reuse, and the whole command at size S on
SQLite and PostgreSQL (a smoke run: every operation gets a row; no time is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from arena.bench.scale_build import DbKind, Size, build, ensure
from arena.bench.scale_ladder import STEPS
from arena.bench.scale_ops import Sample, cli_ops, grpc_ops, web_ops
from arena.bench.scale_rows import SEASON, Plan
from arena.proto.codec import decode_record
from arena.replay.export import record_to_json
from arena.replay.verify import replay_json
from arena.store import Store
from arena.store.models import (
    Bot,
    BotTally,
    BotVersion,
    Entry,
    Match,
    MatchLog,
    Owner,
    RatingChange,
    Replay,
    Season,
)

REPO = Path(__file__).resolve().parents[2]


def test_the_built_store_holds_a_ladder_with_pairs_ratings_and_real_replays(database_url, tmp_path):
    plan = Plan(bots=12, matches=600, seed=5, rules=["max_deals=3"])
    counts = build(database_url, plan, tmp_path)
    store = Store.open(database_url, home=tmp_path)
    try:
        with store.read() as s:
            table = {m.__tablename__: s.scalar(select(func.count()).select_from(m)) for m in
                     (Owner, Bot, BotVersion, Season, Entry, Match, Replay, RatingChange, MatchLog)}  # fmt: skip
            matches = s.scalars(select(Match).order_by(Match.id)).all()
            season = s.scalars(select(Season)).one()
            entries = s.scalars(select(Entry)).all()
            changes = s.scalar(select(func.count()).select_from(RatingChange))
            sample = s.scalars(select(Replay).order_by(Replay.match_id).limit(10)).all()
            tallied = s.scalar(select(func.sum(BotTally.matches)))
            data = [(r.match_id, r.data) for r in sample]
            if store.engine.dialect.name == "postgresql":  # vacuumed, as autovacuum would have by now:
                # the index-only scans of a bot's sealed matches need the visibility map (migration 0016)
                visible = s.scalar(text("SELECT relallvisible FROM pg_class WHERE oid = 'matches'::regclass"))
                assert visible and visible > 0
    finally:
        store.close()
    assert table == counts  # what the builder says it wrote is what is there
    assert (table["bots"], table["entries"], table["matches"], table["seasons"]) == (12, 12, 600, 1)
    assert table["bot_versions"] >= 12 and table["owners"] == 2
    states = Counter(m.status for m in matches)
    assert states["queued"] and states["running"] and states["done"] < 600
    done = [m for m in matches if m.status == "done"]
    assert table["replays"] == len(done) == season.recorded
    assert sorted(m.record_seq for m in done) == list(range(len(done)))
    rated = [m for m in done if not m.void]
    assert changes == 2 * len(rated)
    assert sum(e.rated for e in entries) == 2 * len(rated)
    assert sum(e.wins for e in entries) == sum(e.losses for e in entries)
    assert any(v != "OK" for m in done for v in m.verdicts)  # some faults
    assert tallied == 2 * len(done)  # the bots' tallies, as the recorder keeps them: each seat once
    pairs: dict[int, list[Match]] = {}
    for m in matches:
        assert m.pair is not None
        pairs.setdefault(m.pair, []).append(m)
    assert len(pairs) == 300
    for twins in pairs.values():  # duplicate pairs: one seed, the seats swapped
        a, b = twins
        assert a.seed == b.seed and (a.entry0_id, a.entry1_id) == (b.entry1_id, b.entry0_id)
    sealed = [p for p in pairs.values() if sorted(m.status for m in p) == ["done", "queued"]]
    assert sealed  # a finished match whose twin waits: not revealed
    by_id = {m.id: m for m in matches}
    for match_id, blob in data:  # real records: they re-simulate, under the season's rules
        verified = replay_json(record_to_json(decode_record(blob)))
        assert verified.match.rules.max_deals == 3 and season.rules == ["max_deals=3"]
        m = by_id[match_id]
        assert verified.match.winner == m.winner and verified.match.lines == list(m.lines)


def test_a_built_store_is_kept_and_reused_until_rebuild(tmp_path):
    first = ensure(Size.S, DbKind.SQLITE, seed=3, cache=tmp_path)
    store = Store.open(first.url, home=tmp_path)
    try:
        with store.tx() as s:
            s.add(Owner(name="marker", token_hash="m" * 64, token_prefix="m"))
    finally:
        store.close()
    again = ensure(Size.S, DbKind.SQLITE, seed=3, cache=tmp_path)
    stale = tmp_path / "s_s3_sqlite_0ldrev1s10n"  # a store built under another schema revision
    stale.mkdir()
    (tmp_path / "s_s3_sqlite_0ldrev1s10n.json").write_text("{}")
    rebuilt = ensure(Size.S, DbKind.SQLITE, seed=3, cache=tmp_path, rebuild=True)

    def markers() -> int:
        store = Store.open(first.url, home=tmp_path)
        try:
            with store.read() as s:
                return s.scalar(select(func.count()).select_from(Owner).where(Owner.name == "marker")) or 0
        finally:
            store.close()

    assert again == first  # the manifest, not a new build
    assert rebuilt.url == first.url and markers() == 0  # --rebuild starts from an empty database
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        first.key,
        f"{first.key}.json",
    ]  # the stale one went
    assert first.counts["matches"] == 2_000 and first.counts["bots"] == 20


@pytest.mark.parametrize("db", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_bench_scale_at_size_s_gives_a_row_for_every_operation(db, tmp_path):
    env = {**os.environ, "ARENA_HOME": str(tmp_path)}
    env.pop("ARENA_DATABASE_URL", None)
    argv = [sys.executable, "-m", "arena.cli", "bench", "scale", "--size", "S", "--db", db, "--reps", "1",
            "--seed", "29", "--cache", str(tmp_path / "cache"), "--json"]  # fmt: skip
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    rows = {r["op"]: r for r in out["rows"]}
    sample = Sample(SEASON, "bot00001", 1, 1, 0)
    expected = {op.name for op in web_ops(sample) + grpc_ops() + cli_ops(sample)} | {
        f"ladder {s}" for s in STEPS
    }
    assert set(rows) == expected
    assert all(r["db"] == db and r["size"] == "S" for r in rows.values())
    assert [r["op"] for r in out["rows"] if r["error"]] == []
    for r in rows.values():
        assert r["statements"] is not None and r["statements"] > 0, r  # counted in-process, every kind
        if r["kind"] in ("page", "json", "grpc"):
            assert r["bytes"] > 0 and r["rss_mib"] > 0
    assert (
        rows["match page (revealed)"]["bytes"] > rows["match page (sealed)"]["bytes"]
    )  # the board vs. the facts
    assert out["stores"][0]["counts"]["matches"] == 2_000
    kept = tmp_path / "cache" / out["stores"][0]["key"]
    private = [kept / "admin-token"] + ([kept / "arena.db"] if db == "sqlite" else [])
    assert [oct(p.stat().st_mode & 0o777) for p in private] == ["0o600"] * len(private)  # the operator's only

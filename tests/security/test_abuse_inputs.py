"""Bounded inputs (issue #31): every manifest field and every API string has a maximum, enforced where it
is parsed (bot.toml, gRPC requests, the HTTP API's bodies) and by the database, and the largest page of
a list call still fits in one gRPC message.

The attack this answers: a bundle whose `bot.toml` had a 5,000,000-character `language` was accepted;
from then on every spectator's `ListBots` failed with RESOURCE_EXHAUSTED (5 MB over gRPC's 4 MiB).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import DBAPIError

from arena import limits
from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import RateLimiter
from arena.proto import arena_pb2 as pb
from arena.sandbox.bundle import BundleError, load_bundle
from arena.service.core import Service
from arena.store import models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from service_support import ADMIN, Running, bundle_archive, serve_in_thread

HUGE = 5_000_000


@pytest.fixture
def served(store) -> Iterator[Running]:
    """The real `Arena` service on a loopback port over the store (SQLite and PostgreSQL)."""
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(), launcher="local")
    tokens = {"alice": add_owner(store, "alice")}
    address, stop, thread = serve_in_thread(service)
    try:
        yield Running(service, address, tokens)
    finally:
        stop.set()
        thread.join(10)


def _bundle(folder: Path, **fields: str) -> Path:
    """A bundle folder whose bot.toml has `fields` (TOML-quoted), a run command and its program."""
    folder.mkdir(parents=True)
    lines = [f'{key} = "{value}"' for key, value in fields.items()]
    (folder / "bot.toml").write_text("\n".join([*lines, 'run = ["python3", "bot.py"]', ""]))
    (folder / "bot.py").write_text("print('never run')\n")
    return folder


def _chunks(name: str, data: bytes) -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data)))
    for i in range(0, len(data), 64 * 1024):
        yield pb.SubmitBotChunk(data=data[i : i + 64 * 1024])


def _refusal(call, request, metadata=()) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, metadata=metadata)
    return err.value


# ---- the manifest ----------------------------------------------------------------------------------
def test_a_five_megabyte_language_is_refused_at_submit_and_listing_bots_still_works(served, tmp_path) -> None:
    stub = served.stub()
    alice = Running.auth(served.tokens["alice"])
    data = bundle_archive(_bundle(tmp_path / "huge", name="huge", language="x" * HUGE))
    assert len(data) < 1024 * 1024  # it compresses well: the upload cap is no defence
    refused = _refusal(stub.SubmitBot, _chunks("huge", data), alice)
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "`language` is 5,000,000 characters long; at most 32" in refused.details()
    assert len(refused.details()) < 1000
    listed = stub.ListBots(pb.ListBotsRequest())
    assert listed.bots == [] and listed.ByteSize() < 1000


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        (f'name = "{"n" * 65}"', "`name` is 65 characters long; at most 64"),
        (f'language = "{"l" * 33}"', "`language` is 33 characters long; at most 32"),
        (f'version = "{"v" * 65}"', "`version` is 65 characters long; at most 64"),
        (f'run = ["python3", "{"a" * 1025}"]', "a string of `run` is 1,025 characters long; at most 1,024"),
        (f'build = ["{"b" * 2000}"]', "a string of `build` is 2,000 characters long; at most 1,024"),
        ("build = [" + ", ".join(['"x"'] * 65) + "]", "`build` has 65 strings; at most 64"),
    ],
)
def test_every_manifest_field_has_a_maximum_named_in_the_error(tmp_path, toml: str, words: str) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    run = "" if toml.startswith("run") else 'run = ["python3", "bot.py"]\n'
    (folder / "bot.toml").write_text(f"{toml}\n{run}")
    (folder / "bot.py").write_text("")
    with pytest.raises(BundleError) as err:
        load_bundle(folder)
    assert words in str(err.value) and "bot.toml" in str(err.value)


def test_a_manifest_at_every_maximum_loads(tmp_path) -> None:
    fields = {"name": "n" * 64, "language": "l" * 32, "version": "v" * 64, "protocol": "grpc"}
    bundle = load_bundle(_bundle(tmp_path / "bot", **fields))
    assert (bundle.name, bundle.language, bundle.version) == ("n" * 64, "l" * 32, "v" * 64)


# ---- the database --------------------------------------------------------------------------------
def test_the_models_and_the_database_hold_every_column_to_its_limit(store) -> None:
    for (table, column), limit in limits.COLUMNS.items():
        declared = models.Base.metadata.tables[table].c[column].type
        if getattr(declared, "length", None) is not None:
            assert declared.length == limit.most, (table, column)
    engine = store.engine
    found = {}
    for table in {t for t, _ in limits.COLUMNS}:
        for check in inspect(engine).get_check_constraints(table):
            found[check["name"]] = check["sqltext"]
    for (table, column), limit in limits.COLUMNS.items():
        sql = found.get(f"ck_{table}_{column}_length", "")
        assert column in sql and f"<= {limit.most}" in sql, (table, column, sql)


def test_the_database_refuses_a_text_over_its_limit_even_past_the_parsers(store) -> None:
    """SQLite ignores `String(32)`: the CHECK constraints are what refuse a raw over-long write."""
    store.add_version("probe", "alice", content_hash="h" * 64, path="/p", language="python")
    for column, most in (("language", 32), ("protocol", 16)):
        with pytest.raises(DBAPIError), store.engine.begin() as conn:
            conn.execute(text(f"UPDATE bot_versions SET {column} = :v"), {"v": "x" * (most + 1)})
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE bots SET suspension_reason = :v"), {"v": "r" * 1000})
    with pytest.raises(DBAPIError), store.engine.begin() as conn:
        conn.execute(text("UPDATE bots SET suspension_reason = :v"), {"v": "r" * 1001})
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT length(language) FROM bot_versions")).scalar() == len("python")


# ---- API strings ---------------------------------------------------------------------------------
def test_every_grpc_string_is_bounded_and_the_error_names_field_maximum_and_length(served) -> None:
    stub = served.stub()
    admin = Running.auth(ADMIN)
    cases = [
        (
            stub.ListBots,
            pb.ListBotsRequest(owner="o" * 100_000),
            (),
            "owner is 100,000 characters long; at most 64",
        ),
        (stub.GetBot, pb.GetBotRequest(name="n" * 65), (), "name is 65 characters long; at most 64"),
        (
            stub.ListMatches,
            pb.ListMatchesRequest(bot="b" * 100),
            (),
            "bot is 100 characters long; at most 64",
        ),
        (
            stub.CreateSeason,
            pb.CreateSeasonRequest(name="s", rules=["flags=1", "x" * 65]),
            admin,
            "rules is 65 characters long; at most 64",
        ),
        (
            stub.CreateSeason,
            pb.CreateSeasonRequest(name="s", anchors={"a" * 100: 1000.0}),
            admin,
            "anchors is 100 characters long; at most 75",
        ),
        (
            stub.SuspendBot,
            pb.SuspendBotRequest(name="x", reason="r" * 501),
            admin,
            "reason is 501 characters long; at most 500",
        ),
        (
            stub.Challenge,
            pb.ChallengeRequest(my_bot="m" * 70, opponent="o"),
            Running.auth(served.tokens["alice"]),
            "my_bot is 70 characters long; at most 64",
        ),
    ]
    for call, request, metadata, words in cases:
        refused = _refusal(call, request, metadata)
        assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, (request, refused.details())
        assert words in refused.details(), refused.details()
    assert stub.ListSeasons(pb.ListSeasonsRequest()).seasons == []  # nothing was made


def test_every_http_body_string_is_bounded_with_the_same_words(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from arena.store import Store
    from arena.web.app import create_app

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    service = Service(store=Store.open(url, home=tmp_path), admin=AdminToken.of(ADMIN), limiter=RateLimiter())
    client = TestClient(create_app(url, tmp_path, service=service))
    admin = {"Authorization": f"Bearer {ADMIN}"}
    cases = [
        ("/api/seasons", {"name": "s" * 65}, "name is 65 characters long; at most 64"),
        ("/api/seasons", {"name": "s", "rules": ["r" * 65]}, "rules is 65 characters long; at most 64"),
        (
            "/api/seasons",
            {"name": "s", "anchors": {"a" * 80: 1.0}},
            "anchors is 80 characters long; at most 75",
        ),
        ("/api/bots/x/suspend", {"reason": "r" * 501}, "reason is 501 characters long; at most 500"),
        ("/api/owners", {"name": "o" * 65}, "name is 65 characters long; at most 64"),
        ("/api/challenges", {"my_bot": "m" * 65, "opponent": "o"}, "name is 65 characters long; at most 64"),
    ]
    for path, body, words in cases:
        answer = client.post(path, json=body, headers=admin)
        assert answer.status_code == 422, (path, answer.text[:300])
        assert words in answer.json()["detail"], answer.json()


# ---- the size of a reply -----------------------------------------------------------------------------
BIGGEST_BOTS = 420  # at the maxima below, one reply with all of them would be over 4 MiB
VERSIONS = 25  # more than a BotInfo shows


def _fill_with_the_biggest_bots(store) -> list[str]:
    """BIGGEST_BOTS bots with every text a caller can set at its maximum, in bytes too (4-byte
    characters where the name rule allows any), each suspended and with VERSIONS versions."""
    from datetime import datetime

    from sqlalchemy import insert

    wide = "\U0001f0a1"  # a playing card: 4 bytes in UTF-8
    names = [f"{i:04d}".ljust(limits.NAME.most, "b") for i in range(BIGGEST_BOTS)]
    when = datetime(2026, 12, 7, 10, 0, 0)
    bots = [
        {
            "id": i + 1,
            "name": name,
            "owner": "o" * limits.NAME.most,
            "created_at": when,
            "retired": False,
            "suspended": True,
            "suspension_reason": wide * limits.SUSPENSION_REASON.most,
        }
        for i, name in enumerate(names)
    ]
    versions = [
        {
            "bot_id": i + 1,
            "number": n,
            "content_hash": f"{n:064x}",
            "path": "/nowhere",
            "language": wide * limits.LANGUAGE.most,
            "protocol": "p" * limits.PROTOCOL.most,
            "created_at": when,
            "build_ok": False,
            "build_log": "",
            "ladder": True,
        }
        for i in range(BIGGEST_BOTS)
        for n in range(1, VERSIONS + 1)
    ]
    with store.tx() as s:
        s.execute(insert(models.Bot), bots)
        s.execute(insert(models.BotVersion), versions)
    return names


def test_the_largest_possible_list_bots_page_is_far_under_the_grpc_limit(served) -> None:
    names = _fill_with_the_biggest_bots(served.service.store)
    stub = served.stub()
    bound = limits.BOTS_PAGE * 9_098 + 66  # the arithmetic of arena/limits.py
    seen: list[str] = []
    token = ""
    for _ in range(BIGGEST_BOTS):
        page = stub.ListBots(pb.ListBotsRequest(include_retired=True, limit=10**6, page_token=token))
        assert len(page.bots) <= limits.BOTS_PAGE and page.ByteSize() <= bound < limits.GRPC_MESSAGE // 4
        seen += [b.name for b in page.bots]
        token = page.next_page_token
        if not token:
            break
    assert seen == names  # every bot once, in name order, across the pages
    first = stub.ListBots(pb.ListBotsRequest())
    assert len(first.bots) == limits.BOTS_PAGE and first.ByteSize() > 0.9 * bound  # the bound is tight
    shown = first.bots[0]
    assert shown.version_count == VERSIONS and [v.number for v in shown.versions] == list(range(6, 26))
    assert len(shown.suspension_reason.encode()) == 4 * limits.SUSPENSION_REASON.most
    one = stub.GetBot(pb.GetBotRequest(name=names[0]))
    assert len(one.versions) == limits.VERSIONS_SHOWN and one.ByteSize() < 64 * 1024
    assert (
        len(pb.ListBotsResponse(bots=[*first.bots] * 5).SerializeToString()) > limits.GRPC_MESSAGE
    )  # unpaged


def test_a_chatty_bots_logs_fit_one_reply_and_say_what_was_left_out(served) -> None:
    """A bot may write about 2 MB of log a match and 256 KiB a build: its owner's GetBotLogs stays
    within 3 MiB, newest first, and counts what it left out (the reply was 12 MB, over gRPC's 4 MiB)."""
    from sqlalchemy import insert

    store = served.service.store
    for n in range(25):  # 25 versions, each with a full build log
        store.add_version("chatty", "alice", content_hash=f"{n:064x}", path="/p", build_log="b" * 256 * 1024)
    store.add_version("quiet", "bob", content_hash="q" * 64, path="/q")
    chatty, quiet = store.version_by_id(1), store.version_by_id(26)
    assert (chatty.bot.name, quiet.bot.name) == ("chatty", "quiet")
    matches = [
        {
            "id": i + 1,
            "kind": "compare",
            "version0_id": chatty.id,
            "version1_id": quiet.id,
            "seed": 1000 + i,
            "status": "done",
            "verdicts": ["OK", "OK"],
            "verdict_details": ["", ""],
            "lines": [0, 0],
            "rules": [],
            "time_control": {},
        }
        for i in range(6)
    ]
    logs = [{"match_id": i + 1, "seat": 0, "text": f"match {i + 1} " + "L" * 2_000_000} for i in range(6)]
    with store.tx() as s:
        s.execute(insert(models.Match), matches)
        s.execute(insert(models.MatchLog), logs)
    answer = served.stub().GetBotLogs(
        pb.GetBotLogsRequest(name="chatty", limit=200), metadata=Running.auth(served.tokens["alice"])
    )
    assert answer.ByteSize() <= limits.LOGS_REPLY
    assert [b.version for b in answer.builds] == list(range(6, 26))  # the newest 20
    assert all(
        len(b.log.encode()) <= limits.BUILD_LOG_SHOWN and "bytes of this build log are cut" in b.log
        for b in answer.builds
    )
    assert [e.match_id for e in answer.matches] == [6]  # newest first, while they fit: 1.25 + 1 MiB
    assert answer.left_out == 5 and answer.held == 0
    for entry in answer.matches:
        assert (
            len(entry.text.encode()) <= limits.LOG_SHOWN
            and entry.text.startswith("[arena] the first ")
            and "bytes of this log are cut" in entry.text[:200]
        )
    one = served.stub().GetBotLogs(
        pb.GetBotLogsRequest(name="chatty", match_id=1), metadata=Running.auth(served.tokens["alice"])
    )
    assert [e.match_id for e in one.matches] == [1] and one.left_out == 0  # the one left out, asked for


def test_migration_0008_cuts_old_over_long_text_checks_and_downgrades(database_url) -> None:
    """A store with an over-long text from before the limits upgrades (the text is cut to its
    maximum), refuses a new one, and downgrades to no constraint with its rows intact."""
    from alembic import command

    from arena.store.db import make_engine
    from arena.store.migrate import alembic_config, upgrade

    engine = make_engine(database_url)
    try:
        upgrade(engine, "0007")
        lang = "x" * (100 if engine.dialect.name == "sqlite" else 32)  # PostgreSQL's varchar held it to 32
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO bots (id, name, owner, created_at, retired, suspended, suspension_reason)"
                    " VALUES (1, 'old', 'o', CURRENT_TIMESTAMP, false, true, :r)"
                ),
                {"r": "r" * 5000},
            )
            conn.execute(
                text(
                    "INSERT INTO bot_versions (id, bot_id, number, content_hash, path, language, protocol,"
                    " created_at, build_ok, build_log, ladder)"
                    " VALUES (1, 1, 1, 'h', '/p', :l, 'grpc', CURRENT_TIMESTAMP, true, '', true)"
                ),
                {"l": lang},
            )
        upgrade(engine, "0008")
        with engine.connect() as conn:
            row = conn.execute(text("SELECT length(suspension_reason) FROM bots")).scalar()
            assert row == limits.SUSPENSION_REASON.most
            assert conn.execute(text("SELECT length(language) FROM bot_versions")).scalar() == 32
        with pytest.raises(DBAPIError), engine.begin() as conn:
            conn.execute(text("UPDATE bots SET suspension_reason = :r"), {"r": "r" * 1001})
        checks = {c["name"] for c in inspect(engine).get_check_constraints("bots")}
        assert {"ck_bots_name_length", "ck_bots_suspension_reason_length"} <= checks
        config = alembic_config(engine)
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0007")
        assert not {c["name"] for c in inspect(engine).get_check_constraints("bots")} & checks
        with engine.begin() as conn:
            conn.execute(text("UPDATE bots SET suspension_reason = :r"), {"r": "r" * 1001})  # allowed again
            assert conn.execute(text("SELECT count(*) FROM bot_versions")).scalar() == 1
        upgrade(engine, "0008")  # and up again, cutting what the downgrade let in
        with engine.connect() as conn:
            assert conn.execute(text("SELECT length(suspension_reason) FROM bots")).scalar() == 1000
    finally:
        engine.dispose()

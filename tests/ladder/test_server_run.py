"""`ServerRun`, what `arena serve --workers` plays: queued challenges first, then running seasons; a
closing season freezes once its finals are recorded; a bot submitted to a stable season gets played.
And `start_players`/`stop_players`: the real spawned process playing, and stopping with its leases
released.

The first test and the daemon's play through the real pool (child processes) and the real bwrap
sandbox with the sample bots; the season-logic tests use `engine_play` (the engine in-process) for
speed, as tests/ladder/test_season.py does.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import engine_play
import pytest
from sqlalchemy import func, select

from arena.access.roles import Principal
from arena.ladder.seasons import close_season, create_season, start_season
from arena.ladder.server_run import ServerRun
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.ops_challenge import challenge
from arena.store import MatchJob, Store
from arena.store.models import BotVersion, Match, RatingChange, Season
from arena.workers.daemon import start_players, stop_players
from arena.workers.execute import run_job
from arena.workers.live import read_events
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

REPO = Path(__file__).resolve().parents[2]


def _needs_bwrap() -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("the real sandbox needs bwrap")


class Bounded:
    """A JobSource that hands out at most `n` jobs of `source` (a running season never runs dry)."""

    def __init__(self, source: ServerRun, n: int) -> None:
        self.source, self.left = source, n
        self.ids: list[int] = []

    def next_job(self) -> MatchJob | None:
        if self.left <= 0:
            return None
        job = self.source.next_job()
        if job is not None:
            self.left -= 1
            self.ids.append(job.match_id)
        return job

    def __getattr__(self, name: str):  # renew, record, fail, release
        return getattr(self.source, name)


def _submit_samples(store: Store, launcher: str = "bwrap") -> None:
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        submit_bundle(
            store, REPO / "sample_bots" / "python" / name, name=name, owner=owner, launcher=launcher
        )


def _queue_challenge(store: Store, opponent: str = "greedy") -> int:
    service = Service(store, launcher="bwrap")
    req = pb.ChallengeRequest(my_bot="random", opponent=opponent, rules=["flags=1"])
    return challenge(service, Principal("owner", "ann"), req).match.id


def test_a_challenge_then_a_running_seasons_matches_are_played_and_recorded(store: Store, tmp_path) -> None:
    _needs_bwrap()
    _submit_samples(store)
    create_season(store, "s1", rules=["flags=1"], seed=3)
    start_season(store, "s1")
    challenge_id = _queue_challenge(store)
    live = tmp_path / "live"
    live.mkdir()
    source = Bounded(ServerRun(store, launcher="bwrap", live_dir=live, refresh=0), 3)
    progress = run_pool(source, run_job, concurrency=2)  # real child processes, the real sandbox
    assert (progress.done, progress.failed) == (3, 0)
    assert source.ids[0] == challenge_id  # challenges come first
    with store.read() as s:
        played = {m.id: m for m in s.scalars(select(Match).where(Match.id.in_(source.ids)))}
        rated = set(s.scalars(select(RatingChange.match_id)))
        season_id = s.scalar(select(Season.id).where(Season.name == "s1"))
    assert all(
        m.status == "done" and m.verdicts == ["OK", "OK"] and m.deals_played > 0 for m in played.values()
    )
    ch = played[challenge_id]
    assert ch.kind == "challenge" and ch.season_id is None and challenge_id not in rated  # never rated
    ladder = [m for i, m in played.items() if i != challenge_id]
    assert [(m.kind, m.season_id) for m in ladder] == [("ladder", season_id)] * 2
    assert all(m.id in rated for m in ladder)
    for match_id in source.ids:  # each match wrote its live file, for WatchMatch
        events = read_events(live / f"m{match_id}.jsonl")
        assert events and any(e.get("kind") == "trick" for e in events), events[:3]


def _engine_submit(store: Store, tmp_path, name: str, owner: str, strategy: str = "random") -> None:
    submit_bundle(store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner)


def test_a_closing_season_plays_its_finals_and_freezes(store: Store, tmp_path) -> None:
    for name, owner, strategy in (("high", "ann", "high"), ("low", "bob", "low"), ("rand", "cat", "random")):
        _engine_submit(store, tmp_path, name, owner, strategy)
    create_season(store, "s2", rules=["flags=1"], seed=5)
    start_season(store, "s2")
    run = ServerRun(store, launcher="local", refresh=0)
    run_pool(Bounded(run, 4), engine_play.play, concurrency=2, threads=True)
    assert store.season("s2").status == "running"
    finals = close_season(store, "s2")
    assert finals == 6  # three bots, each pair twice (duplicate)
    progress = run_pool(run, engine_play.play, concurrency=2, threads=True)  # ends by itself: frozen
    assert progress.done == finals
    assert store.season("s2").status == "frozen"
    assert "s2" not in run.seasons
    with store.read() as s:
        kinds = dict(
            s.execute(
                select(Match.kind, func.count()).where(Match.status == "done").group_by(Match.kind)
            ).all()
        )
        open_ = s.scalar(
            select(func.count()).select_from(Match).where(Match.status.in_(("queued", "running")))
        )
    assert kinds.get("final") == finals and open_ == 0
    assert run.next_job() is None  # a frozen season is not played again


def test_a_bot_submitted_to_a_stable_season_is_entered_and_played(store: Store, tmp_path) -> None:
    _engine_submit(store, tmp_path, "alone", "ann")
    create_season(store, "s3", rules=["flags=1"], seed=7)
    start_season(store, "s3")
    run = ServerRun(store, launcher="local", refresh=0)
    assert run.next_job() is None  # one bot: nothing to play, the season counts as stable
    _engine_submit(store, tmp_path, "late", "bob")
    progress = run_pool(Bounded(run, 2), engine_play.play, concurrency=1, threads=True)
    assert progress.done == 2
    with store.read() as s:
        pairs = {
            tuple(sorted(s.get_one(BotVersion, v).bot.name for v in (m.version0_id, m.version1_id)))
            for m in s.scalars(select(Match).where(Match.status == "done"))
        }
    assert pairs == {("alone", "late")}


def test_the_servers_seasons_settle_to_its_stable_ci(store: Store, tmp_path) -> None:
    """`arena serve --stable-ci` reaches each season the server plays (the load bench asks for a
    target no season reaches, so that its ladder has work throughout)."""
    from arena.ladder.runner import STABLE_CI

    _engine_submit(store, tmp_path, "one", "ann")
    _engine_submit(store, tmp_path, "two", "bob")
    create_season(store, "s5", rules=["flags=1"], seed=9)
    start_season(store, "s5")
    default, asked = (
        ServerRun(store, launcher="local", refresh=0),
        ServerRun(store, launcher="local", refresh=0, stable_ci=0.01),
    )
    assert default.next_job() is not None and asked.next_job() is not None
    assert default.seasons["s5"].stable_ci == STABLE_CI and asked.seasons["s5"].stable_ci == 0.01


def test_a_job_that_keeps_failing_is_given_up_with_its_end_time(store: Store, tmp_path) -> None:
    _engine_submit(store, tmp_path, "a", "ann", "RAISE")
    _engine_submit(store, tmp_path, "b", "bob")
    create_season(store, "s4", rules=["flags=1"], seed=9)
    start_season(store, "s4")
    run = ServerRun(store, launcher="local", refresh=0)
    run_pool(Bounded(run, 3), engine_play.play, concurrency=1, threads=True)
    with store.read() as s:
        failed = list(s.scalars(select(Match).where(Match.status == "failed")))
    assert len(failed) == 1 and failed[0].attempts == 3 and failed[0].finished_at is not None
    assert failed[0].verdict_details == ["RuntimeError: executor broke"] * 2


# ---- the players' process (`arena serve --workers`) ----------------------------------------------
SLOW_BOT = """import time
from arena.sdk import Bot, run


class Slow(Bot):
    def play(self, view):
        time.sleep(0.2)
        return view.legal[0]


run(Slow())
"""


def _wait_for(what: str, check, proc, timeout: float = 240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        assert proc.is_alive(), f"the players' process died (exit code {proc.exitcode}) waiting for {what}"
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def test_the_players_process_plays_a_challenge_and_stops_releasing_its_leases(tmp_path) -> None:
    _needs_bwrap()
    home = tmp_path / "home"
    url = f"sqlite:///{home / 'arena.db'}"
    home.mkdir()
    store = Store.open(url, home=home)
    try:
        submit_bundle(store, REPO / "sample_bots" / "python" / "random", name="random", owner="ann")
        slow = tmp_path / "slow"
        slow.mkdir()
        (slow / "bot.toml").write_text('name = "slow"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
        (slow / "bot.py").write_text(SLOW_BOT)
        submit_bundle(store, slow, name="slow", owner="cat", launcher="bwrap")
        challenge_id = _queue_challenge(store, "slow")
        proc = start_players(url, home, 1, "bwrap")
        try:

            def done() -> bool:
                with store.read() as s:
                    return s.get(Match, challenge_id).status == "done"

            _wait_for("the challenge to be recorded", done, proc)
            assert (home / "live" / f"m{challenge_id}.jsonl").is_file()
            create_season(store, "s5", rules=["flags=3"], seed=11)
            start_season(store, "s5")

            def running() -> int | None:  # a ladder match in flight (every one has the slow bot)
                with store.read() as s:
                    return s.scalar(select(Match.id).where(Match.kind == "ladder", Match.status == "running"))

            in_flight = _wait_for("a ladder match to start", running, proc)
        finally:  # a Ctrl-C reaches the whole process group: SIGINT, then the server's SIGTERM
            if proc.is_alive():
                os.kill(proc.pid, signal.SIGINT)
            code = stop_players(proc)
        assert code == 0  # one clean stop, no traceback from the second signal
        with store.read() as s:
            m = s.get(Match, in_flight)
            still = s.scalar(select(func.count()).select_from(Match).where(Match.status == "running"))
        assert still == 0  # nothing left claimed by the stopped process
        assert (m.status, m.lease_owner, m.started_at) == ("queued", None, None)  # back in the queue
    finally:
        store.close()
    assert not [p for p in os.listdir("/proc") if p.isdigit() and int(p) == proc.pid]


def test_an_idle_players_process_stops_once_on_ctrl_c_then_sigterm(tmp_path) -> None:
    """Ctrl-C in the server's terminal reaches the players too, then the server sends SIGTERM: the
    second signal must not interrupt the first one's clean-up (it did: a traceback, exit code 1)."""
    home = tmp_path / "home"
    home.mkdir()
    url = f"sqlite:///{home / 'arena.db'}"
    Store.open(url, home=home).close()
    proc = start_players(url, home, 1, "local")
    try:

        def store_open() -> bool:  # the handlers are in place before the store is opened
            fds = Path(f"/proc/{proc.pid}/fd")
            try:
                return any(os.readlink(fd).endswith("arena.db") for fd in fds.iterdir())
            except OSError:
                return False

        _wait_for("the players to open the store", store_open, proc)
        os.kill(proc.pid, signal.SIGINT)
        proc.terminate()
    finally:
        code = stop_players(proc)
    assert code == 0

"""The server's players are batch work: the players' process, its pool, each match's process and the
bots it launches all run at a lower CPU priority than the server that started them, so a spectator's
read wins the CPU over a bot's move (arena/workers/daemon.py, docs/deploy.md "Under load").

The real spawned players' process plays a real challenge against a bot that sleeps on every move;
while the match is in flight, every task (thread) of every process under the players' process is
read from /proc.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from arena.access.roles import Principal
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.ops_challenge import challenge
from arena.store import Store
from arena.store.models import Match
from arena.workers.daemon import PLAYERS_NICE, start_players, stop_players
from arena.workers.submit import submit_bundle

REPO = Path(__file__).resolve().parents[2]
SLOW_BOT = """import time
from arena.sdk import Bot, run


class Slow(Bot):
    def play(self, view):
        time.sleep(0.5)
        return view.legal[0]


run(Slow())
"""


def _stat(pid: int, task: int | None = None) -> list[str]:
    path = f"/proc/{pid}/stat" if task is None else f"/proc/{pid}/task/{task}/stat"
    text = Path(path).read_text()
    return text[text.rindex(")") + 2 :].split()  # fields from the 3rd (state) on


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(_stat(int(entry))[1]), []).append(int(entry))
            except (OSError, IndexError):
                continue  # ended meanwhile
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack += children.get(pid, [])
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""  # ended meanwhile


def _task_nices(pids: list[int]) -> dict[tuple[int, int], int]:
    """Each task's niceness (field 19 of stat), by (process, thread)."""
    nices = {}
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                nices[(pid, int(task))] = int(_stat(pid, int(task))[16])
        except OSError:
            continue  # ended meanwhile
    return nices


@pytest.mark.parametrize("nice", [PLAYERS_NICE, 0])  # the default, and `arena serve --players-nice 0`
def test_the_players_and_their_bots_run_at_a_lower_priority_than_the_server(tmp_path, nice: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    url = f"sqlite:///{home / 'arena.db'}"
    store = Store.open(url, home=home)
    server_nice = os.nice(0)
    if server_nice + nice > 19:
        pytest.skip("this test already runs at the lowest priority")
    try:
        submit_bundle(
            store, REPO / "sample_bots" / "python" / "random", name="random", owner="ann", launcher="local"
        )
        slow = tmp_path / "slow"
        slow.mkdir()
        (slow / "bot.toml").write_text('name = "slow"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
        (slow / "bot.py").write_text(SLOW_BOT)
        submit_bundle(store, slow, name="slow", owner="cat", launcher="local")
        service = Service(store, launcher="local")
        req = pb.ChallengeRequest(my_bot="random", opponent="slow", rules=["flags=3"])
        match_id = challenge(service, Principal("owner", "ann"), req).match.id
        proc = start_players(url, home, 1, "local", nice)
        try:
            seen: dict[tuple[int, int], int] = {}
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # until both bots' processes have been seen
                assert proc.is_alive(), f"the players' process died (exit code {proc.exitcode})"
                pids = _descendants(proc.pid)
                seen.update(_task_nices(pids))
                if sum(b"bot.py" in _cmdline(p) for p in pids) >= 2:
                    break
                with store.read() as s:
                    assert s.get_one(Match, match_id).status != "done", (
                        "the match ended before both bots were seen"
                    )
                time.sleep(0.05)
            else:
                pytest.fail("the bots' processes never appeared")
        finally:
            stop_players(proc)
    finally:
        store.close()
    assert len({pid for pid, _ in seen}) >= 3  # the players' process, the match's, the two bots at least
    assert all(value == server_nice + nice for value in seen.values()), seen
    assert os.nice(0) == server_nice  # the server's own priority is untouched

"""Reproduction (issue 13 §1): the same seed gives the same match, byte for byte, for every pair
of sample bots in every language, and the "reproduce" line `arena play` prints for a failure fails
at the same deal, trick and card.

Every sample bot takes its random choices from Welcome.bot_seed (the Python SDK's self.rng, the
Node and C++ samples' SplitMix64) and bounds its search in nodes, not time. The match id and the
commitment salt differ between the two runs, so a bot seeded from either would fail here.
All matches run in the bwrap sandbox, one deal each, a few at a time (they mostly wait on start-up).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.engine import Rules
from arena.proto import replay_pb2
from arena.proto.codec import decode_record, strip_timing
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.languages import missing_tools
from arena.workers.match import play_match

HERE = Path(__file__).resolve().parent
SAMPLE_ROOT = HERE.parents[1] / "sample_bots"
# Every sample bundle, whatever its language: a new sample joins the matrix by existing.
SAMPLES = sorted(
    str(toml.parent.relative_to(SAMPLE_ROOT))
    for toml in SAMPLE_ROOT.rglob("bot.toml")
    if "node_modules" not in toml.parts and "build" not in toml.parts
)
#: Ports of the greedy rule with no random choice at all (test_greedy_ports.py pins their every move
#: to the Python greedy bot's), and the Node sample's code typed in TypeScript (the same runtime, rule
#: and seeded generator as `node`, which plays every pair): each plays the random bot only, which keeps
#: the matrix's time (it grows with the square of the samples) where it was when they came.
RULE_PORTS = ("stdio/csharp", "stdio/go", "stdio/java", "stdio/ruby", "stdio/rust", "typescript")
PAIRS = [
    (a, b)
    for a, b in itertools.combinations(SAMPLES, 2)
    if not ({a, b} & set(RULE_PORTS)) or {a, b} - set(RULE_PORTS) == {"python/random"}
]
#: Roomy clocks: this test is about determinism, not speed, and every sample bounds its search in
#: nodes, so a longer clock changes no move. With the default move clock (1 s and a 10 s bank) and
#: 30 s to start, two runs on a busy CI machine ended before their first card, verdicts unrecorded;
#: a stall past the start-up or first-move clock fits that, and the assertions now name the verdicts.
CLOCK = TimeControl(startup=120.0, move=30.0, bank=120.0)


@functools.cache
def _missing_toolchain(bundle: str) -> str | None:
    """Why a sample cannot run here, or None (the same conditions as test_languages.py)."""
    need = {"node": ("node", "npm"), "cpp": ("g++", "make", "protoc", "grpc_cpp_plugin", "pkg-config"),
            "stdio/c": ("gcc",)}.get(bundle, ())  # fmt: skip
    missing = [t for t in need if shutil.which(t) is None]
    if bundle in RULE_PORTS:
        missing = missing_tools(tomllib.loads((SAMPLE_ROOT / bundle / "bot.toml").read_text())["language"])
    if missing:
        return f"{bundle}: toolchain missing: {', '.join(missing)}"
    if bundle in ("node", "typescript") and not (SAMPLE_ROOT / bundle / ".npm-cache").is_dir():
        return f"{bundle}: sample_bots/{bundle}/.npm-cache is empty (run `make setup`)"
    if bundle == "cpp" and subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode:
        return "cpp: libgrpc++-dev / libprotobuf-dev missing"
    return None


def comparable(record: replay_pb2.MatchRecord) -> bytes:
    """The record without what legitimately differs between two runs of one seed: timings, the
    match id and the commitment (its salt is drawn per run)."""
    out = strip_timing(record)
    for name in ("match_id", "commitment", "salt"):
        out.ClearField(name)
    return out.SerializeToString(deterministic=True)


@pytest.fixture(scope="module")
def matrix(sandbox, clean_copy) -> dict[tuple[str, str], list]:
    """Every pair of runnable samples, twice with the same seed (one deal): pair -> two outcomes."""
    runnable = [b for b in SAMPLES if _missing_toolchain(b) is None]
    bundles = {b: load_bundle(clean_copy(b)) for b in runnable}
    jobs = [
        (pair, seed)
        for seed, pair in enumerate(PAIRS, start=700)
        if pair[0] in bundles and pair[1] in bundles
        for _ in range(2)
    ]

    def run(job):
        (a, b), seed = job
        return play_match(
            (bundles[a], bundles[b]),
            rules=Rules(max_deals=1),
            seed=seed,
            time_control=CLOCK,
            launcher=sandbox,
        )

    # A sample with a build step builds on its first launch: one match each, one at a time, so
    # that no two matches build the same bundle at once; then the rest, a few at a time.
    first = []
    for name in (b for b, bundle in bundles.items() if bundle.build):
        first.append(next(i for i, (pair, _) in enumerate(jobs) if name in pair and i not in first))
    outcomes = {i: run(jobs[i]) for i in first}
    rest = [i for i in range(len(jobs)) if i not in outcomes]
    with ThreadPoolExecutor(max_workers=3) as pool:
        outcomes.update(zip(rest, pool.map(lambda i: run(jobs[i]), rest), strict=True))
    found: dict[tuple[str, str], list] = {}
    for i, (pair, _) in enumerate(jobs):
        found.setdefault(pair, []).append(outcomes[i])
    return found


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-vs-{b}" for a, b in PAIRS])
def test_the_same_seed_replays_the_same_match(pair: tuple[str, str], matrix) -> None:
    for bundle in pair:
        if reason := _missing_toolchain(bundle):
            pytest.skip(reason)
    first, again = matrix[pair]
    assert first.verdicts == ("OK", "OK"), first.verdict_details
    assert again.verdicts == ("OK", "OK"), again.verdict_details
    assert first.match_id != again.match_id, "the runs differ in match id (a bot must not seed from it)"
    assert first.record.salt != again.record.salt
    plays = [(p.seat, p.card) for d in first.record.deals for p in d.plays]
    assert len(plays) == 32, "one whole deal"
    assert plays == [(p.seat, p.card) for d in again.record.deals for p in d.plays]
    assert comparable(first.record) == comparable(again.record)


FAILED_AT = re.compile(r"^ILLEGAL_MOVE for wobbly \(seat 0\) at deal (\d+), trick (\d+), turn (\d+)$", re.M)


def _play(args: list[str]) -> tuple[str, tuple[str, ...], str, replay_pb2.MatchRecord]:
    """`arena play ARGS` as a user runs it: (output, where it failed, reproduce line, record)."""
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output  # 1: a seat got a fault verdict (issue 13 §3)
    text = res.output
    at = FAILED_AT.search(text)
    assert at, f"no ILLEGAL_MOVE line for the wobbly bot in:\n{text}"
    again = re.search(r"^\s*reproduce: (.+)$", text, re.M)
    replay = re.search(r"^\s*replay: (\S+)", text, re.M)
    assert again and replay, text
    return text, at.groups(), again.group(1), decode_record(Path(replay.group(1)).read_bytes())


def test_a_failing_bots_reproduce_line_fails_at_the_same_deal_trick_and_card(tmp_path, monkeypatch) -> None:
    # The wobbly bot slips an illegal card where its bot_seed says: for seed 3, in deal 2. It sits
    # in a folder with a space in its name, so the printed line must quote it to be pasted.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    wobbly = tmp_path / "my bots" / "wobbly"
    shutil.copytree(HERE / "bots" / "wobbly", wobbly)
    rand = str(SAMPLE_ROOT / "python" / "random")
    args = ["play", str(wobbly), rand, "--seed", "3", "--rules", "scoring=tendler", "--deals", "3"]
    text, at, line, record = _play(args)
    assert at[0] == "2", f"seed 3 fails in deal 2, not at {at}"
    argv = shlex.split(line)
    assert argv == ["arena", *args], "the line names every option that shapes the match"
    again_text, again_at, again_line, again_record = _play(argv[1:])
    assert again_at == at, "the reproduce run fails at the same deal, trick and turn"
    slip = [x.text for x in record.logs if x.seat == 0 and x.text.startswith("slipping ")]
    assert slip and slip == [
        x.text for x in again_record.logs if x.seat == 0 and x.text.startswith("slipping ")
    ]
    card = slip[-1].split()[1]
    assert f"played {card}" in record.result.details[0], "the same card, named in the verdict"
    assert record.result.details == again_record.result.details
    assert again_line == line
    assert comparable(record) == comparable(again_record)


def test_tactician_against_random_seed_7_twice_gives_identical_plays(tmp_path, monkeypatch) -> None:
    # The "done means", exactly as written: `arena play tactician random --seed 7 --json`.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    bots = [str(SAMPLE_ROOT / "python" / name) for name in ("tactician", "random")]
    runs = []
    for n in range(2):
        res = CliRunner().invoke(
            cli, ["play", *bots, "--seed", "7", "--json", "--out", f"run{n}.replay"], catch_exceptions=False
        )
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        assert summary["verdicts"] == ["OK", "OK"]
        runs.append((summary, decode_record((tmp_path / f"run{n}.replay").read_bytes())))
    (first, first_record), (again, again_record) = runs
    assert first["match_id"] != again["match_id"]
    for key in ("match_id", "replay"):
        first.pop(key), again.pop(key)
    assert first == again
    assert [p.card for d in first_record.deals for p in d.plays] == [
        p.card for d in again_record.deals for p in d.plays
    ]
    assert comparable(first_record) == comparable(again_record)

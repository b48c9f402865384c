"""The stdio ports of the greedy bot choose exactly as sample_bots/python/greedy does, so each is
"at least as good as greedy" by construction: the same turn lines (written as the stdio bridge writes
them) go to the port, run on the host, and to greedy_strategy.choose, and every answer must match."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from greedy_strategy import choose

from arena.sandbox.languages import missing_tools

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "stdio"
CARDS = [r + s for r in "789TJQKA" for s in "CDHS"]

#: sample -> (language, build command or None, run command), run in a copy of the sample.
PORTS = {
    "ruby": ("ruby", None, ["ruby", "bot.rb"]),
    "java": ("java", ["javac", "-d", "classes", "Bot.java"], ["java", "-cp", "classes", "Bot"]),
    "go": ("go", ["go", "build", "-o", "bot", "."], ["./bot"]),
    "rust": (
        "rust",
        ["cargo", "build", "--release", "--offline", "--quiet"],
        ["target/release/elfern-rust-bot"],
    ),
    "csharp": ("csharp", ["mcs", "-optimize+", "-out:bot.exe", "Bot.cs"], ["mono", "bot.exe"]),
    "c": ("c", ["gcc", "-O2", "-o", "bot", "bot.c"], ["./bot"]),
}


def _turns(n: int) -> list[tuple[list[str], str, str]]:
    """(legal cards, card led or "", trump suit or "") for n turns drawn from a fixed seed; ties
    (two cards of one rank) and every branch of the rule come up many times."""
    rng = random.Random(15)
    out = []
    for _ in range(n):
        lead = rng.choice(["", rng.choice(CARDS)])
        legal = rng.sample([c for c in CARDS if c != lead], rng.randint(1, 6))
        out.append((legal, lead, rng.choice(["", *"CDHS"])))
    return out


def _line(turn_id: int, legal: list[str], lead: str, trump: str) -> str:
    view = {"seat": 0, "hand": legal, "lead_card": lead, "tricks": [], "trump_card": "", "trump_suit": trump}
    return json.dumps({"type": "turn_request", "turn_id": turn_id, "view": view, "legal_cards": legal},
                      separators=(",", ":"))  # fmt: skip


@pytest.mark.slow  # compiles the Java, Go, Rust, C# and C ports
@pytest.mark.parametrize("sample", list(PORTS))
def test_the_port_chooses_as_the_python_greedy_bot(sample: str, tmp_path) -> None:
    language, build, run = PORTS[sample]
    if missing := missing_tools(language):
        pytest.skip(
            f"{language} toolchain missing: {', '.join(missing)} (see DEB_PACKAGES in scripts/setup.sh)"
        )
    work = tmp_path / sample
    shutil.copytree(
        SAMPLES / sample, work, ignore=shutil.ignore_patterns("bot", "bot.exe", "classes", "target")
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GOCACHE": str(tmp_path / "gocache"),
           "GOPATH": str(tmp_path / "gopath"), "CARGO_HOME": str(tmp_path / "cargo"), "RUSTFLAGS": "-C linker=gcc",
           "GOPROXY": "off", "CGO_ENABLED": "0"}  # fmt: skip
    if build:
        built = subprocess.run(build, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stdout + built.stderr
    turns = _turns(400)
    lines = [json.dumps({"type": "welcome", "bot_seed": 18446744073709551615})]
    lines += [_line(i, *turn) for i, turn in enumerate(turns, start=1)]
    done = subprocess.run(run, cwd=work, env=env, input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line)["card"] for line in done.stdout.splitlines()]
    expected = [choose(legal, lead or None, trump or None) for legal, lead, trump in turns]
    assert len(answers) == len(turns), "one answer per turn_request, none for other lines"
    wrong = [(t, a, e) for t, a, e in zip(turns, answers, expected, strict=True) if a != e]
    assert not wrong, f"{len(wrong)} of {len(turns)} turns differ, e.g. (turn, port, greedy) {wrong[:3]}"

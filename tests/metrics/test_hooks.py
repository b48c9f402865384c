"""The hooks of arena.metrics, in fresh interpreters (prometheus_client picks its mode on import):
off, they import nothing; on, what they count is served over a real loopback listener, each label
from its closed set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PROMETHEUS_"))}
    env.update(PYTHONPATH=str(REPO), TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_off_the_hooks_count_nothing_and_import_nothing(tmp_path) -> None:
    got = _run(
        "import json, sys\n"
        "from arena import metrics\n"
        "from arena.access.ratelimit import Budget, RateLimited, RateLimiter\n"
        "limiter = RateLimiter({'call': Budget(1, 60.0)})\n"
        "limiter.hit('call', 'k')\n"
        "try:\n    limiter.hit('call', 'k')\nexcept RateLimited:\n    pass\n"
        "metrics.match_recorded('ladder', ['OK', 'CRASH'])\n"
        "print(json.dumps({'imported': 'prometheus_client' in sys.modules, 'defs': metrics.defs() is None}))\n",
        tmp_path,
    )
    assert got == {"imported": False, "defs": True}


def test_on_what_the_hooks_count_is_served(tmp_path) -> None:
    got = _run(
        "import json, urllib.request\n"
        "from arena import metrics\n"
        "folder = metrics.prepare()\n"
        "from arena.access.ratelimit import Budget, RateLimited, RateLimiter\n"
        "from arena.ladder.fit import fit_ratings\n"
        "from arena.metrics.expose import start\n"
        "limiter = RateLimiter({'call': Budget(1, 60.0)})\n"
        "for _ in range(3):\n"
        "    try:\n        limiter.hit('call', 'bot-owner-42')\n    except RateLimited:\n        pass\n"
        "fit_ratings(3, [0, 1, 2], [1, 2, 0], [1.0, 0.5, 0.0])\n"
        "metrics.match_recorded('ladder', ['OK', 'CRASH'])\n"
        "metrics.match_recorded('made-up-kind', ['NOT_A_VERDICT', 'OK'])\n"
        "metrics.stream_opened('watch-web')\n"
        "listener = start('127.0.0.1', 0)\n"
        "text = urllib.request.urlopen(listener.url, timeout=30).read().decode()\n"
        "listener.close()\n"
        "metrics.discard(folder)\n"
        "from prometheus_client.parser import text_string_to_metric_families as parse\n"
        "samples = {s.name + json.dumps(s.labels, sort_keys=True): s.value for f in parse(text) for s in f.samples}\n"
        "print(json.dumps(samples))\n",
        tmp_path,
    )
    assert got['arena_rate_limited_total{"limit": "call"}'] == 2
    assert got["arena_fit_seconds_count{}"] == 1
    assert got['arena_matches_recorded_total{"kind": "ladder"}'] == 1
    assert got['arena_matches_recorded_total{"kind": "other"}'] == 1
    assert got['arena_verdicts_total{"verdict": "OK"}'] == 2
    assert got['arena_verdicts_total{"verdict": "CRASH"}'] == 1
    assert got['arena_verdicts_total{"verdict": "other"}'] == 1
    assert got['arena_live_streams_open{"transport": "watch-web"}'] == 1
    assert got["process_resident_memory_bytes{}"] > 0
    assert not any("bot-owner" in key or "made-up" in key or "NOT_A" in key for key in got)
    assert not list(tmp_path.glob("arena-metrics-*"))


@pytest.mark.parametrize("text", ["nope", "127.0.0.1:http", "host:70000", ""])
def test_a_bad_address_is_named(text) -> None:
    from arena.metrics.expose import BadAddress, parse_address

    with pytest.raises(BadAddress, match="--metrics"):
        parse_address(text)


def test_a_bare_port_is_loopback() -> None:
    from arena.metrics.expose import parse_address

    assert parse_address("9464") == ("127.0.0.1", 9464)
    assert parse_address("[::1]:9464") == ("::1", 9464)
    assert parse_address("0.0.0.0:9464") == ("0.0.0.0", 9464)

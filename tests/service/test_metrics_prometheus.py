"""A real Prometheus (Debian's `prometheus`) scrapes a real `arena serve --metrics` on loopback, with
deploy/prometheus/alerts.yml loaded: what it stores matches the server's counters, and the
stuck-queue rule goes pending while a challenge waits with no workers to play it; every query of
the Grafana dashboard (deploy/grafana/arena.json) runs on it."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from metrics_support import REPO, challenge, free_port, serve, two_bots

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus is not installed"),
]


def _ask(base: str, expr: str) -> dict:
    url = f"{base}/api/v1/query?query={urllib.parse.quote(expr)}"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as exc:  # a bad query: 400 with the error
        return json.load(exc)
    except OSError:
        return {}


def _query(base: str, expr: str) -> list[dict]:
    return _ask(base, expr).get("data", {}).get("result", [])


def test_a_real_prometheus_scrapes_the_server(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "0", "--alert-stuck-minutes", "0") as served:
        channel, api, ann = two_bots(served)
        challenge(api, ann)
        port = free_port()
        target = served.metrics.removeprefix("http://").removesuffix("/metrics")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{REPO / 'deploy' / 'prometheus' / 'alerts.yml'}]\n"
            f"scrape_configs:\n  - job_name: arena\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            built = served.until(
                "Prometheus stored the builds",
                lambda: _query(base, 'arena_builds_total{outcome="ok"}'),
                timeout=120,
            )
            assert built[0]["metric"]["job"] == "arena" and float(built[0]["value"][1]) == 2
            assert served.until("the server is up", lambda: _query(base, 'up{job="arena"} == 1'), timeout=60)
            pending = served.until(
                "ArenaQueueStuck pending",
                lambda: _query(base, 'ALERTS{alertname="ArenaQueueStuck"}'),
                timeout=120,
            )
            assert pending[0]["metric"]["alertstate"] == "pending"  # `for: 5m` before it fires
            assert float(_query(base, "arena_queue_depth")[0]["value"][1]) == 1
            calls = _query(base, "sum by (method) (arena_grpc_calls_total)")
            assert {c["metric"]["method"] for c in calls} >= {"/elfern.arena.v1.Arena/SubmitBot"}
            dashboard = json.loads((REPO / "deploy" / "grafana" / "arena.json").read_text())
            for panel in dashboard["panels"]:  # every query of the dashboard is one Prometheus runs
                for target in panel["targets"]:
                    answer = _ask(base, target["expr"])
                    assert answer.get("status") == "success", (panel["title"], answer)
        finally:
            prometheus.terminate()
            try:
                prometheus.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                prometheus.kill()
                prometheus.communicate()
        channel.close()

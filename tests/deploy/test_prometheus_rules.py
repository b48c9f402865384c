"""deploy/prometheus and deploy/grafana: the alert rules and the dashboard's queries name metrics the
arena serves, promtool accepts the rules and their unit tests pass (each alert fires on the series
that should raise it), and the compose profile's Prometheus configuration is valid. (The dashboard's
queries run on a real Prometheus in tests/service/test_metrics_prometheus.py.)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from arena.store.health import Health, HealthCollector

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = REPO / "deploy" / "grafana" / "arena.json"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool (Debian's prometheus) is not installed"
)


def served_names(store) -> set[str]:
    """Every sample name the arena's /metrics offers: the counted families and the store's gauges."""
    from arena.metrics import families

    names: set[str] = {"up", "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds"}
    for family in vars(families).values():
        describe = getattr(family, "describe", None)
        if describe is None or not hasattr(family, "_name"):
            continue
        for metric in describe():
            names |= {metric.name, f"{metric.name}_total", f"{metric.name}_count", f"{metric.name}_sum"}
    names |= {metric.name for metric in HealthCollector(Health(store)).collect()}
    return names


def test_the_rules_name_served_metrics(store) -> None:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert {r["alert"] for r in rules} >= {"ArenaQueueStuck", "ArenaWorkerSilent", "ArenaDiskLow"}
    served = served_names(store)
    for rule in rules:
        assert rule["labels"]["severity"] in ("page", "warn") and rule["annotations"]["summary"]
        used = set(re.findall(r"\b(arena_[a-z_]+|up)\b", rule["expr"]))
        assert used and used <= served, (rule["alert"], used - served)


@needs_promtool
def test_promtool_checks_and_tests_the_rules() -> None:
    assert PROMTOOL is not None
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(
        [PROMTOOL, "test", "rules", "alerts_test.yml"],
        cwd=RULES.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


@needs_promtool
def test_the_compose_prometheus_configuration_is_valid(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    config = (RULES.parent / "prometheus.yml").read_text().replace("/etc/prometheus/alerts.yml", str(RULES))
    (tmp_path / "prometheus.yml").write_text(config)
    checked = subprocess.run(
        [PROMTOOL, "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_dashboard_names_served_metrics(store) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    served = served_names(store) | {"le"}
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert len(dashboard["panels"]) >= 15 and len({p["id"] for p in dashboard["panels"]}) == len(
        dashboard["panels"]
    )
    shown = set()
    for expr in exprs:
        used = set(re.findall(r"\b(arena_[a-z_]+|process_[a-z_]+)\b", expr))
        used = {name.removesuffix("_bucket") for name in used}
        assert used and used <= served | {n.removesuffix("_total") for n in served}, (expr, used - served)
        shown |= used
    # every metric of docs/deploy.md's list has a panel
    wanted = {"arena_matches_recorded_total", "arena_queue_depth", "arena_queue_oldest_seconds", "arena_verdicts_total",
              "arena_builds_total", "arena_build_seconds", "arena_grpc_calls_total", "arena_grpc_call_seconds",
              "arena_web_requests_total", "arena_live_streams_open", "arena_rate_limited_total", "arena_fit_seconds",
              "process_resident_memory_bytes", "arena_disk_free_bytes", "arena_alert"}  # fmt: skip
    assert wanted <= shown, wanted - shown

"""`arena web --metrics`: requests by route template and status, rate-limit refusals, and the label
sets closed however many distinct URLs are asked for (real `arena web`, real HTTP on loopback)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(url, timeout=30).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _routes(home: Path) -> set[str]:
    """The app's route templates and mounts: the route label's closed set."""
    from arena.web.app import create_app

    def walk(routes: list, prefix: str = "") -> set[str]:  # FastAPI's included routers too
        out: set[str] = set()
        for r in routes:
            inner = getattr(r, "original_router", None)
            if inner is not None:
                out |= walk(inner.routes, prefix + r.include_context.prefix)
            else:
                out.add(prefix + str(getattr(r, "path", "")) or "/")
        return out

    app = create_app(None, home)
    try:
        return walk(app.routes)
    finally:
        app.state.data.store.close()


def test_requests_by_route_template_and_status(tmp_path: Path) -> None:
    home, port, metrics_port = tmp_path / "home", _free_port(), _free_port()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PROMETHEUS_"))}
    env.update(PYTHONPATH=str(REPO), ARENA_HOME=str(home), TMPDIR=str(tmp_path))
    proc = subprocess.Popen(
        [*ARENA, "web", "--host", "127.0.0.1", "--port", str(port), "--metrics", str(metrics_port)],
        env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    base, metrics = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        for _ in range(600):
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                if httpx.get(base + "/healthz", timeout=2).text == "ok":
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, timeout=30) as web:
            for i in range(40):  # distinct URLs: ids, names, paths no route knows, static files
                assert web.get(f"/matches/{1000 + i}").status_code == 404
                web.get(f"/bots/secretbot{i}")
                assert web.get(f"/no/such/page-{i}").status_code == 404
                web.get(f"/static/missing-{i}.css")
            assert web.get("/").status_code == 200
            refused = [web.post("/login").status_code for _ in range(12)]  # 10 a minute per address
        assert 429 in refused
        samples = _scrape(metrics)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    requests = {dict(k)["route"]: v for (n, k), v in samples.items() if n == "arena_web_requests_total"}
    counted = {
        (dict(k)["route"], dict(k)["status"]): v
        for (n, k), v in samples.items()
        if n == "arena_web_requests_total"
    }
    assert counted[("/matches/{match_id}", "404")] == 40
    assert counted[("unmatched", "404")] == 40
    assert counted[("/static", "404")] == 40
    assert counted[("/", "200")] == 1
    assert counted[("/login", "429")] == refused.count(429)
    assert set(requests) <= _routes(home) | {"unmatched"}, set(requests) - _routes(home)
    assert len(requests) <= 8  # a handful of templates for 160 distinct URLs
    assert not any("secretbot" in str(key) or "page-" in str(key) or "1000" in str(key) for key in samples)
    assert samples[("arena_rate_limited_total", (("limit", "login"),))] == refused.count(429)
    assert samples[("arena_web_request_seconds_count", (("route", "/"),))] == 1
    assert not list(tmp_path.glob("arena-metrics-*")), "the counting folder outlived the command"

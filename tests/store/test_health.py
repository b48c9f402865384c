"""arena.store.health on SQLite and PostgreSQL: the figures from a real store, the alerts they raise
under the thresholds, and the reading reused within its time to live."""

from __future__ import annotations

from datetime import timedelta

from arena.store import Store
from arena.store.health import Alert, Figures, Health, HealthCollector, Thresholds, alerts, read_figures
from arena.store.models import Match, utcnow
from arena.store.queue import claim


def _queue(store: Store, count: int) -> list[int]:
    a = store.add_version("ha", "oa", content_hash="h-ha", path="/b/ha").version
    b = store.add_version("hb", "ob", content_hash="h-hb", path="/b/hb").version
    with store.tx() as s:
        made = [
            Match(kind="challenge", version0_id=a.id, version1_id=b.id, seed=100 + i) for i in range(count)
        ]
        s.add_all(made)
        s.flush()
        for i, m in enumerate(made):
            m.created_at = utcnow() - timedelta(minutes=30 - i)
        return [m.id for m in made]


def test_the_figures_of_a_real_store(store: Store) -> None:
    empty = read_figures(store)
    assert (empty.queued, empty.running, empty.lapsed) == (0, 0, 0)
    assert empty.oldest_queued_age is None and empty.last_recorded_age is None
    assert empty.disk_free is not None and empty.disk_free > 0
    ids = _queue(store, 4)
    with store.tx() as s:  # a worker that went silent: its lease ended two minutes ago
        assert claim(s, "gone:1:x", ids=[ids[0]], ttl=-120.0) is not None
        assert claim(s, "alive:2:y", ids=[ids[1]]) is not None  # a worker renewing: not lapsed
        done = s.get_one(Match, ids[2])
        done.status, done.finished_at = "done", utcnow() - timedelta(minutes=20)
    f = read_figures(store)
    assert (f.queued, f.running, f.lapsed) == (1, 2, 1)
    assert f.oldest_queued_age is not None and 26 * 60 < f.oldest_queued_age < 28 * 60  # ids[3]: 27 min
    assert f.last_recorded_age is not None and 19 * 60 < f.last_recorded_age < 21 * 60
    raised = {a for a, _ in alerts(f, Thresholds(stuck_minutes=15))}
    assert raised == {Alert.STUCK_QUEUE, Alert.WORKER_SILENT}
    assert {a for a, _ in alerts(f, Thresholds(stuck_minutes=25))} == {
        Alert.WORKER_SILENT
    }  # recorded 20 min ago


def test_the_alerts_and_their_lines() -> None:
    calm = Figures(
        queued=0, oldest_queued_age=None, running=1, lapsed=0, last_recorded_age=5.0, disk_free=10 << 30
    )
    assert alerts(calm, Thresholds()) == []
    waiting = Figures(3, 20 * 60.0, 0, 0, None, 10 << 30)  # queued 20 min, never recorded
    [(alert, line)] = alerts(waiting, Thresholds(stuck_minutes=15))
    assert alert is Alert.STUCK_QUEUE and "3 match(es) queued" in line and "none ever recorded" in line
    assert alerts(waiting, Thresholds(stuck_minutes=30)) == []  # not yet
    busy = Figures(3, 20 * 60.0, 2, 0, 60.0, 10 << 30)  # queued long, but a result a minute ago
    assert alerts(busy, Thresholds(stuck_minutes=15)) == []
    full = Figures(0, None, 0, 0, None, 100 << 20)
    [(alert, line)] = alerts(full, Thresholds(disk_free_min=1 << 30))
    assert alert is Alert.DISK_LOW and "100 MiB free" in line and "under 1024 MiB" in line
    down = Figures(0, None, 0, 0, None, None, error="OperationalError")
    assert [a for a, _ in alerts(down, Thresholds())] == [Alert.STORE_UNREACHABLE]


def test_a_reading_is_reused_within_its_time_to_live(store: Store) -> None:
    now = [0.0]
    health = Health(store, ttl=5.0, clock=lambda: now[0])
    assert health.figures().queued == 0
    _queue(store, 1)
    assert health.figures().queued == 0 and health.recent().queued == 0  # within 5 s: the same reading
    now[0] = 6.0
    assert health.figures().queued == 1
    gauges = {m.name: m.samples for m in HealthCollector(health).collect()}
    assert gauges["arena_queue_depth"][0].value == 1
    assert {s.labels["alert"] for s in gauges["arena_alert"]} == {a.value for a in Alert}

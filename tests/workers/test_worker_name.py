"""`arena worker` gives its Celery node a name of its own even where pid and hostname are shared: the
runner pings the worker that started a match by that name, and in the compose stack every worker is
pid 1 in containers that share one network namespace, hence one hostname. With `arena<pid>@<host>`
the surviving replica answered the pings meant for a SIGKILLed one, so its match was never requeued."""

from __future__ import annotations

import redis
from click.testing import CliRunner

from arena.cli import cli
from arena.workers.celery_app import app


def test_two_workers_with_one_pid_and_one_host_get_different_node_names(monkeypatch) -> None:
    class Broker:
        def ping(self) -> bool:
            return True

    argvs: list[list[str]] = []
    monkeypatch.setattr(redis.Redis, "from_url", classmethod(lambda cls, *a, **k: Broker()))
    monkeypatch.setattr(app, "worker_main", lambda argv: argvs.append(list(argv)))
    monkeypatch.setattr("os.getpid", lambda: 1)  # pid 1 in each container
    for _ in range(2):
        res = CliRunner().invoke(cli, ["worker", "--concurrency", "1"])
        assert res.exit_code == 0, res.output
    names = [next(a.split("=", 1)[1] for a in argv if a.startswith("--hostname=")) for argv in argvs]
    assert len(names) == 2 and names[0] != names[1], names
    assert all(n.startswith("arena1-") and n.endswith("@%h") for n in names), names

"""`arena bench ladder --executor celery` on separate hosts (issue #32 §4), as root:

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_hosts.py [--matches 20] [--json]

Builds the namespace topology of scripts/hosts.py: a db host (its own PostgreSQL and Redis), a server
host, and worker hosts linked to the db host only. For 1, 2 and 4 worker processes (one host with one,
two hosts with one, two hosts with two) it starts fresh worker hosts, waits until every worker
answers a ping, and runs `arena bench ladder --executor celery --concurrency N` on the server host:
a season through the local pool there, then one through the workers, on the same store and broker.
Prints one table, every row from this one run; docs/deploy.md "Measured on separate hosts" keeps it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hosts import ARENA, Topology, arena_env, available, start_db, start_worker

SHAPES = ((1, 1), (2, 1), (2, 2))  # (worker hosts, processes each): 1, 2 and 4 worker processes
PING = "import sys\nfrom arena.workers.celery_app import app\nprint(len(app.control.ping(timeout=2) or []))\n"


def _workers_answer(server, env: dict[str, str], hosts: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        out = server.run([sys.executable, "-c", PING], env=env, timeout=60)
        if out.returncode == 0 and out.stdout.strip() == str(hosts):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{hosts} worker hosts did not all answer a ping: {out.stdout} {out.stderr[-500:]}"
            )
        time.sleep(1)


def measure(matches: int, logs: Path) -> list[dict]:
    topo = Topology()
    rows = []
    try:
        db, server = topo.add_host("db"), topo.add_host("server")
        link = topo.link(db, server)
        start_db(db)
        env = arena_env(server, link.a_addr)
        for n, (hosts, each) in enumerate(SHAPES):
            workers = [
                start_worker(topo, db, f"w{n}{i}", logs / f"w{n}{i}.log", concurrency=each)[0]
                for i in range(hosts)
            ]
            _workers_answer(server, env, hosts)
            out = server.run(
                [ARENA, "bench", "ladder", "--executor", "celery", "--concurrency", str(hosts * each),
                 "--matches", str(matches), "--json"],
                env=env, timeout=3600,
            )  # fmt: skip
            if out.returncode != 0:
                raise RuntimeError(f"bench on {hosts}x{each}: {out.stderr[-3000:]}")
            rows.append({"worker_hosts": hosts, "processes_each": each, **json.loads(out.stdout)})
            for w in workers:
                w.kill_all()
    finally:
        topo.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--matches", type=int, default=20, help="matches per season (each of local and celery)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--logs", type=Path, default=Path("/tmp/elfern-bench-hosts"), help="the workers' logs"
    )
    args = parser.parse_args()
    why = available()
    if why:
        sys.exit(f"bench_hosts: {why}")
    args.logs.mkdir(parents=True, exist_ok=True)
    rows = measure(args.matches, args.logs)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    head = ("worker processes", "local pool /min", "celery /min", "celery/local", "redis cmd/match",
            "redis KiB in/out", "runner stmts/match", "pg commits/match")  # fmt: skip
    print(f"arena bench ladder --executor celery on separate hosts: {args.matches} matches a season, "
          f"{rows[0]['launcher']} sandbox, store {rows[0]['store']}")  # fmt: skip
    print(" | ".join(head))
    for r in rows:
        c, loc = r["celery"], r["local"]
        cells = (
            f"{r['concurrency']} ({r['worker_hosts']} hosts x {r['processes_each']})",
            str(loc["matches_per_min"]), str(c["matches_per_min"]), f"{r['celery_vs_local']}x",
            f"{c['redis_commands_per_match']} (local {loc['redis_commands_per_match']})",
            f"{c['redis_kib_in_per_match']}/{c['redis_kib_out_per_match']}",
            f"{c['runner_statements_per_match']} (local {loc['runner_statements_per_match']})",
            f"{c.get('pg_commits_per_match')} (local {loc.get('pg_commits_per_match')})",
        )  # fmt: skip
        print(" | ".join(cells))


if __name__ == "__main__":
    main()

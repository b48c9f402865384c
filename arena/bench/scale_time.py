"""`arena bench scale`'s timing: a real `arena web` and a real `arena serve` started on each built
store (loopback ports), every public page, JSON route and gRPC read requested `reps` times, each CLI
listing run as its own process, the ladder's steps taken in-process; per operation the median, the
growth against the same store kind at size S (always measured first, in the same run), the server's
resident memory after it (VmRSS from /proc; a CLI's own peak), the statements of one request (counted
in-process, `scale_ops`) and the reply's bytes; then each figure against its target.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.bench.child import free_port, listening, rss_kib, start, stop
from arena.bench.scale_build import Built, DbKind, Size
from arena.bench.scale_ladder import ladder_steps
from arena.bench.scale_ops import (
    SERVED,
    Counters,
    Kind,
    Op,
    Statements,
    cli_ops,
    count_grpc,
    grpc_ops,
    grpc_request,
    sample_of,
    web_ops,
)
from arena.bench.scale_rows import SEASON

SLOW_SECONDS = 10.0  # a request slower than this is timed once more, not `reps` times
TIMEOUT = 600.0  # seconds one request may take before it counts as failed
SERVED_MS = {(Size.L, DbKind.POSTGRESQL): 50.0, (Size.M, DbKind.SQLITE): 100.0}
GROWTH_L_OVER_M = 1.5  # at L on PostgreSQL, against the same op at M
LADDER_MS = 10.0  # claim, pair and record at L
RSS_MIB = 300.0
REPLY_BYTES = 1_000_000
MATCH_PAGE_BYTES = 200_000
LADDER_TARGETED = ("ladder claim", "ladder pair", "ladder record")


def _env(built: Built, home: Path) -> dict[str, str]:
    return {**os.environ, "ARENA_DATABASE_URL": built.url, "ARENA_HOME": str(home)}


@contextmanager
def servers(built: Built, home: Path) -> Iterator[tuple[subprocess.Popen, int, subprocess.Popen, int]]:
    """A real `arena web` and a real `arena serve` (no workers, no referee socket) on the store."""
    home.mkdir(parents=True, exist_ok=True)
    token = home / "admin-token"
    token.write_text(os.urandom(24).hex())
    token.chmod(0o600)
    web_port, grpc_port = free_port(), free_port()
    procs: list[subprocess.Popen] = []
    try:
        for name, args, port in (
            ("web", ["web", "--port", str(web_port), "--admin-token-file", str(token)], web_port),
            ("serve", ["serve", "--unix", "", "--tcp", f"127.0.0.1:{grpc_port}", "--admin-token-file",
                       str(token), "--replays", str(home / "replays")], grpc_port),
        ):  # fmt: skip
            procs.append(start(args, home, _env(built, home), listening(port), name=name))
        yield procs[0], web_port, procs[1], grpc_port
    finally:
        for proc in procs:
            stop(proc)


def _timed(call: Callable[[], int], reps: int) -> tuple[float | None, int, int | None, str]:
    """(median ms, runs, reply bytes, error): one warm-up call, then `reps` timed ones (one if slow)."""
    try:
        started = time.perf_counter()
        size = call()
        if time.perf_counter() - started > SLOW_SECONDS:
            reps = 1
        times = []
        for _ in range(reps):
            started = time.perf_counter()
            size = call()
            times.append((time.perf_counter() - started) * 1000)
        return round(statistics.median(times), 2), len(times), size, ""
    except Exception as exc:  # a failing read is a figure: its row says why
        return None, 0, None, why(exc)


def why(exc: Exception) -> str:
    """One line for a failed request: a gRPC call's status and details, else the exception's first line."""
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):  # grpc.RpcError
        return f"{code().name}: {str(details() or '')[:200]}"
    text = str(exc).splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _row(
    op: Op, timed: tuple[float | None, int, int | None, str], statements: int | None, rss: float | None
) -> dict:
    median, runs, size, error = timed
    return {"op": op.name, "kind": op.kind.value, "median_ms": median, "reps": runs, "statements": statements,
            "bytes": size, "rss_mib": rss, "error": error, "match_page": op.match_page}  # fmt: skip


def measure(
    built: Built,
    cache: Path,
    reps: int,
    statements: Statements,
    counters: Counters,
    progress: Callable[[float], None],
) -> list[dict]:
    """Every operation against one built store."""
    import grpc
    import httpx

    from arena.proto import arena_pb2_grpc
    from arena.store import Store

    home = cache / built.key
    store = Store.open(built.url, home=home)
    try:
        sample = sample_of(store, SEASON, "bot00001")
    finally:
        store.close()
    rows: list[dict] = []
    web, grpcs, clis = web_ops(sample), grpc_ops(), cli_ops(sample)
    total = len(web) + len(grpcs) + len(clis) + 2
    with servers(built, home) as (web_proc, web_port, serve_proc, grpc_port):
        with httpx.Client(base_url=f"http://127.0.0.1:{web_port}", timeout=TIMEOUT) as client:
            for op in web:

                def get(op: Op = op) -> int:
                    reply = client.get(op.target)
                    if reply.status_code >= 500:
                        raise RuntimeError(f"HTTP {reply.status_code}")
                    return len(reply.content)

                rows.append(_row(op, _timed(get, reps), None, rss_kib(web_proc.pid) / 1024))
                progress(len(rows) / total)
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            for op in grpcs:
                method, request = grpc_request(op.target, sample)

                def call(method: str = method, request: Any = request) -> int:
                    return int(getattr(stub, method)(request, timeout=TIMEOUT).ByteSize())

                rows.append(_row(op, _timed(call, reps), None, rss_kib(serve_proc.pid) / 1024))
                progress(len(rows) / total)
    for op in clis:
        rows.append(_cli_row(op, built, home, reps))
        progress(len(rows) / total)
    counts = {
        **_safe(lambda: counters.web(statements, built.url, str(home), web)),
        **_safe(lambda: count_grpc(statements, built.url, str(home), sample)),
        **_safe(
            lambda: counters.cli(statements, {"ARENA_DATABASE_URL": built.url, "ARENA_HOME": str(home)}, clis)
        ),
    }
    for row in rows:
        row["statements"] = counts.get(row["op"])
    progress((total - 1) / total)
    rows += ladder_steps(built.url, str(home), reps, statements)
    for row in rows:
        row.update(size=built.size, db=built.db)
    return rows


def _safe(count: Callable[[], dict[str, int | None]]) -> dict[str, int | None]:
    try:
        return count()
    except Exception:  # counting is a second opinion; the timed row stands without it
        return {}


def _cli_row(op: Op, built: Built, home: Path, reps: int) -> dict:
    """A CLI listing as its own process: wall time, stdout bytes and the process's peak RSS."""
    peak = [0]

    def run() -> int:
        out = home / "cli.out"
        with open(out, "wb") as sink:
            proc = subprocess.Popen([sys.executable, "-m", "arena.cli", *op.target.split()],
                                    env=_env(built, home), cwd=home, stdout=sink, stderr=subprocess.DEVNULL)  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)  # its own peak RSS, which communicate() would not give
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak[0] = max(peak[0], usage.ru_maxrss)
        if proc.returncode:
            raise RuntimeError(f"exit status {proc.returncode}")
        return out.stat().st_size

    timed = _timed(run, min(reps, 3))
    return _row(op, timed, None, peak[0] / 1024 or None)


def judge(rows: list[dict]) -> list[dict]:
    """Growth against S (same store kind) and each row's targets: `targets`, `over` and `verdict`."""
    by = {(r["op"], r["db"], r["size"]): r for r in rows}
    for r in rows:
        base = by.get((r["op"], r["db"], Size.S.value))
        r["growth"] = (round(r["median_ms"] / base["median_ms"], 2)
                       if base and r["median_ms"] and base["median_ms"] else None)  # fmt: skip
        targets: list[str] = []
        over: list[str] = []

        def check(ok: bool, text: str, targets: list[str] = targets, over: list[str] = over) -> None:
            targets.append(text)
            if not ok:
                over.append(text)

        size, db, ms = Size(r["size"]), DbKind(r["db"]), r["median_ms"]
        served = Kind(r["kind"]) in SERVED
        if served and (size, db) in SERVED_MS:
            check(ms is not None and ms <= SERVED_MS[size, db], f"<= {SERVED_MS[size, db]:g} ms")
        if served and (size, db) == (Size.L, DbKind.POSTGRESQL):
            m = by.get((r["op"], r["db"], Size.M.value))
            if m and m["median_ms"]:
                check(ms is not None and ms <= GROWTH_L_OVER_M * m["median_ms"], f"<= {GROWTH_L_OVER_M:g}x M")
        if r["op"] in LADDER_TARGETED and size == Size.L:
            check(ms is not None and ms <= LADDER_MS, f"<= {LADDER_MS:g} ms")
        if r["kind"] != Kind.CLI.value and size != Size.S and base and base["statements"] is not None:
            check(r["statements"] == base["statements"], "statements as at S")
        if served and r["rss_mib"] is not None:
            check(r["rss_mib"] <= RSS_MIB, f"RSS <= {RSS_MIB:g} MB")
        if served and r["bytes"] is not None:
            limit = MATCH_PAGE_BYTES if r.get("match_page") else REPLY_BYTES
            check(r["bytes"] <= limit, f"<= {limit // 1000} KB")
        if r["error"]:
            over.append("failed")
        r["targets"], r["over"] = targets, over
        r["verdict"] = "over" if over else "within" if targets else "no target"
    return rows


def run(
    sizes: list[Size],
    dbs: list[DbKind],
    *,
    cache: Path,
    seed: int = 1,
    reps: int = 5,
    pg_server: str,
    rebuild: bool = False,
    counters: Counters,
    progress: Callable[[float], None] = lambda f: None,
) -> dict:
    """Build (or reuse) each store, S first as the baseline, and time everything against each."""
    from arena.bench.scale_build import ensure

    order = sorted({Size.S, *sizes}, key=list(Size).index)
    stores = [(size, db) for db in dbs for size in order]
    statements = Statements()
    rows: list[dict] = []
    builds: list[dict] = []
    try:
        for n, (size, db) in enumerate(stores):
            share = 1 / len(stores)

            def part(f: float, n: int = n, share: float = share) -> None:
                progress((n + f) * share)

            started = time.monotonic()
            built = ensure(size, db, seed=seed, cache=cache, pg_server=pg_server, rebuild=rebuild,
                           progress=lambda f: part(0.5 * f))  # fmt: skip
            builds.append({"size": size.value, "db": db.value, "key": built.key, "url": built.url,
                           "counts": built.counts, "build_seconds": built.build_seconds,
                           "ready_seconds": round(time.monotonic() - started, 1)})  # fmt: skip
            rows += measure(built, cache, reps, statements, counters, lambda f: part(0.5 + 0.5 * f))
    finally:
        statements.close()
    return {"seed": seed, "reps": reps, "sizes": [s.value for s in order], "dbs": [d.value for d in dbs],
            "stores": builds, "rows": judge(rows)}  # fmt: skip

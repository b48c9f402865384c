"""A stand-in replica for tests/deploy/test_proxy_watch.py, run as its own process so that the test can
SIGKILL it: gRPC WatchMatch on GRPC_PORT, `GET /healthz` on WEB_PORT.

    python watch_standin.py GRPC_PORT WEB_PORT MARK

The first WatchMatch call any stand-in takes (the one that creates the file MARK, and writes its pid in
it) sends the first four events of the script and then holds the stream open; every other call sends the whole script, starting
with the current status as the real server does.
"""

from __future__ import annotations

import http.server
import os
import sys
import threading
import time
from concurrent import futures

import grpc

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc


def _status(state: str, revealed: bool = False, **kw) -> pb.WatchEvent:
    return pb.WatchEvent(
        status=pb.MatchInfo(
            id=7, kind="challenge", status=state, players=["ann@1", "bea@2"], revealed=revealed, **kw
        )
    )


SCRIPT = [
    _status("queued"),
    _status("running", started_at="2026-12-07T17:00:00Z"),
    pb.WatchEvent(deal=pb.WatchDeal(deal=1, dealer=1)),
    pb.WatchEvent(
        trick=pb.WatchTrick(deal=1, trick=1, leader=0, cards=["7H", "KH"], winner=1, tricks_won=[0, 1])
    ),
    _status(
        "done",
        revealed=True,
        winner=1,
        lines=[0, 2],
        verdicts=["OK", "OK"],
        started_at="2026-12-07T17:00:00Z",
    ),
    pb.WatchEvent(trick=pb.WatchTrick(deal=1, trick=2, leader=1, cards=["AS", "8S"], winner=1)),
    pb.WatchEvent(deal_end=pb.WatchDealEnd(deal=1, winner=1, lines=[0, 2])),
]


class Standin(arena_pb2_grpc.ArenaServicer):
    def __init__(self, mark: str) -> None:
        self.mark = mark

    def WatchMatch(self, request, context):
        try:
            fd = os.open(self.mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            yield from SCRIPT[1:]
            return
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield from SCRIPT[:4]
        while context.is_active():  # held until the test kills this process
            time.sleep(0.1)


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    grpc_port, web_port, mark = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    arena_pb2_grpc.add_ArenaServicer_to_server(Standin(mark), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    server.start()
    web = http.server.ThreadingHTTPServer(("127.0.0.1", web_port), Health)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    print("ready", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()

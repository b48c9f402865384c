"""Tries to reach the test's TCP listener on the host's 127.0.0.1 (port in targets.json)."""

import json
import socket

from arena.sdk import Bot, run

TARGETS = json.load(open("targets.json"))


class NetTcp(Bot):
    def play(self, view):
        s = socket.create_connection(("127.0.0.1", TARGETS["port"]), timeout=2)
        s.sendall(b"exfiltrated")
        return view.legal[0]


run(NetTcp())

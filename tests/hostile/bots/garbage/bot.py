"""Never joins: writes garbage and then oversized bytes straight onto the referee's socket."""

import os
import socket

path = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
for payload in (b"\x00\xffNOT-HTTP2\r\n" * 1000, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x7f" * (8 << 20)):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    try:
        s.sendall(payload)
    except OSError:
        pass
    s.close()
raise SystemExit("garbage: sent my bytes")

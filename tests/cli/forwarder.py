"""A loopback TCP forwarder a test can cut: it stands in for the proxy between a client and a server.

`cut()` resets every connection through it (SO_LINGER 0: the client reads a reset mid-stream, as when
the proxy drops a stream), while new connections are still forwarded; `close()` also stops listening
(the proxy gone).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading


class Forwarder:
    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted = 0  # connections forwarded so far
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._reset: set[socket.socket] = set()  # sockets cut: their pumps pass no end on
        threading.Thread(target=self._accept, name="forwarder", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self.accepted += 1
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        if dst not in self._reset:  # an end passed on, not a cut
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        """Reset every connection open through the forwarder."""
        with self._lock:
            sockets, self._open = self._open, []
            self._reset.update(sockets)
        for s in sockets:  # a close with linger 0 sends a reset, not an end
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RD)  # wakes the pumps without a word on the wire
        for s in sockets:
            s.close()

    def close(self) -> None:
        """Stop listening, then reset what is open: nothing reaches the server through it any more."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.cut()

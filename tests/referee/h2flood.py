"""A hostile HTTP/2 client for the referee's bot socket, written on raw frames (no gRPC library), so
that it can do what no gRPC client does: open many streams, each announcing a large gRPC message and
sending only part of it, and keep them all open.

Run as a script (a separate process, like a bot): `python h2flood.py SOCKET CONNECTIONS STREAMS
ANNOUNCED SEND HOLD` opens CONNECTIONS Unix-socket connections and STREAMS `Play` streams on each;
every stream's one DATA message announces ANNOUNCED bytes and sends up to SEND of them (as far as
the server's flow-control windows allow), then the client holds everything open for HOLD seconds
and prints one JSON line: what the server did to each stream and connection.

The HPACK decoder reads what gRPC's encoder writes (literals, indexed fields, the dynamic table);
Huffman-coded strings are reported as "?" (gRPC does not Huffman-code its status fields).
"""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import time
from collections.abc import Sequence

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
STATIC_TABLE_SIZE = 61
PATH = "/elfern.arena.v1.Referee/Play"


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _literal(name: str, value: str) -> bytes:
    """A literal header field without indexing, new name, no Huffman."""
    n, v = name.encode(), value.encode()
    return b"\x00" + _int(len(n), 7) + n + _int(len(v), 7) + v


def request_headers(path: str = PATH) -> bytes:
    fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
              ("content-type", "application/grpc"), ("te", "trailers")]  # fmt: skip
    return b"".join(_literal(n, v) for n, v in fields)


class Hpack:
    """Just enough of an HPACK decoder for gRPC's responses."""

    def __init__(self) -> None:
        self.dynamic: list[tuple[str, str]] = []

    def _entry(self, index: int) -> tuple[str, str]:
        if index <= STATIC_TABLE_SIZE:
            return (f"static:{index}", "")
        return self.dynamic[index - STATIC_TABLE_SIZE - 1]

    @staticmethod
    def _read_int(data: bytes, pos: int, prefix_bits: int) -> tuple[int, int]:
        limit = (1 << prefix_bits) - 1
        value = data[pos] & limit
        pos += 1
        if value < limit:
            return value, pos
        shift = 0
        while True:
            b = data[pos]
            pos += 1
            value += (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value, pos

    def _read_str(self, data: bytes, pos: int) -> tuple[str, int]:
        huffman = bool(data[pos] & 0x80)
        length, pos = self._read_int(data, pos, 7)
        raw = data[pos : pos + length]
        return ("?" if huffman else raw.decode("latin-1")), pos + length

    def decode(self, data: bytes) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        pos = 0
        while pos < len(data):
            b = data[pos]
            if b & 0x80:  # indexed
                index, pos = self._read_int(data, pos, 7)
                out.append(self._entry(index))
                continue
            if b & 0xE0 == 0x20:  # dynamic table size update
                _, pos = self._read_int(data, pos, 5)
                continue
            incremental = b & 0xC0 == 0x40
            index, pos = self._read_int(data, pos, 6 if incremental else 4)
            if index:
                name = self._entry(index)[0]
            else:
                name, pos = self._read_str(data, pos)
            value, pos = self._read_str(data, pos)
            if incremental:
                self.dynamic.insert(0, (name, value))
            out.append((name, value))
        return out


class Connection:
    """One raw HTTP/2 connection that respects the server's flow-control windows (as a real
    attacker must, or the server closes the connection at once)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.setblocking(False)
        self.buf = b""
        self.out = bytearray(PREFACE + frame(SETTINGS, 0, 0))
        self.hpack = Hpack()
        self.conn_window = 65535
        self.initial_window = 65535
        self.windows: dict[int, int] = {}
        self.pending: dict[int, bytes] = {}  # body bytes still to send per stream
        self.status: dict[int, str] = {}  # stream -> how it ended ("grpc-status 8", "rst 7", ...)
        self.goaway: int | None = None
        self.closed = False
        self.received = 0

    def open_stream(self, stream: int, announced: int, send: int, path: str = PATH) -> None:
        self.out += frame(HEADERS, END_HEADERS, stream, request_headers(path))
        self.windows[stream] = self.initial_window
        self.pending[stream] = b"\x00" + struct.pack(">I", announced) + b"A" * max(0, send - 5)

    def pump(self) -> None:
        """Send what the windows allow, read and answer what the server sent."""
        if self.closed:
            return
        for stream, body in list(self.pending.items()):
            if stream in self.status:
                del self.pending[stream]
                continue
            n = min(len(body), self.windows[stream], self.conn_window, 16384)
            if n <= 0:
                continue
            self.out += frame(DATA, 0, stream, body[:n])
            self.windows[stream] -= n
            self.conn_window -= n
            self.pending[stream] = body[n:]
            if not self.pending[stream]:
                del self.pending[stream]
        try:
            while self.out:
                sent = self.sock.send(self.out)
                del self.out[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self.closed = True
            return
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    self.closed = True
                    break
                self.buf += chunk
                self.received += len(chunk)
        except BlockingIOError:
            pass
        except OSError:
            self.closed = True
        self._parse()

    def _parse(self) -> None:
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + length:
                return
            kind, flags = self.buf[3], self.buf[4]
            stream = int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF
            payload = self.buf[9 : 9 + length]
            self.buf = self.buf[9 + length :]
            if kind == SETTINGS and not flags & ACK:
                for i in range(0, len(payload), 6):
                    key, value = struct.unpack(">HI", payload[i : i + 6])
                    if key == 4:  # SETTINGS_INITIAL_WINDOW_SIZE
                        for s in self.windows:
                            self.windows[s] += value - self.initial_window
                        self.initial_window = value
                self.out += frame(SETTINGS, ACK, 0)
            elif kind == PING and not flags & ACK:
                self.out += frame(PING, ACK, 0, payload)
            elif kind == WINDOW_UPDATE:
                inc = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
                if stream == 0:
                    self.conn_window += inc
                elif stream in self.windows:
                    self.windows[stream] += inc
            elif kind == HEADERS:
                if flags & 0x20:  # PRIORITY
                    payload = payload[5:]
                for name, value in self.hpack.decode(payload):
                    if name == "grpc-status":
                        self.status[stream] = f"grpc-status {value}"
            elif kind == RST_STREAM:
                self.status.setdefault(stream, f"rst {int.from_bytes(payload[:4], 'big')}")
            elif kind == GOAWAY:
                self.goaway = int.from_bytes(payload[4:8], "big")
            elif kind == DATA and length:
                self.out += frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", length))


def flood(
    path: str, connections: int, streams: int, messages: Sequence[tuple[int, int]], hold: float
) -> dict:
    """Open the connections and streams; stream k's message is messages[k % len(messages)], an
    (announced size, bytes actually sent) pair. Returns what the server did to each of them."""
    conns: list[Connection] = []
    refused_connections = 0
    for _ in range(connections):
        try:
            conns.append(Connection(path))
        except OSError:
            refused_connections += 1
    for c in conns:
        for k in range(streams):
            announced, send = messages[k % len(messages)]
            c.open_stream(1 + 2 * k, announced, send)
    end = time.monotonic() + hold
    while time.monotonic() < end:
        for c in conns:
            c.pump()
        live = [c.sock for c in conns if not c.closed]
        if live:
            select.select(live, [], [], 0.01)
        else:
            time.sleep(0.01)
    outcomes: dict[str, int] = {}
    for c in conns:
        for k in range(streams):
            key = c.status.get(1 + 2 * k, "closed" if c.closed else "open")
            outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "connections": len(conns),
        "refused_connections": refused_connections,
        "closed_connections": sum(c.closed for c in conns),
        "goaway": sum(c.goaway is not None for c in conns),
        "streams": outcomes,
        "unsent_bytes": sum(len(b) for c in conns for b in c.pending.values()),
    }


if __name__ == "__main__":
    sock, n_conn, n_streams, announced, send, hold = sys.argv[1:7]
    report = flood(sock, int(n_conn), int(n_streams), [(int(announced), int(send))], float(hold))
    print(json.dumps(report), flush=True)

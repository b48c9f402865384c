"""Fuzz every `Arena` method over real gRPC: random and malformed messages, with and without tokens.

At least 10,000 messages to each method (ARENA_FUZZ_PER_METHOD sets fewer for a quick local run).
Every answer must be a proper status (never UNKNOWN), the server must stay up, and its memory after
the fuzz must stay within 20% of what it was after a warm-up of the same calls. It is the long fuzz
lane (`fuzz` marker): `make test` runs it beside the rest of the suite at the lowest CPU priority
(scripts/test.sh), so deadlines are generous.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor as d
from service_support import ADMIN

from arena.access.owners import add_owner
from arena.proto import arena_pb2
from arena.sandbox.procstat import cpu_seconds
from arena.store import Store

pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(3600)]

PER_METHOD = int(os.environ.get("ARENA_FUZZ_PER_METHOD", "10000"))  # calls to each method
DEADLINE = 60.0  # seconds per call: the lane runs at nice 19 and may wait for the CPU
THREADS = 4
SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"]
ALLOWED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.DEADLINE_EXCEEDED,  # our own client deadline on a call that legitimately waits
    grpc.StatusCode.INTERNAL,  # never expected: checked below to name what went wrong
    grpc.StatusCode.UNIMPLEMENTED,  # CreateMatch/GetMatch: this service hosts no referee
}
NASTY = [
    "",
    "..",
    "../../etc/passwd",
    "/abs",
    "a\0b",
    "x" * 5000,
    "é" * 300,
    "elf_",
    "a@1",
    "DROP TABLE bots",
]


def _value(field: d.FieldDescriptor, rng: random.Random, depth: int):
    t = field.type
    if t == d.FieldDescriptor.TYPE_STRING:
        return rng.choice(NASTY + ["alice", "autumn", "random", "flags=1", "flags=4294967296", "scoring=x"])
    if t == d.FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.choice([0, 1, 100, 5000]))
    if t == d.FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if t in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
        return rng.choice([0, 1, 2, 7, 200, 2**31, 2**32 - 1])
    if t in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
        return rng.choice([0, 1, 3, 2**63, 2**64 - 1])
    if t in (d.FieldDescriptor.TYPE_INT32, d.FieldDescriptor.TYPE_SINT32):
        return rng.choice([0, -1, 1, -(2**31), 2**31 - 1])
    if t in (d.FieldDescriptor.TYPE_INT64, d.FieldDescriptor.TYPE_SINT64):
        return rng.choice([0, -1, 1, -(2**63), 2**63 - 1])
    if t in (d.FieldDescriptor.TYPE_DOUBLE, d.FieldDescriptor.TYPE_FLOAT):
        return rng.choice([0.0, -1.0, 1e308, float("nan")])
    return None


def random_message(cls, rng: random.Random, depth: int = 0):
    msg = cls()
    for field in cls.DESCRIPTOR.fields:
        if rng.random() < 0.4:
            continue
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:  # map<K, V>: a few random entries
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            target = getattr(msg, field.name)
            for _ in range(rng.choice([1, 2, 60])):
                k, v = _value(key, rng, depth), _value(value, rng, depth)
                if k is not None and v is not None:
                    target[k] = v
            continue
        if field.type == d.FieldDescriptor.TYPE_MESSAGE:
            if depth < 3:
                sub = random_message(field.message_type._concrete_class, rng, depth + 1)
                if field.is_repeated:
                    getattr(msg, field.name).append(sub)
                else:
                    getattr(msg, field.name).CopyFrom(sub)
            continue
        value = _value(field, rng, depth)
        if value is None:
            continue
        if field.is_repeated:
            getattr(msg, field.name).extend([value] * rng.choice([1, 2, 50]))
        else:
            setattr(msg, field.name, value)
    return msg


def payload(method: d.MethodDescriptor, rng: random.Random) -> bytes:
    """A random valid message, or garbage: random bytes, a truncated or bit-flipped encoding."""
    cls = method.input_type._concrete_class
    good = random_message(cls, rng).SerializeToString()
    kind = rng.random()
    if kind < 0.6:
        return good
    if kind < 0.75:
        return rng.randbytes(rng.choice([1, 5, 64, 2000]))
    if kind < 0.9 and good:
        return good[: rng.randrange(len(good))]
    data = bytearray(good or b"\x08\x01")
    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _tokens(owner_token: str) -> list[list[tuple[str, str]]]:
    return [
        [],
        [("authorization", f"Bearer {ADMIN}")],
        [("authorization", f"Bearer {owner_token}")],
        [("authorization", "Bearer elf_guess")],
        [("authorization", "garbage")],
    ]


def _fire(
    channel: grpc.Channel, method: d.MethodDescriptor, rng: random.Random, tokens, codes: Counter
) -> None:
    path = f"/{SERVICE.full_name}/{method.name}"
    md = rng.choice(tokens)
    if method.client_streaming:
        parts = [payload(method, rng) for _ in range(rng.choice([0, 1, 3]))]
        try:
            if method.server_streaming:  # SubmitBotLive: read every event
                for _ in channel.stream_stream(path)(iter(parts), metadata=md, timeout=DEADLINE):
                    pass
            else:
                channel.stream_unary(path)(iter(parts), metadata=md, timeout=DEADLINE)
            codes[grpc.StatusCode.OK] += 1
        except grpc.RpcError as exc:
            codes[exc.code()] += 1
            _check(exc, method)
        return
    if method.server_streaming:
        call = channel.unary_stream(path)
        try:
            for _ in call(payload(method, rng), metadata=md, timeout=0.5):
                pass
            codes[grpc.StatusCode.OK] += 1
        except grpc.RpcError as exc:
            codes[exc.code()] += 1
            _check(exc, method)
        return
    try:
        channel.unary_unary(path)(payload(method, rng), metadata=md, timeout=DEADLINE)
        codes[grpc.StatusCode.OK] += 1
    except grpc.RpcError as exc:
        codes[exc.code()] += 1
        _check(exc, method)


def _check(exc: grpc.RpcError, method: d.MethodDescriptor) -> None:
    code = exc.code()
    assert code in ALLOWED, f"{method.name}: {code} {exc.details()}"
    assert code != grpc.StatusCode.INTERNAL, f"{method.name}: INTERNAL {exc.details()}"


def test_fuzz_every_method(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(url, home=tmp_path)
    owner_token = add_owner(store, "alice")
    store.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fuzz_server.py")), url, str(tmp_path), ADMIN],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("port "), line
        channel = grpc.insecure_channel(f"127.0.0.1:{line.split()[1]}")
        tokens = _tokens(owner_token)
        rng = random.Random(20261201)
        codes: Counter = Counter()
        for method in SERVICE.methods:  # warm-up: the same kinds of calls, so caches and pools exist
            for _ in range(300):
                _fire(channel, method, rng, tokens, codes)
        before = _rss_kib(server.pid)
        cpu0, mine0 = cpu_seconds(server.pid) or 0.0, time.process_time()
        per_method: dict[str, int] = {}
        for method in SERVICE.methods:  # a few client threads at once, as a flood would come
            seeds = [rng.getrandbits(64) for _ in range(THREADS)]
            counters = [Counter() for _ in range(THREADS)]

            def hammer(i: int, method: d.MethodDescriptor = method, seeds=seeds, counters=counters) -> None:
                local = random.Random(seeds[i])
                for _ in range(PER_METHOD // THREADS):
                    _fire(channel, method, local, tokens, counters[i])

            with ThreadPoolExecutor(THREADS) as pool:
                list(pool.map(hammer, range(THREADS)))
            for c in counters:
                codes.update(c)
            per_method[method.name] = sum(sum(c.values()) for c in counters)
            assert per_method[method.name] >= PER_METHOD
            assert server.poll() is None, f"the server died during {method.name}"
        after = _rss_kib(server.pid)
        calls = sum(per_method.values())
        cpu = ((cpu_seconds(server.pid) or 0.0) - cpu0) / calls * 1e3
        mine = (time.process_time() - mine0) / calls * 1e3
        print(
            f"fuzz: {calls} calls, at least {min(per_method.values())} to each of {len(per_method)} methods, "
            f"statuses {dict(codes)}, RSS {before} -> {after} KiB; "
            f"CPU per call: server {cpu:.2f} ms, client {mine:.2f} ms"
        )
        assert grpc.StatusCode.UNKNOWN not in codes
        assert after <= before * 1.2, f"RSS grew from {before} to {after} KiB"
        assert codes[grpc.StatusCode.OK] > 0 and codes[grpc.StatusCode.INVALID_ARGUMENT] > 0
    finally:
        server.terminate()
        server.wait(10)

"""The catalogue of bad inputs: for each, the file (or value) the corpus makes, the command it is
given to, and the first words of the one line that command must answer.

`tests/cli/test_bad_inputs.py` runs every row, with the real CLI on a real store, and fails on any
traceback, any exit code 0, any answer longer than a few lines, and any answer that does not start
with the words below. The `make` functions build the corpus in a temporary folder; `{f}` in the
command is the path they return.

Kinds of bad input: empty, truncated, corrupt, oversized and bomb files; TOML of every wrong type;
hostile archives; bad database URLs; names at their length limit and one past it, in Unicode.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.proto import replay_pb2
from arena.proto.codec import MAGIC, MAX_RECORD_BYTES, encode_record

OK_TOML = 'name = "ok"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
BOT_PY = "print('never run')\n"


@dataclass(frozen=True)
class Case:
    """One bad input: how to make it, the command, and the first words the answer must start with."""

    name: str
    make: Callable[[Path], str]  # builds the bad file under the folder; returns what `{f}` stands for
    argv: tuple[str, ...]
    first_words: str  # the answer's first line starts with "Error: " + these words (or these, for verify)
    env: dict[str, str] = field(default_factory=dict)
    exit_codes: tuple[int, ...] = (1, 2, 3)


# ---- replay files -------------------------------------------------------------------------------
def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


def _valid_record() -> replay_pb2.MatchRecord:
    """A real record: one played by the engine through the referee's recorder would do; this one is
    built from the rules' defaults and one deal so each corruption below changes one field."""
    from arena.engine import Match, Rules, card_code
    from arena.referee.convert import rules_to_proto

    rules = Rules()
    m = Match(rules, 7)
    deal = m.start_deal()
    record = replay_pb2.MatchRecord(format=1, match_id="bad", seed=7)
    record.rules.CopyFrom(rules_to_proto(rules))
    d = record.deals.add(number=1, dealer=deal.dealer)
    d.deck.extend(card_code(c) for c in deal.deck)
    for seat in (0, 1):
        record.players.add(seat=seat, name=f"p{seat}")
    return record


def _record_with(change: Callable[[replay_pb2.MatchRecord], None]) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        record = _valid_record()
        change(record)
        return _write(folder, "bad.replay", encode_record(record))

    return make


def _bomb(folder: Path) -> str:
    """A small file that inflates past the cap: zeros, compressed in chunks (never all in memory)."""
    z = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    parts = [z.compress(chunk) for _ in range(MAX_RECORD_BYTES // len(chunk) + 8)]
    return _write(folder, "bomb.replay", MAGIC + b"".join(parts) + z.flush())


def _truncated_record(folder: Path) -> str:
    data = encode_record(_valid_record())
    return _write(folder, "cut.replay", data[: len(data) // 2])


def _set_dealer(r: replay_pb2.MatchRecord) -> None:
    r.deals[0].dealer = 7


def _set_card(r: replay_pb2.MatchRecord) -> None:
    r.deals[0].deck[0] = "ZZ"


def _set_rules(r: replay_pb2.MatchRecord) -> None:
    r.rules.scoring = "poker"


def _set_seat(r: replay_pb2.MatchRecord) -> None:
    r.players[0].seat = 9


def _json(folder: Path, text: str) -> str:
    return _write(folder, "record.json", text.encode())


REPLAY_FILES: list[tuple[str, Callable[[Path], str], str]] = [
    ("empty file", lambda d: _write(d, "empty.replay", b""), "{f}: not an Elfern match record"),
    ("magic only", lambda d: _write(d, "magic.replay", MAGIC), "{f}: corrupt match record"),
    ("empty record", lambda d: _write(d, "e.replay", MAGIC + zlib.compress(b"")), "{f}: the record is empty"),
    ("truncated", _truncated_record, "{f}: corrupt match record"),
    ("corrupt zlib", lambda d: _write(d, "z.replay", MAGIC + b"\x78\x9c" + b"\xff" * 64), "{f}: corrupt"),
    ("zlib bomb", _bomb, "{f}: the record decompresses to more than"),
    ("bad rules", _record_with(_set_rules), "{f}: bad rules"),
    ("bad card", _record_with(_set_card), "{f}: deal 1: deck has 'ZZ'"),
    ("bad dealer", _record_with(_set_dealer), "{f}: deal 1: dealer 7"),
    ("bad seat", _record_with(_set_seat), "{f}: player 'p0' has seat 9"),
    ("a folder", lambda d: str(d), "{f}: no such replay file"),
]


EXPORTED = ("empty record", "zlib bomb", "bad rules", "truncated")


def _replay_cases() -> list[Case]:
    out = []
    for label, make, words in REPLAY_FILES:
        out.append(Case(f"replay show: {label}", make, ("replay", "show", "{f}"), words))
        if label in EXPORTED:  # export reads through the same loader: a few rows show it
            out.append(Case(f"replay export: {label}", make, ("replay", "export", "--json", "{f}"), words))
    good = _record_with(lambda r: None)
    out += [
        Case(
            "replay export --out into a missing folder",
            good,
            ("replay", "export", "--json", "{f}", "--out", "/nonexistent-arena-dir/x.json"),
            "--out /nonexistent-arena-dir/x.json: cannot write",
        ),
        Case(
            "replay export --out onto /dev/full",
            good,
            ("replay", "export", "--json", "{f}", "--out", "/dev/full"),
            "--out /dev/full: cannot write",
        ),
    ]
    verify = [  # `verify` prints `FILE: FAIL ...` (its own format) and exits 1
        ("empty JSON file", lambda d: _json(d, ""), "{f}: FAIL: the file is empty"),
        ("not JSON", lambda d: _json(d, "{nope"), "{f}: FAIL: not valid JSON"),
        (
            "5,000-digit seed",
            lambda d: _json(d, '{"format": "elfern/1", "seed": ' + "9" * 5000 + "}"),
            "{f}: FAIL",
        ),
        (
            "seed of the wrong type",
            lambda d: _json(d, json.dumps({"format": "elfern/1", "seed": "x", "deals": []})),
            "{f}:",
        ),
        ("nested 100,000 deep", lambda d: _json(d, "[" * 100_000), "{f}: FAIL: not valid JSON"),
        ("not UTF-8", lambda d: _write(d, "r.json", b"\xff\xfe{}"), "{f}: FAIL: not a text file"),
        ("binary zlib bomb", _bomb, "{f}: FAIL: the record decompresses"),
        ("binary empty record", lambda d: _write(d, "e.replay", MAGIC + zlib.compress(b"")), "{f}: FAIL"),
    ]
    for label, make, words in verify:
        out.append(Case(f"replay verify: {label}", make, ("replay", "verify", "{f}"), words, exit_codes=(1,)))
    return out


# ---- bundles and bot.toml -----------------------------------------------------------------------
def _bundle(toml: str | bytes, files: dict[str, str] | None = None) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        root = folder / "bot"
        root.mkdir()
        (root / "bot.toml").write_bytes(toml.encode() if isinstance(toml, str) else toml)
        for name, text in (files or {"bot.py": BOT_PY}).items():
            (root / name).write_text(text)
        return str(root)

    return make


WRONG_TYPES = {  # TOML values of every type but the right one
    "an integer": "5",
    "a number": "1.5",
    "a boolean": "true",
    "a list": '["a"]',
    "a table": "{ a = 1 }",
    "a date or time": "1979-05-27T07:32:00Z",
}


def _empty_folder(folder: Path) -> str:
    (folder / "empty").mkdir()
    return str(folder / "empty")


def _toml_cases() -> list[Case]:
    out = []
    base = {"name": '"ok"', "language": '"python"', "run": '["python3", "bot.py"]'}
    for key in ("name", "language", "version", "protocol"):
        for kind, value in WRONG_TYPES.items():
            fields = {**base, key: value}
            toml = "".join(f"{k} = {v}\n" for k, v in fields.items())
            out.append(
                Case(
                    f"bot.toml {key} is {kind}",
                    _bundle(toml),
                    ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local"),
                    f"{{f}}/bot.toml: `{key}` must be a string, not {kind}",
                )
            )
    for kind, value in {**WRONG_TYPES, "a string": '"python3 bot.py"', "an empty list": "[]"}.items():
        if kind == "a list":
            value, kind = "[1, 2]", "a list with a non-string"
        toml = f'name = "ok"\nrun = {value}\n'
        out.append(
            Case(
                f"bot.toml run is {kind}",
                _bundle(toml),
                ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local"),
                f"{{f}}/bot.toml: `run` must be a non-empty list of strings, not {kind}",
            )
        )
    out += [
        Case(
            "bot.toml build is a string",
            _bundle(OK_TOML + 'build = "make"\n'),
            ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local"),
            "{f}/bot.toml: `build` must be a list of strings, not a string",
        ),
        Case(
            "bot.toml malformed",
            _bundle("name = \n"),
            ("bots", "submit", "{f}", "--name", "ok"),
            "{f}/bot.toml: not valid TOML",
        ),
        Case(
            "bot.toml not UTF-8",
            _bundle(b"name = '\xff'\n"),
            ("bots", "submit", "{f}", "--name", "ok"),
            "{f}/bot.toml: not valid TOML",
        ),
        Case(
            "bot.toml empty",
            _bundle(""),
            ("bots", "submit", "{f}", "--name", "ok"),
            "{f}/bot.toml: `run` must be",
        ),
        Case(
            "run program not in the bundle",
            _bundle('name = "ok"\nrun = ["./nope"]\n'),
            ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local"),
            "{f}: `run` starts './nope', which is not a file in the bundle",
        ),
        Case(
            "run program not in the runtime",
            _bundle('name = "ok"\nrun = ["no-such-interpreter-xyz", "bot.py"]\n'),
            ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local"),
            "{f}: `run` starts 'no-such-interpreter-xyz', which is not a program of the runtime",
        ),
        Case(
            "no bot.toml",
            _empty_folder,
            ("bots", "submit", "{f}", "--name", "ok"),
            "{f}: no bot.toml found",
        ),
        Case(
            "play: bot.toml name is an integer",
            _bundle('name = 5\nrun = ["python3", "bot.py"]\n'),
            ("play", "{f}", "{f}", "--sandbox", "local"),
            "{f}/bot.toml: `name` must be a string, not an integer",
        ),
    ]
    return out


# ---- hostile archives ---------------------------------------------------------------------------
def _tar(members: list[tuple[str, bytes]], *, gz: bool = True, tail: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue() + tail


def _ok_members() -> list[tuple[str, bytes]]:
    return [("bot.toml", OK_TOML.encode()), ("bot.py", BOT_PY.encode())]


def _archive(name: str, data: Callable[[], bytes]) -> Callable[[Path], str]:
    return lambda folder: _write(folder, name, data())


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def _noise(n: int) -> bytes:
    """Incompressible but reproducible bytes."""
    import random

    return random.Random(n).randbytes(n)


def _corrupt_zip() -> bytes:
    data = bytearray(_zip([("bot.toml", OK_TOML.encode()), ("bot.py", _noise(4096))]))
    at = data.index(b"bot.py") + 40  # inside bot.py's compressed bytes
    data[at : at + 16] = b"\xa5" * 16
    return bytes(data)


def _gz_bomb() -> bytes:
    """A .tar.gz whose one member unpacks to more than the bundle cap (64 MiB) from a small file."""
    import gzip

    from arena.sandbox.archive import MAX_BUNDLE_BYTES

    size = MAX_BUNDLE_BYTES + (1 << 20)
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=1) as gz:
        info = tarfile.TarInfo("big")
        info.size = size
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        chunk = b"\0" * (1 << 20)
        for _ in range(size // len(chunk)):
            gz.write(chunk)
    return buf.getvalue()


def _archive_cases() -> list[Case]:
    submit = ("bots", "submit", "{f}", "--name", "ok", "--sandbox", "local")
    long_name = "x" * 300
    deep = "/".join(["d"] * 40) + "/f"
    rows = [
        ("empty .tar.gz", "e.tar.gz", lambda: b"", "{f}: not a readable tar archive ("),
        ("empty .zip", "e.zip", lambda: b"", "{f}: not a readable zip archive"),
        (
            "truncated .tar.gz",
            "t.tar.gz",
            lambda: _tar(_ok_members() + [("pad", _noise(100_000))])[:40_000],
            "{f}: corrupt or truncated archive",
        ),
        ("corrupt zip", "c.zip", _corrupt_zip, "{f}: corrupt or truncated archive"),
        (
            "truncated .zip (no end record)",
            "t.zip",
            lambda: _zip(_ok_members())[:-30],
            "{f}: not a readable zip archive (no end of central directory record",
        ),
        (
            "5,001 members (zip, refused from its end record)",
            "m.zip",
            lambda: _zip(_ok_members() + [(f"d{i}/", b"") for i in range(4999)]),
            "{f}: more than 5000 members (its central directory lists 5001)",
        ),
        ("zip of garbage", "g.zip", lambda: b"PK\x03\x04" + b"\x00" * 200, "{f}: not a readable zip archive"),
        (
            "member name too long",
            "l.tar.gz",
            lambda: _tar([*_ok_members(), (long_name, b"")]),
            "{f}: member 'xxxx",
        ),
        (
            "member name too long (zip)",
            "l.zip",
            lambda: _zip([*_ok_members(), (long_name, b"")]),
            "{f}: member 'xxxx",
        ),
        (
            "member name not UTF-8",
            "u.tar.gz",
            lambda: _tar([*_ok_members(), ("caf\udce9", b"")]),
            "{f}: member 'caf\\udce9' has a name that is not UTF-8",
        ),
        ("40 folders deep", "d.tar.gz", lambda: _tar([*_ok_members(), (deep, b"")]), "{f}: member 'd/d/d"),
        (
            "5,001 members, then junk",
            "m.tar",
            lambda: _tar(_ok_members() + [("d/", b"")] * 5000, gz=False)[:-1024] + b"\x01" * 600,
            "{f}: more than 5000 members",
        ),
        ("a gzip bomb", "b.tar.gz", _gz_bomb, "{f}: unpacks to more than 64 MiB"),
        (
            "absolute member",
            "a.tar.gz",
            lambda: _tar([*_ok_members(), ("/etc/x", b"")]),
            "{f}: member '/etc/x' has an absolute path",
        ),
        ("not an archive", "x.txt", lambda: b"hello", "{f}: not a bot bundle"),
    ]
    out = []
    for label, fname, data, words in rows:
        if fname.endswith(".tar") and not fname.endswith(".tar.gz"):
            fname = fname + ".gz"  # only .tar.gz/.tgz/.zip are bundles: gzip the plain tar
            raw = data
            data = lambda raw=raw: __import__("gzip").compress(raw(), 1)  # noqa: E731
        out.append(Case(f"archive: {label}", _archive(fname, data), submit, words))
    return out


# ---- names and database URLs --------------------------------------------------------------------
def _nothing(folder: Path) -> str:
    return str(folder)


def _name_cases() -> list[Case]:
    good = _bundle(OK_TOML)
    at_limit, past = "a" * 64, "a" * 65
    out = []
    for kind, argv in (
        ("bot name", ("bots", "submit", "{f}", "--name", "{v}", "--owner", "alice", "--sandbox", "local")),
        ("owner", ("bots", "submit", "{f}", "--name", "okbot", "--owner", "{v}", "--sandbox", "local")),
        ("owner name", ("owners", "add", "{v}")),
        ("season name", ("season", "create", "{v}")),
    ):
        for label, value, words in (
            ("one past the limit", past, f"{kind} '{'a' * 40}'... (65 characters) is too long"),
            ("100,000 characters", "b" * 100_000, f"{kind} '{'b' * 40}'... (100000 characters) is too long"),
            ("Unicode", "ünïcødé", f"{kind} '\\xfcn\\xefc\\xf8d\\xe9' is not allowed"),
            ("a trailing newline", "bob\n", f"{kind} 'bob\\n' is not allowed"),
            ("starting with a dot", ".hidden", f"{kind} '.hidden' is not allowed"),
        ):
            filled = tuple(a.replace("{v}", value) for a in argv)
            out.append(Case(f"{kind}: {label}", good, filled, words))
        out.append(  # the limit itself is accepted: the run succeeds (exit 0)
            Case(
                f"{kind}: at the limit",
                good,
                tuple(a.replace("{v}", at_limit) for a in argv),
                "",
                exit_codes=(0,),
            )
        )
    return out


def _url_cases() -> list[Case]:
    out = []
    for label, url, words in (
        ("mysql://", "mysql://u@127.0.0.1/x", "database URL 'mysql://u@127.0.0.1/x': mysql is not supported"),
        ("notaurl", "notaurl", "database URL 'notaurl' is not a URL"),
        (
            "an unwritable SQLite path",
            "sqlite:////proc/arena-nope/arena.db",
            "database 'sqlite:////proc/arena-nope/arena.db': cannot create folder",
        ),
        (
            "a SQLite file in a read-only folder",
            "sqlite:////proc/arena.db",
            "cannot open the database 'sqlite:////proc/arena.db'",
        ),
        (
            "an unreachable PostgreSQL",
            "postgresql://u:secret@127.0.0.1:1/x",
            "cannot open the database 'postgresql://u:***@127.0.0.1:1/x'",
        ),
        (
            "a driver not installed",
            "postgresql+asyncpg://u@h/x",
            "database URL 'postgresql+asyncpg://u@h/x': driver",
        ),
    ):
        for argv in (("bots", "list"), ("season", "create", "s")):
            out.append(
                Case(f"{' '.join(argv[:2])}: {label}", _nothing, argv, words, env={"ARENA_DATABASE_URL": url})
            )
    return out


#: Every local command, with names that do not exist: run on an empty store and on a URL the store
#: cannot use. Listing commands may answer (exit 0, "no ... yet"); none may answer with a traceback.
EVERY_COMMAND: list[tuple[str, ...]] = [
    ("bots", "list"), ("bots", "show", "nope"), ("bots", "logs", "nope"), ("bots", "retire", "nope"),
    ("owners", "list"), ("owners", "rotate", "nope"), ("owners", "revoke", "nope"),
    ("season", "list"), ("season", "start", "nope"), ("season", "run", "nope", "--matches", "1", "--sandbox", "local"),
    ("season", "freeze", "nope"), ("season", "close", "nope", "--sandbox", "local"), ("season", "verify", "nope"),
    ("season", "export", "nope"), ("standings", "nope"), ("matches",), ("matches", "--season", "nope"),
    ("compare", "nope1", "nope2", "--sandbox", "local"), ("challenge", "nope1", "nope2"), ("watch", "1"),
    ("replay", "show", "last"), ("replay", "export", "--json", "last"),
]  # fmt: skip


def _every_command_cases() -> list[Case]:
    out = []
    for argv in EVERY_COMMAND:
        name = " ".join(argv[:3])
        out.append(Case(f"{name}: empty store", _nothing, argv, "", exit_codes=(0, 1, 2)))
        if argv[0] not in ("replay", "watch", "challenge"):
            out.append(
                Case(f"{name}: mysql:// store", _nothing, argv, "database URL 'mysql://x'",
                     env={"ARENA_DATABASE_URL": "mysql://x"})
            )  # fmt: skip
    return out


def _server_cases() -> list[Case]:
    """ARENA_SERVER that is not an address, or where nothing listens."""
    out = []
    for label, server, words in (
        ("nothing listening", "127.0.0.1:1", "cannot reach arena server 127.0.0.1:1"),
        ("no port", "x", "--server 'x': give HOST:PORT"),
    ):
        for argv in (("bots", "list"), ("standings", "s"), ("replay", "show", "1"), ("season", "list")):
            out.append(Case(f"{' '.join(argv[:2])}: ARENA_SERVER {label}", _nothing, argv, words,
                            env={"ARENA_SERVER": server}))  # fmt: skip
    return out


def catalogue() -> list[Case]:
    return (
        _replay_cases()
        + _toml_cases()
        + _archive_cases()
        + _name_cases()
        + _url_cases()
        + _every_command_cases()
        + _server_cases()
    )

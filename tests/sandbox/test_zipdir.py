"""A zip's central directory is checked from its tail before zipfile reads it: a crafted end record
claiming too many entries, too large a directory or one past the file, a zip64 one, a truncated
zip and a directory holding more headers than its end record admits are each refused in one line."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile

import pytest

from arena.sandbox.archive import MAX_MEMBERS, MAX_NAME_BYTES, extract_archive
from arena.sandbox.errors import BundleError
from arena.sandbox.zipdir import check_directory

MANIFEST = b'name = "z"\nrun = ["python3", "bot.py"]\n'


def _entry(name: bytes) -> bytes:
    """One central directory header (a stored, empty file) and its name."""
    head = (b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0)
    return struct.pack("<4s6H3L5H2L", *head) + name


def _end(entries: int, size: int, offset: int) -> bytes:
    return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, size, offset, 0)


def _end64(at: int, entries: int, size: int, offset: int) -> bytes:
    """A ZIP64 end record at `at`, its locator, and a plain end record saying 'see ZIP64'."""
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at, 1)
    return record + locator + _end(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)


def _real_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("bot.py", b"print(1)\n")
    return buf.getvalue()


def _refused(tmp_path, data: bytes) -> str:
    path = tmp_path / "b.zip"
    path.write_bytes(data)
    with pytest.raises(BundleError) as err:
        extract_archive(path, tmp_path / "out")
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return text


def test_an_end_record_claiming_60000_entries_is_refused_naming_the_cap(tmp_path):
    cd = _entry(b"bot.toml")
    text = _refused(tmp_path, cd + _end(60_000, len(cd), 0))
    assert f"more than {MAX_MEMBERS} members (its central directory lists 60000)" in text


def test_a_zip64_end_record_claiming_200000_entries_is_refused(tmp_path):
    cd = _entry(b"bot.toml")
    text = _refused(tmp_path, cd + _end64(len(cd), 200_000, len(cd), 0))
    assert f"more than {MAX_MEMBERS} members (its central directory lists 200000)" in text


def test_a_zip64_locator_without_its_record_is_refused(tmp_path):
    cd = _entry(b"bot.toml")
    data = bytearray(cd + _end64(len(cd), 1, len(cd), 0))
    data[len(cd) : len(cd) + 4] = b"XXXX"
    assert "ZIP64 end record is missing or corrupt" in _refused(tmp_path, bytes(data))


def test_a_truncated_zip_has_no_end_record(tmp_path):
    data = _real_zip()
    text = _refused(tmp_path, data[: len(data) - 30])
    assert "not a readable zip archive (no end of central directory record" in text


def test_a_directory_larger_than_the_cap_allows_is_refused_before_it_is_read(tmp_path):
    text = _refused(tmp_path, _entry(b"bot.toml") + _end(3, 0xF0000000, 0))
    assert f"central directory is {0xF0000000} bytes; at most" in text and f"{MAX_MEMBERS} members" in text


def test_a_directory_past_the_end_of_the_file_is_refused(tmp_path):
    cd = _entry(b"bot.toml")
    assert "extends past the end of the file" in _refused(tmp_path, cd + _end(1, len(cd), 5000))


def test_more_headers_than_the_end_record_admits_stop_the_walk_at_the_cap(tmp_path):
    cd = b"".join(_entry(f"f{i}".encode()) for i in range(MAX_MEMBERS + 1000))
    text = _refused(tmp_path, cd + _end(3, len(cd), 0))  # the record lies: 3 entries
    assert text.endswith(f"more than {MAX_MEMBERS} members")


def test_a_corrupt_header_in_the_directory_is_refused(tmp_path):
    cd = _entry(b"bot.toml") + b"\0" * 60
    assert "central directory entry 2 is corrupt" in _refused(tmp_path, cd + _end(2, len(cd), 0))


def test_good_zips_pass_with_a_comment_and_data_in_front(tmp_path):
    path = tmp_path / "ok.zip"
    buf = io.BytesIO()
    buf.write(b"#!/bin/sh\nexit 0\n")  # a self-extracting stub in front
    with zipfile.ZipFile(buf, "a") as zf:
        zf.comment = b"a comment at the tail" * 100
        zf.writestr("bot.toml", MANIFEST)
    path.write_bytes(buf.getvalue())
    check_directory(path, MAX_MEMBERS, MAX_NAME_BYTES)
    extract_archive(path, tmp_path / "out")
    assert (tmp_path / "out" / "bot.toml").read_bytes() == MANIFEST
    zip64 = tmp_path / "z64.zip"
    with zipfile.ZipFile(zip64, "w", allowZip64=True) as zf:
        with zf.open("bot.toml", "w", force_zip64=True) as fh:
            fh.write(MANIFEST)
    extract_archive(zip64, tmp_path / "out64")


def test_a_200000_member_zip_is_refused_in_little_memory(tmp_path):
    """The figure issue 14 asks for: zipfile alone builds 200,000 ZipInfos (tens of MiB) before any
    count; the tail check refuses the same file after reading a few headers."""
    cd = b"".join(_entry(b"%06d" % i) for i in range(200_000))
    path = tmp_path / "big.zip"
    path.write_bytes(cd + _end(0xFFFF, len(cd), 0))
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match=f"more than {MAX_MEMBERS} members"):
            extract_archive(path, tmp_path / "out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak

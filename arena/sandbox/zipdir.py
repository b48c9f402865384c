"""A zip's central directory, checked from the file's tail before Python's zipfile is given the file.

`zipfile.ZipFile` reads the whole central directory into memory (`fp.read(size)`) and makes one
ZipInfo per entry before any caller sees a member, so the member cap would only be counted after
the read. Here the End Of Central Directory record (and, when its locator is there, the ZIP64 one)
is read from the tail the way zipfile finds it, the declared entry count and directory size are
held to the caps, and the directory's entry headers are walked one at a time (46 bytes each, names
skipped unread), stopping at the first one past the member cap: zipfile is then handed a directory
it will parse in bounded memory. Every refusal is a BundleError naming the archive and the limit.
"""

from __future__ import annotations

import struct
from pathlib import Path

from arena.sandbox.errors import BundleError

__all__ = ["MAX_EXTRA_BYTES", "check_directory"]

_EOCD = struct.Struct("<4s4H2LH")  # signature, disk, cd disk, entries here, entries, size, offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # signature, disk of the zip64 record, its offset, disks
_EOCD64 = struct.Struct("<4sQ2H2L4Q")  # signature, size, versions, disks, entries here, entries, size, offset
_ENTRY = struct.Struct("<4s6H3L5H2L")  # a central directory file header, before its name
_MAX_COMMENT = 0xFFFF
#: An entry's extra field and comment together, at most: zip64 and Unix fields take a few dozen bytes.
MAX_EXTRA_BYTES = 1024


def _refuse(archive: Path, why: str) -> BundleError:
    return BundleError(f"{archive}: not a readable zip archive ({why}); make it again with `zip -r`")


def _end_record(archive: Path, fh, file_size: int) -> tuple[int, int, int, int]:
    """(where the directory's end record starts, declared entries, directory size, its offset)."""
    tail_start = max(0, file_size - _EOCD.size - _MAX_COMMENT)
    fh.seek(tail_start)
    tail = fh.read()
    at = tail.rfind(b"PK\x05\x06")  # zipfile's own search: the last signature in the tail
    if at < 0 or len(tail) - at < _EOCD.size:
        raise _refuse(archive, "no end of central directory record: empty, truncated or not a zip")
    _, disk, cd_disk, here, entries, size, offset, _ = _EOCD.unpack_from(tail, at)
    end = tail_start + at
    if (disk, cd_disk) != (0, 0) or here != entries:
        raise _refuse(archive, "it spans several disks")
    if end < _LOCATOR.size:
        return end, entries, size, offset
    fh.seek(end - _LOCATOR.size)
    sig, disk64, _, disks = _LOCATOR.unpack(fh.read(_LOCATOR.size))
    if sig != b"PK\x06\x07":
        return end, entries, size, offset
    end64 = end - _LOCATOR.size - _EOCD64.size  # where zipfile reads it: no extensible data
    if disk64 != 0 or disks > 1:
        raise _refuse(archive, "it spans several disks")
    if end64 < 0:
        raise _refuse(archive, "its ZIP64 end record is missing")
    fh.seek(end64)
    sig, _, _, _, disk, cd_disk, here, entries, size, offset = _EOCD64.unpack(fh.read(_EOCD64.size))
    if sig != b"PK\x06\x06":
        raise _refuse(archive, "its ZIP64 end record is missing or corrupt")
    if (disk, cd_disk) != (0, 0) or here != entries:
        raise _refuse(archive, "it spans several disks")
    return end64, entries, size, offset


def check_directory(archive: Path, max_members: int, max_name_bytes: int) -> None:
    """Refuse, before zipfile reads it, a zip whose central directory is past the caps or corrupt."""
    too_many = f"{archive}: more than {max_members} members"
    max_size = max_members * (_ENTRY.size + max_name_bytes + MAX_EXTRA_BYTES)
    try:
        with open(archive, "rb") as fh:
            file_size = fh.seek(0, 2)
            end, entries, size, offset = _end_record(archive, fh, file_size)
            if entries > max_members:
                raise BundleError(f"{too_many} (its central directory lists {entries})")
            if size > max_size:
                raise BundleError(
                    f"{archive}: its central directory is {size} bytes; at most {max_size} "
                    f"for {max_members} members"
                )
            if offset + size > end:
                raise _refuse(archive, "its central directory extends past the end of the file")
            fh.seek(end - size)  # where zipfile reads it (data prepended to the zip shifts it)
            left, count = size, 0
            while left >= _ENTRY.size:  # one header at a time: the count stops the walk at the cap
                raw = fh.read(_ENTRY.size)
                head = _ENTRY.unpack(raw) if len(raw) == _ENTRY.size else (b"",)
                if head[0] != b"PK\x01\x02":
                    raise _refuse(archive, f"central directory entry {count + 1} is corrupt")
                count += 1
                if count > max_members:
                    raise BundleError(too_many)
                name, extra, comment = head[10:13]
                skip = name + extra + comment
                fh.seek(skip, 1)
                left -= _ENTRY.size + skip
    except OSError as exc:
        raise BundleError(f"{archive}: cannot read ({exc.strerror or exc})") from None

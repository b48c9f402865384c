"""Bundle archives: safe members unpack, unsafe ones are refused with a message naming them."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile

import pytest

from arena.sandbox.bundle import BundleError, load_bundle

MANIFEST = b'name = "arc"\nrun = ["python3", "bot.py"]\n'


def _tar(path, members):
    """members: list of (TarInfo-kwargs, data)"""
    with tarfile.open(path, "w:gz") as tar:
        for kwargs, data in members:
            info = tarfile.TarInfo(kwargs.pop("name"))
            for key, value in kwargs.items():
                setattr(info, key, value)
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _good_members(prefix=""):
    return [
        ({"name": f"{prefix}bot.toml"}, MANIFEST),
        ({"name": f"{prefix}bot.py", "mode": 0o755}, b"print(1)\n"),
    ]


def test_tar_gz_bundle_unpacks_with_top_folder_lifted(tmp_path):
    bundle = load_bundle(_tar(tmp_path / "b.tar.gz", _good_members("mybot/")))
    assert bundle.name == "arc" and bundle.run == ("python3", "bot.py")
    assert (bundle.path / "bot.py").read_bytes() == b"print(1)\n"
    assert bundle.path.stat().st_mode & 0o777 == 0o755
    assert load_bundle(tmp_path / "b.tar.gz").path == bundle.path  # content-addressed: unpacked once


def test_zip_bundle_unpacks(tmp_path):
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("lib/util.py", b"X = 1\n")
    bundle = load_bundle(path)
    assert (bundle.path / "lib" / "util.py").read_text() == "X = 1\n"


@pytest.mark.parametrize(
    "member, message",
    [
        ({"name": "/etc/cron.d/evil"}, "absolute path"),
        ({"name": "../../evil.py"}, "contains '..'"),
        ({"name": "link", "type": tarfile.SYMTYPE, "linkname": "/etc/shadow"}, "points outside"),
        ({"name": "sub/link", "type": tarfile.SYMTYPE, "linkname": "../../x"}, "points outside"),
        ({"name": "hard", "type": tarfile.LNKTYPE, "linkname": "bot.toml"}, "hard link"),
        ({"name": "dev", "type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3}, "device"),
        ({"name": "fifo", "type": tarfile.FIFOTYPE}, "device or FIFO"),
    ],
)
def test_unsafe_tar_members_are_refused(tmp_path, member, message):
    data = b"x" if member.get("type", tarfile.REGTYPE) == tarfile.REGTYPE else None
    name = member["name"]
    path = _tar(tmp_path / "bad.tgz", _good_members() + [(dict(member), data)])
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert message in str(err.value) and name.strip("/").split("/")[-1] in str(err.value)


def test_write_through_symlinked_folder_is_refused(tmp_path):
    path = _tar(
        tmp_path / "sneaky.tgz",
        _good_members()
        + [
            ({"name": "d", "type": tarfile.SYMTYPE, "linkname": "."}, None),
            ({"name": "d/x.py"}, b"1"),
        ],
    )
    with pytest.raises(BundleError, match="under a symlink"):
        load_bundle(path)


def test_unsafe_zip_members_are_refused(tmp_path):
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("../escape.py", b"1")
    with pytest.raises(BundleError, match="contains '..'"):
        load_bundle(path)
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        info = zipfile.ZipInfo("shadow")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/shadow")
    with pytest.raises(BundleError, match="points outside"):
        load_bundle(link)


def test_compression_bomb_stops_at_the_cap(tmp_path, private_bundle_cache):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("zeros.bin", b"\0" * (3 * 1024 * 1024))
    assert path.stat().st_size < 64 * 1024
    with pytest.raises(BundleError, match="unpacks to more than 2 MiB"):
        load_bundle(path, max_bytes=2 * 1024 * 1024)
    assert not any(
        p.name.startswith("a-") for p in private_bundle_cache.iterdir()
    )  # nothing half-unpacked kept


def test_not_an_archive_and_missing_paths_say_what_to_give(tmp_path):
    (tmp_path / "bot.exe").write_bytes(b"MZ")
    with pytest.raises(BundleError, match="expected a directory, .tar.gz, .tgz or .zip"):
        load_bundle(tmp_path / "bot.exe")
    with pytest.raises(BundleError, match="no such bot bundle"):
        load_bundle(tmp_path / "nope")
    (tmp_path / "broken.tgz").write_bytes(b"not gzip")
    with pytest.raises(BundleError, match="not a readable tar archive"):
        load_bundle(tmp_path / "broken.tgz")

"""Bundle archives: safe members unpack, unsafe ones are refused with a message naming them."""

from __future__ import annotations

import io
import os
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


# --- links resolved against the real tree (issue 11) -----------------------------------------------


def _link(name, target):
    return ({"name": name, "type": tarfile.SYMTYPE, "linkname": target}, None)


def _zip(path, files, links):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        for name, target in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def _one_line_naming(err, member):
    text = str(err.value)
    assert "\n" not in text and repr(member) in text, text
    return text


# `b -> a/..` reads as "." but the kernel follows `a` (-> .) first: b is the bundle's parent. Each
# further link climbs one more level. Every link passes a lexical check.
CHAIN = [("a", "."), ("b", "a/.."), ("c", "b/.."), ("d", "c/..")]


def test_tar_link_chain_that_climbs_out_is_refused_naming_the_member(tmp_path):
    path = _tar(tmp_path / "chain.tgz", _good_members() + [_link(n, t) for n, t in CHAIN])
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "points outside the bundle" in _one_line_naming(err, "b")


def test_zip_link_chain_that_climbs_out_is_refused_naming_the_member(tmp_path):
    path = _zip(tmp_path / "chain.zip", {"bot.toml": MANIFEST}, CHAIN)
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "points outside the bundle" in _one_line_naming(err, "b")


def test_tar_bot_toml_linked_out_through_an_innocent_looking_path_is_refused(tmp_path):
    # lexically "a/../etc/passwd" is "etc/passwd", inside; really it is <bundle>/../etc/passwd
    path = _tar(
        tmp_path / "toml.tgz",
        [({"name": "bot.py"}, b"1"), _link("a", "."), _link("bot.toml", "a/../etc/passwd")],
    )
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    _one_line_naming(err, "bot.toml")


def test_zip_bot_toml_as_an_absolute_link_is_refused(tmp_path):
    path = _zip(tmp_path / "abs.zip", {"bot.py": b"1"}, [("bot.toml", "/etc/passwd")])
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "absolute" in _one_line_naming(err, "bot.toml")


def test_link_to_a_link_with_an_absolute_target_is_refused(tmp_path):
    path = _zip(tmp_path / "hop.zip", {"bot.toml": MANIFEST}, [("x", "y"), ("y", "/etc")])
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "absolute" in _one_line_naming(err, "y")
    folder = _folder(tmp_path / "f")
    (folder / "x").symlink_to("y")
    (folder / "y").symlink_to("/etc")
    with pytest.raises(BundleError) as err:
        load_bundle(folder)
    assert "absolute target '/etc'" in _one_line_naming(err, "x")  # found at the second hop


def test_link_loop_is_refused(tmp_path):
    path = _tar(tmp_path / "loop.tgz", _good_members() + [_link("p", "q"), _link("q", "p")])
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "loop" in _one_line_naming(err, "p")


def test_link_that_lifting_the_top_folder_would_turn_outward_is_refused(tmp_path):
    # inside mybot/, "../mybot/bot.toml" is the bundle's own manifest; after the lift it is outside
    members = _good_members("mybot/") + [_link("mybot/again.toml", "../mybot/bot.toml")]
    with pytest.raises(BundleError) as err:
        load_bundle(_tar(tmp_path / "lift.tgz", members))
    _one_line_naming(err, "again.toml")


def test_benign_internal_links_still_work(tmp_path):
    members = _good_members() + [
        ({"name": "src/util.py"}, b"X = 1\n"),
        _link("lib", "src"),
        _link("src/self.toml", "../lib/../bot.toml"),  # through a link and back up: still inside
    ]
    bundle = load_bundle(_tar(tmp_path / "ok.tgz", members))
    assert (bundle.path / "lib" / "util.py").read_bytes() == b"X = 1\n"
    assert (bundle.path / "src" / "self.toml").read_bytes() == MANIFEST
    zbundle = load_bundle(
        _zip(tmp_path / "ok.zip", {"bot.toml": MANIFEST, "src/u.py": b"2"}, [("lib", "src")])
    )
    assert (zbundle.path / "lib" / "u.py").read_bytes() == b"2"


def _folder(root):
    root.mkdir()
    (root / "bot.toml").write_bytes(MANIFEST)
    (root / "bot.py").write_bytes(b"print(1)\n")
    return root


def test_folder_bot_toml_linked_out_is_refused_and_never_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.toml").write_bytes(b'name = "leaked"\nrun = ["x"]\n')  # a valid manifest
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "bot.toml").symlink_to("../outside/secret.toml")
    with pytest.raises(BundleError) as err:
        load_bundle(bundle)
    assert "leaked" not in _one_line_naming(err, "bot.toml")


def test_folder_with_an_escaping_link_chain_is_refused(tmp_path):
    bundle = _folder(tmp_path / "b")
    (bundle / "sub").mkdir()
    (bundle / "sub" / "a").symlink_to(".")
    (bundle / "sub" / "b").symlink_to("a/../..")  # sub/a is sub, so this is the bundle's parent
    with pytest.raises(BundleError) as err:
        load_bundle(bundle)
    _one_line_naming(err, "sub/b")


def test_folder_hard_link_to_an_outside_file_is_refused_an_internal_one_is_not(tmp_path):
    bundle = _folder(tmp_path / "b")
    os.link(bundle / "bot.py", bundle / "twin.py")  # both names inside: fine
    assert load_bundle(bundle).name == "arc"
    (tmp_path / "secret").write_bytes(b"s")
    os.link(tmp_path / "secret", bundle / "peek")
    with pytest.raises(BundleError) as err:
        load_bundle(bundle)
    assert "hard link" in _one_line_naming(err, "peek")


def test_folder_with_a_fifo_is_refused_instead_of_hanging_the_hash(tmp_path):
    bundle = _folder(tmp_path / "b")
    os.mkfifo(bundle / "pipe")
    with pytest.raises(BundleError) as err:
        load_bundle(bundle)
    _one_line_naming(err, "pipe")


def test_store_hashes_and_copies_links_as_links_never_following_them(tmp_path):
    from arena.store.bundles import content_hash, store_copy

    bundle = _folder(tmp_path / "b")
    (bundle / "src").mkdir()
    (bundle / "src" / "u.py").write_bytes(b"1")
    (bundle / "lib").symlink_to("src")
    digest = content_hash(bundle)
    stored = store_copy(bundle, tmp_path / "store", digest)
    assert os.readlink(stored / "lib") == "src" and (stored / "lib" / "u.py").read_bytes() == b"1"
    assert content_hash(stored) == digest and load_bundle(stored).name == "arc"
    (bundle / "lib").unlink()
    (bundle / "lib").symlink_to("src/u.py")
    assert content_hash(bundle) != digest  # the link's target is part of the content
    # a link out (made after the checks, e.g. in a race) is copied as a link, not as the file's bytes
    (tmp_path / "secret").write_bytes(b"top secret")
    (bundle / "leak").symlink_to(tmp_path / "secret")
    copied = store_copy(bundle, tmp_path / "store", "other")
    assert os.readlink(copied / "leak") == str(tmp_path / "secret")
    assert all(
        b"top secret" not in p.read_bytes() for p in copied.rglob("*") if p.is_file() and not p.is_symlink()
    )
    with pytest.raises(BundleError) as err:
        load_bundle(copied)
    _one_line_naming(err, "leak")

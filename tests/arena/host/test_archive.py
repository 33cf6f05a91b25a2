"""Uploaded archives (arena/snapshots/archive.py) and the snapshots they become
(arena/snapshots/tree.py): good archives in every format, the same files giving the same
address, and each hostile archive refused in one line with nothing left behind."""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import os
import re
import stat
import struct
import tarfile
import threading
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.snapshots.archive import (
    ArchiveError,
    ArchiveLimits,
    archive_format,
    check_bot_command,
    member_path,
    unpack_archive,
)
from arena.snapshots.tree import (
    TEMP_PREFIX,
    SnapshotError,
    is_sealed,
    open_snapshot,
    remove_stale_temporaries,
    store_snapshot,
    tree_digest,
    verify_snapshot,
)

#: path -> content, or (content, mode).
Files = dict[str, bytes | tuple[bytes, int]]

MANIFEST = b'command = "python3 bot.py"\nruntime = "python3"\nname = "mine"\n'
GOOD: Files = {
    "cardarena.toml": MANIFEST,
    "bot.py": b"print('hello')\n",
    "lib/util.py": b"X = 1\n",
    "lib/data/table.txt": b"1 2 3\n" * 100,
    "bin/run": (b"#!/bin/sh\nexec python3 bot.py\n", 0o755),
}
SMALL = ArchiveLimits(max_files=50, max_unpacked_bytes=1 << 20)


def _content(value: bytes | tuple[bytes, int]) -> tuple[bytes, int]:
    return value if isinstance(value, tuple) else (value, 0o644)


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def tar_bytes(
    files: Files,
    *,
    prefix: str = "mybot/",
    gz: bool = True,
    dirs: bool = True,
    reverse: bool = False,
    mtime: int = 0,
    fmt: int = tarfile.PAX_FORMAT,
) -> bytes:
    buf = io.BytesIO()
    names = sorted(files, reverse=reverse)
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=fmt) as tar:
        written: set[str] = set()
        if dirs and prefix:
            info = tarfile.TarInfo(prefix.rstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(info)
        for name in names:
            data, mode = _content(files[name])
            for parent in _parents(name) if dirs else []:
                if parent not in written:
                    written.add(parent)
                    info = tarfile.TarInfo(prefix + parent)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o700, mtime
                    tar.addfile(info)
            info = tarfile.TarInfo(prefix + name)
            info.size, info.mode, info.mtime, info.uid = len(data), mode, mtime, 1234
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(
    files: Files,
    *,
    prefix: str = "mybot/",
    dirs: bool = False,
    method: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        if dirs and prefix:
            zf.writestr(zipfile.ZipInfo(prefix), b"")
        for name in files:
            data, mode = _content(files[name])
            info = zipfile.ZipInfo(prefix + name, date_time=(2020, 1, 2, 3, 4, 5))
            info.compress_type = method
            info.external_attr = (stat.S_IFREG | mode) << 16
            zf.writestr(info, data)
    return buf.getvalue()


def tar_of(*members: tuple[tarfile.TarInfo, bytes], gz: bool = True) -> bytes:
    """A tar of these members, after a valid manifest."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo("cardarena.toml")
        info.size = len(MANIFEST)
        tar.addfile(info, io.BytesIO(MANIFEST))
        info = tarfile.TarInfo("bot.py")
        tar.addfile(info, io.BytesIO(b""))
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **attrs: object
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, data


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "snapshots"


def leftovers(store: Path) -> list[str]:
    return sorted(os.listdir(store)) if store.exists() else []


def refuse(data: bytes, store: Path, pattern: str, limits: ArchiveLimits = SMALL) -> str:
    """Store ``data``, expect a one-line refusal matching ``pattern``, and nothing left."""
    with pytest.raises(ArchiveError) as caught:
        store_snapshot(data, store, limits)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert re.search(pattern, message), message
    assert leftovers(store) == [], "a refused upload left files behind"
    return message


# --- Good archives ---------------------------------------------------------------------------


def test_tar_gz_with_a_top_level_directory(store: Path) -> None:
    snap = store_snapshot(tar_bytes(GOOD), store)
    assert snap.root == store.resolve() / snap.sha256
    assert re.fullmatch(r"[0-9a-f]{64}", snap.sha256)
    assert sorted(p.relative_to(snap.root).as_posix() for p in snap.root.rglob("*")) == [
        "bin",
        "bin/run",
        "bot.py",
        "cardarena.toml",
        "lib",
        "lib/data",
        "lib/data/table.txt",
        "lib/util.py",
    ]
    assert (snap.root / "lib/data/table.txt").read_bytes() == b"1 2 3\n" * 100
    assert snap.manifest.command == "python3 bot.py"
    assert snap.manifest.runtime == "python3"
    assert snap.manifest.to_dict() == {"command": "python3 bot.py", "runtime": "python3"}
    assert snap.file_count == 5
    assert snap.total_bytes == sum(len(_content(v)[0]) for v in GOOD.values())
    assert snap.program.command == "python3 bot.py"
    assert snap.program.directory == snap.root
    assert leftovers(store) == [snap.sha256]
    assert verify_snapshot(snap.root)


def test_zip_with_a_top_level_directory(store: Path) -> None:
    snap = store_snapshot(zip_bytes(GOOD, dirs=True), store)
    assert (snap.root / "bot.py").read_bytes() == b"print('hello')\n"
    assert snap.file_count == 5
    assert verify_snapshot(snap.root)


def test_a_zip_from_macos_finder_loses_its_resource_forks(store: Path) -> None:
    plain = store_snapshot(zip_bytes(GOOD, dirs=True), store)
    buf = io.BytesIO(zip_bytes(GOOD, dirs=True))
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr("__MACOSX/", b"")
        zf.writestr("__MACOSX/mybot/._bot.py", b"\0\5\26\7 AppleDouble")
    finder = store_snapshot(buf.getvalue(), store)
    # The same bot, the same address: Finder's extras are not part of it.
    assert finder.sha256 == plain.sha256
    assert not (finder.root / "__MACOSX").exists()


def test_manifest_at_the_root_keeps_a_single_directory(store: Path) -> None:
    files: Files = {"cardarena.toml": b'command = "python3 src/bot.py"\n', "src/bot.py": b""}
    snap = store_snapshot(tar_bytes(files, prefix=""), store)
    assert (snap.root / "src" / "bot.py").is_file()
    assert snap.manifest.runtime == ""


def test_dot_slash_members_from_tar_c_dot(store: Path) -> None:
    """``tar czf bot.tgz -C mybot .`` writes ``./`` and ``./bot.py``."""
    snap = store_snapshot(tar_bytes(GOOD, prefix="./"), store)
    assert snap.sha256 == store_snapshot(tar_bytes(GOOD, prefix=""), store).sha256


def test_same_files_in_every_format_give_one_address(store: Path, tmp_path: Path) -> None:
    uploads = [
        tar_bytes(GOOD),
        tar_bytes(GOOD, gz=False, reverse=True, mtime=1_700_000_000, fmt=tarfile.GNU_FORMAT),
        tar_bytes(GOOD, prefix="other-name/", dirs=False),
        tar_bytes(GOOD, prefix=""),
        zip_bytes(GOOD),
        zip_bytes(GOOD, prefix="", method=zipfile.ZIP_STORED),
    ]
    shas = {store_snapshot(data, store).sha256 for data in uploads}
    assert len(shas) == 1
    assert leftovers(store) == sorted(shas)
    # Given as a path, its name says nothing: the first bytes decide.
    misnamed = tmp_path / "bot.zip"
    misnamed.write_bytes(tar_bytes(GOOD))
    assert store_snapshot(misnamed, store).sha256 in shas


def test_content_changes_the_address(store: Path) -> None:
    base = store_snapshot(tar_bytes(GOOD), store).sha256
    changed = dict(GOOD, **{"bot.py": b"print('bye')\n"})
    no_exec = dict(GOOD, **{"bin/run": _content(GOOD["bin/run"])[0]})
    renamed = {k.replace("lib/", "lib2/"): v for k, v in GOOD.items()}
    shas = {store_snapshot(tar_bytes(files), store).sha256 for files in (changed, no_exec, renamed)}
    # An empty directory is part of the content too.
    shas.add(store_snapshot(tar_of(member("empty", tarfile.DIRTYPE)), store).sha256)
    shas.add(store_snapshot(tar_of(), store).sha256)
    assert base not in shas and len(shas) == 5


def test_executable_bit_kept_setuid_dropped(store: Path) -> None:
    files: Files = {
        "cardarena.toml": b'command = "./bot"\nruntime = "native"\n',
        "bot": (b"\x7fELF...", 0o6755),
        "notes.txt": (b"hi", 0o4666),
        "group-exec.sh": (b"", 0o610),
    }
    for data in (tar_bytes(files), zip_bytes(files)):
        snap = store_snapshot(data, store)
        assert stat.S_IMODE((snap.root / "bot").stat().st_mode) == 0o555
        assert stat.S_IMODE((snap.root / "notes.txt").stat().st_mode) == 0o444
        assert stat.S_IMODE((snap.root / "group-exec.sh").stat().st_mode) == 0o555


def test_snapshot_is_read_only(store: Path) -> None:
    snap = store_snapshot(tar_bytes(GOOD), store)
    assert is_sealed(snap.root)
    assert stat.S_IMODE(snap.root.stat().st_mode) == 0o555
    assert stat.S_IMODE((snap.root / "lib").stat().st_mode) == 0o555
    assert stat.S_IMODE((snap.root / "bot.py").stat().st_mode) == 0o444
    if os.geteuid() != 0:  # root ignores modes
        with pytest.raises(PermissionError):
            (snap.root / "bot.py").write_text("changed")
        with pytest.raises(PermissionError):
            (snap.root / "new.py").write_text("added")


def test_store_is_idempotent(store: Path) -> None:
    first = store_snapshot(tar_bytes(GOOD), store)
    inode = first.root.stat().st_ino
    again = store_snapshot(zip_bytes(GOOD), store)
    assert again == first
    assert first.root.stat().st_ino == inode  # the stored one was kept, not replaced
    assert leftovers(store) == [first.sha256]
    assert open_snapshot(store, first.sha256) == first


def test_verify_detects_a_changed_file(store: Path) -> None:
    snap = store_snapshot(tar_bytes(GOOD), store)
    target = snap.root / "lib" / "util.py"
    target.chmod(0o644)
    target.write_bytes(b"X = 2\n")
    target.chmod(0o444)
    assert not verify_snapshot(snap.root)
    with pytest.raises(SnapshotError, match="was changed"):
        open_snapshot(store, snap.sha256)
    # The same content uploaded again does not quietly trust the changed copy.
    with pytest.raises(SnapshotError, match="was changed"):
        store_snapshot(tar_bytes(GOOD), store)
    assert leftovers(store) == [snap.sha256]


def test_verify_detects_added_files_modes_and_links(store: Path) -> None:
    for change in ("add", "mode", "link"):
        snap = store_snapshot(tar_bytes(GOOD), store)
        lib = snap.root / "lib"
        lib.chmod(0o755)
        if change == "add":
            (lib / "extra.py").write_bytes(b"")
        elif change == "mode":
            (lib / "util.py").chmod(0o555)
        else:
            (lib / "util.py").unlink()
            (lib / "util.py").symlink_to("/etc/hostname")
        assert not verify_snapshot(snap.root), change
        # Back to a clean store for the next change.
        for path in [snap.root, *snap.root.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        for path in sorted(snap.root.rglob("*"), reverse=True):
            path.unlink() if not path.is_dir() or path.is_symlink() else path.rmdir()
        snap.root.rmdir()


def test_verify_refuses_bad_names(tmp_path: Path) -> None:
    assert not verify_snapshot(tmp_path)
    assert not verify_snapshot(tmp_path / ("0" * 64))
    with pytest.raises(SnapshotError, match="not a snapshot's SHA-256"):
        open_snapshot(tmp_path, "../../etc")
    with pytest.raises(SnapshotError, match="no snapshot"):
        open_snapshot(tmp_path, "a" * 64)


def test_digest_form_is_the_documented_one(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_bytes(b"ab")
    (tmp_path / "d" / "x").chmod(0o755)
    (tmp_path / "f").write_bytes(b"")
    expected = hashlib.sha256(
        b"cardarena-snapshot-v1\0"
        + b"dd\0"
        + b"xd/x\0"
        + (2).to_bytes(8, "big")
        + b"ab"
        + b"ff\0"
        + (0).to_bytes(8, "big")
    ).hexdigest()
    digest = tree_digest(tmp_path)
    assert digest.sha256 == expected
    assert (digest.file_count, digest.total_bytes) == (2, 2)


def test_concurrent_stores_of_the_same_files(store: Path) -> None:
    results: list[str] = []
    errors: list[BaseException] = []

    def upload(data: bytes) -> None:
        try:
            results.append(store_snapshot(data, store).sha256)
        except BaseException as err:
            errors.append(err)

    threads = [
        threading.Thread(target=upload, args=(tar_bytes(GOOD) if i % 2 else zip_bytes(GOOD),))
        for i in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 6 and len(set(results)) == 1
    assert leftovers(store) == results[:1]
    assert verify_snapshot(store / results[0])


# --- Crash safety ----------------------------------------------------------------------------


def test_a_killed_upload_leaves_a_temp_dir_the_next_call_removes(store: Path) -> None:
    dead = store / f"{TEMP_PREFIX}dead"
    (dead / "tree" / "mybot").mkdir(parents=True)
    (dead / "tree" / "mybot" / "half.py").write_bytes(b"x")
    for path in (dead / "tree" / "mybot" / "half.py", dead / "tree" / "mybot", dead / "tree"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    live = store / f"{TEMP_PREFIX}live"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # an upload still running in another process
        snap = store_snapshot(tar_bytes(GOOD), store)
        assert leftovers(store) == sorted([f"{TEMP_PREFIX}live", snap.sha256])
    finally:
        os.close(fd)
    assert remove_stale_temporaries(store) == 1
    assert leftovers(store) == [snap.sha256]


# --- Hostile archives ------------------------------------------------------------------------


def test_absolute_path(store: Path) -> None:
    refuse(
        tar_of(member("/etc/cron.d/evil", data=b"x")),
        store,
        r'^archive member "/etc/cron.d/evil": an absolute path$',
    )


def test_dot_dot(store: Path) -> None:
    refuse(
        tar_of(member("../x", data=b"x")),
        store,
        r'^archive member "../x": a path outside the bot\'s directory$',
    )
    refuse(
        tar_of(member("lib/../../x", data=b"x")),
        store,
        r'^archive member "lib/../../x": a path outside',
    )
    refuse(zip_bytes({**GOOD, "../../x": b""}, prefix=""), store, r'"../../x": a path outside')


def test_symlink_out(store: Path) -> None:
    refuse(
        tar_of(member("passwd", tarfile.SYMTYPE, linkname="../../../etc/passwd")),
        store,
        r'^archive member "passwd": a symbolic link \(links are refused',
    )
    # Even one that stays inside: every link is refused.
    refuse(
        tar_of(member("alias.py", tarfile.SYMTYPE, linkname="bot.py")),
        store,
        r'"alias.py": a symbolic link',
    )


def test_symlink_in_a_zip(store: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("cardarena.toml", MANIFEST)
        zf.writestr("bot.py", b"")
        info = zipfile.ZipInfo("passwd")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, b"/etc/passwd")
    refuse(buf.getvalue(), store, r'^archive member "passwd": a symbolic link')


def test_hardlink(store: Path) -> None:
    refuse(
        tar_of(member("shadow", tarfile.LNKTYPE, linkname="/etc/shadow")),
        store,
        r'^archive member "shadow": a hard link',
    )


def test_device_and_fifo(store: Path) -> None:
    refuse(
        tar_of(member("sda", tarfile.BLKTYPE, devmajor=8, devminor=0)),
        store,
        r'"sda": a device file$',
    )
    refuse(
        tar_of(member("mem", tarfile.CHRTYPE, devmajor=1, devminor=1)), store, r'"mem": a device'
    )
    refuse(tar_of(member("pipe", tarfile.FIFOTYPE)), store, r'"pipe": a FIFO')


def test_zip_bomb_stops_at_the_cap(store: Path) -> None:
    zeros = b"\0" * (8 << 20)
    data = zip_bytes({**GOOD, "bomb.bin": zeros})
    assert len(data) < 64 * 1024
    refuse(
        data, store, r'^archive member "mybot/bomb.bin": the archive unpacks to more than 1 MiB$'
    )


def test_zip_bomb_with_a_lying_size_stops_while_reading(store: Path) -> None:
    """The declared size says 1 KiB; zipfile stops at it and the checksum fails."""
    data = bytearray(zip_bytes({"cardarena.toml": MANIFEST, "bot.py": b"", "b": b"\0" * 65536}))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.rfind(signature)
        struct.pack_into("<L", data, at + offset, 1024)
    refuse(
        bytes(data),
        store,
        r'^archive member "mybot/b": truncated or corrupt zip archive: Bad CRC-32',
    )


def test_gzip_bomb_stops_at_the_cap_in_bounded_memory(store: Path) -> None:
    data = tar_bytes({**GOOD, "bomb.bin": b"\0" * (16 << 20)})
    tracemalloc.start()
    try:
        refuse(data, store, r'"mybot/bomb.bin": the archive unpacks to more than 1 MiB$')
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_tar_header_bomb_stops_at_the_stream_cap(store: Path) -> None:
    """A pax header is read whole by tarfile: the stream under it ends at the cap."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("cardarena.toml")
        info.size = len(MANIFEST)
        info.pax_headers = {"comment": "x" * (16 << 20)}
        tar.addfile(info, io.BytesIO(MANIFEST))
    limits = ArchiveLimits(max_files=10, max_unpacked_bytes=1 << 20)
    tracemalloc.start()
    try:
        refuse(buf.getvalue(), store, r"^the tar stream is larger than its limit", limits)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20


def test_tar_with_a_huge_declared_size(store: Path) -> None:
    info = tarfile.TarInfo("huge.bin")
    info.size = 1 << 40
    header = info.tobuf(tarfile.GNU_FORMAT)
    head = tar_of(gz=False)[: -2 * 512]  # without its end-of-archive blocks
    head = head.rstrip(b"\0")
    head += b"\0" * (-len(head) % 512)
    refuse(
        head + header + b"\0" * 4096,
        store,
        r'^archive member "huge.bin": the archive unpacks to more than 1 MiB$',
    )


def test_too_many_files(store: Path) -> None:
    many = {**GOOD, **{f"f{i}.txt": b"" for i in range(60)}}
    refuse(tar_bytes(many), store, r"^the archive holds more than 50 files and directories$")
    refuse(zip_bytes(many), store, r"^the archive holds more than 50 files and directories$")


def test_upload_too_large(store: Path, tmp_path: Path) -> None:
    limits = ArchiveLimits(max_upload_bytes=1000)
    data = tar_bytes({**GOOD, "noise": os.urandom(4000)})
    refuse(data, store, r"^the upload is larger than the limit of 1000 bytes$", limits)
    path = tmp_path / "big.tgz"
    path.write_bytes(data)
    refuse(path.read_bytes(), store, r"larger than the limit", limits)
    with pytest.raises(ArchiveError, match="larger than the limit"):
        store_snapshot(path, store, limits)


def test_path_limits(store: Path) -> None:
    limits = ArchiveLimits(max_path_length=40, max_depth=3)
    refuse(tar_of(member("a/b/c/d.txt")), store, r'"a/b/c/d.txt": deeper than 3', limits)
    refuse(tar_of(member("x" * 41)), store, r"a path longer than 40 bytes", limits)
    refuse(tar_of(member("y" * 256)), store, r"a name longer than 255 bytes")


def test_duplicates_and_conflicts(store: Path) -> None:
    refuse(tar_of(member("bot.py", data=b"again")), store, r'"bot.py": a path that appears twice')
    refuse(
        tar_of(member("lib", data=b"x"), member("lib/x.py")),
        store,
        r'"lib/x.py": its directory "lib" is a file',
    )
    refuse(
        tar_of(member("lib/x.py"), member("lib", data=b"x")),
        store,
        r'"lib": a path that appears twice',
    )


def test_names(store: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(
        fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, errors="surrogateescape"
    ) as tar:
        for name in ("cardarena.toml", "bot.py", "caf\udce9.txt"):  # latin-1 é, not UTF-8
            info = tarfile.TarInfo(name)
            data = MANIFEST if name == "cardarena.toml" else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    refuse(buf.getvalue(), store, r'^archive member "caf\\xe9.txt": a name that is not UTF-8$')
    refuse(tar_of(member("a\nb")), store, r'^archive member "a\\x0ab": a control character')
    refuse(zip_bytes({**GOOD, "lib\\evil.py": b""}), store, r"a backslash in its name")
    with pytest.raises(ArchiveError, match="empty name"):
        member_path("")
    assert member_path("./a//b/./c") == "a/b/c"
    assert member_path("./") == ""


def test_encrypted_zip(store: Path) -> None:
    data = bytearray(zip_bytes(GOOD, prefix=""))
    at = data.find(b"PK\x01\x02")
    struct.pack_into("<H", data, at + 8, 0x1)  # the central directory's flags
    refuse(bytes(data), store, r'^archive member "cardarena.toml": encrypted')


def test_zip_methods(store: Path) -> None:
    refuse(
        zip_bytes(GOOD, method=zipfile.ZIP_BZIP2),
        store,
        r"compression method bzip2 is not supported \(use deflate or store\)$",
    )


def test_sparse_tar(store: Path) -> None:
    refuse(tar_of(member("holes", tarfile.GNUTYPE_SPARSE)), store, r'"holes": a sparse file')


def test_missing_manifest(store: Path) -> None:
    without = {k: v for k, v in GOOD.items() if k != "cardarena.toml"}
    refuse(
        tar_bytes(without),
        store,
        r'^no cardarena.toml at the archive\'s root or in its top-level directory "mybot/"$',
    )
    refuse(tar_bytes(without, prefix=""), store, r"^no cardarena.toml at the archive's root$")
    refuse(tar_bytes({}, prefix=""), store, r"^the archive is empty$")
    refuse(zip_bytes({}, prefix="", dirs=False), store, r"^the archive is empty$")


@pytest.mark.parametrize(
    ("manifest", "pattern"),
    [
        (b'command = "python3 bot.py"\nentry = "x"\n', r'unknown key "entry" \(the keys are'),
        (b'runtime = "python3"\n', r'no "command"'),
        (b"command = 3\n", r'"command" must be a string'),
        (b'command = "  "\n', r'"command" is empty'),
        (b'command = "python3 \'bot.py"\n', r"cannot parse the command: No closing quotation"),
        (b'command = "python3\\u0000 bot.py"\n', r"a control character"),
        (b'command = "./bot"\n', r'program "./bot" is not in the archive'),
        (b'command = "lib/util.py"\n', r'program "lib/util.py" is not executable'),
        (b'command = "lib"\n', r'program "lib" not found on PATH'),
        (
            b'command = "bot.py"\n',
            r'not found on PATH; to run the archive\'s own file, write "./bot.py"$',
        ),
        (b'command = "../bin/sh"\n', r"is outside the bot's directory"),
        (b'command = "/no/such/program"\n', r'program "/no/such/program" not found'),
        (b'command = "python3 bot.py"\nruntime = "py 3"\n', r'"runtime" "py 3": use up to 32'),
        (b"command = [\n", r"^cardarena.toml: not valid TOML: "),
        (b"x = " + b"[" * 5000 + b"]" * 5000, r"^cardarena.toml: not valid TOML: .* too deeply$"),
        (b"\xff\xfe", r"^cardarena.toml is not UTF-8 text$"),
    ],
)
def test_bad_manifest(store: Path, manifest: bytes, pattern: str) -> None:
    refuse(tar_bytes({**GOOD, "cardarena.toml": manifest}), store, pattern)


def test_good_commands(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bot").write_bytes(b"")
    (tmp_path / "bin" / "bot").chmod(0o755)
    for command in ("python3 bot.py", "./bin/bot --fast", "bin/bot", "sh -c 'exec bin/bot'"):
        check_bot_command(command, tmp_path)
    check_bot_command("FOO=1 whatever", tmp_path)  # shell forms are left to the shell


def test_not_an_archive(store: Path) -> None:
    refuse(b"hello, world\n" * 100, store, r"^not a tar or zip archive \(.tar, .tar.gz")
    refuse(b"", store, r"^not a tar or zip archive")
    refuse(gzip.compress(b"just text\n" * 100), store, r"^gzip data that is not a tar archive$")
    with pytest.raises(ArchiveError):
        archive_format(b"\x7fELF" + b"\0" * 1000)


def test_truncated_gzip(store: Path) -> None:
    data = tar_bytes({**GOOD, "noise": os.urandom(20000)})
    refuse(data[: len(data) // 2], store, r"truncated or corrupt gzip data: Compressed file ended")
    refuse(data[:-4], store, r"truncated or corrupt gzip data")  # the size in the trailer


def test_truncated_tar(store: Path) -> None:
    data = tar_bytes(GOOD, gz=False, dirs=False, prefix="")
    first = 512 + 512  # the manifest's header and its data block
    refuse(data[: first + 700], store, r"truncated or corrupt tar archive")
    refuse(data[:first], store, r"end-of-archive marker")


def test_corrupt_zip(store: Path) -> None:
    data = zip_bytes(GOOD)
    refuse(data[: len(data) // 2], store, r"^truncated or corrupt zip archive")


def test_errors_are_arena_errors() -> None:
    assert issubclass(ArchiveError, ArenaError)
    assert issubclass(SnapshotError, ArenaError)


def test_unpack_into_a_directory(tmp_path: Path) -> None:
    unpacked = unpack_archive(tar_bytes(GOOD), tmp_path)
    assert unpacked.root == tmp_path / "mybot"
    assert unpacked.manifest.name == "mine"
    assert stat.S_IMODE((tmp_path / "mybot" / "bin" / "run").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "mybot" / "lib").stat().st_mode) == 0o755

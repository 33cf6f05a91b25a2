"""A bot uploaded as an archive of its source: formats, limits, the refusals, the manifest.

An upload is a ``.tar``, a gzip-compressed tar (``.tar.gz``, ``.tgz``) or a ``.zip``, told apart
by its first bytes, never by its name. :func:`unpack_archive` writes its files into an empty
directory and reads the manifest; :mod:`arena.snapshots.tree` stores the result under its
content address. Every refusal is an :class:`ArchiveError` of one line that names the problem
and, where there is one, the member: ``archive member "../x": a path outside the bot's
directory``.

What an archive may hold (the policy, decided here once):

- Regular files and directories only. **Every link is refused**, symbolic or hard, even one that
  stays inside: a bot's directory needs none, and a tree without links cannot be walked out of,
  by the unpacker, the hasher or anything that reads a snapshot later. Devices, FIFOs, sockets,
  sparse files and other special members are refused too.
- Relative paths of UTF-8 names, without control characters (NUL among them) or backslashes;
  ``.`` components and repeated slashes are dropped, so ``./bot.py`` is ``bot.py``. Absolute
  paths and any ``..`` component are refused, as is a path that appears twice or a file where
  another member needs a directory.
- Only the executable bit of a file's mode is kept: files are written 0o755 when any execute bit
  is set, else 0o644, directories 0o755. Owners, times, setuid and setgid bits are dropped.
- Zip members must be stored or deflated, never encrypted; a Unix mode in a member's external
  attributes is honoured for its type (a symlink or device is refused) and its executable bit.
- :class:`ArchiveLimits`: upload size, number of files and directories, unpacked bytes, path
  length and depth. They are checked while reading, so a compression bomb stops at the cap:
  data is decompressed in small chunks and counted, a member whose declared size exceeds what is
  left is refused before any of it is read, a zip's central directory is counted before it is
  parsed, and a tar stream (headers included) is cut off at the unpacked cap plus a fixed
  allowance per member.

The manifest is ``cardarena.toml`` at the archive's root, or at the root of its single top-level
directory, which is then the bot's directory (``tar czf bot.tgz mybot/`` works as is)::

    command = "python3 bot.py"   # required: run by /bin/sh with the snapshot as working directory
    runtime = "python3"          # optional label shown to people: python3, node, native, ...
    name = "mybot"               # optional, ignored: the upload names the bot

Its command is checked for form as a tournament bot's (:mod:`arena.bots.command`), and the
program it names must be an executable file of the archive (``./bot``, ``bin/bot``) or a program
on this machine's PATH (``python3``, ``node``).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import shlex
import shutil
import stat
import struct
import tarfile
import tomllib
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, Self

from arena.bots.command import PROTOCOLS, BotProtocol, bot_path
from arena.checks import TOO_DEEP
from arena.errors import ArenaError

#: The manifest's file name, at the bot's root.
MANIFEST_NAME = "cardarena.toml"
#: The largest manifest read.
MAX_MANIFEST_BYTES = 64 * 1024
#: The longest command a manifest may give.
MAX_COMMAND_LENGTH = 4096
#: A runtime label: short, plain, shown to people.
RUNTIME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,31}")
#: The longest ``name`` a manifest may give (it is ignored, but shown back if wrong).
MAX_NAME_LENGTH = 64
#: The manifest's keys.
MANIFEST_KEYS = ("command", "runtime", "name", "protocol")

#: What :func:`archive_format` tells apart.
ArchiveFormat = Literal["tar", "tar.gz", "zip"]

_MIB = 1 << 20
#: Read and write size: decompression never produces more than this at once.
_CHUNK = 64 * 1024
#: Longest name of one path component (the file systems' NAME_MAX).
_MAX_NAME_BYTES = 255
#: Tar bytes allowed per member beyond its data: its header, padding and a pax header (paths,
#: times, the extended attributes some tars add).
_TAR_MEMBER_OVERHEAD = 16 * 1024
#: A central directory entry's signature; each parsed entry starts with it.
_ZIP_CD_SIGNATURE = b"PK\x01\x02"
_ZIP_EOCD_SIGNATURE = b"PK\x05\x06"
#: The end of central directory record, and the zip64 locator and record that may precede it.
_ZIP_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_TRAILER = 56 + 20
#: gzip, and the zip signatures of a local header and of an empty archive.
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_ZIP_METHOD_NAMES = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
_ZIP_ENCRYPTED = 0x1 | 0x40  # traditional and strong encryption flags
_ZIP_UTF8_NAME = 0x800
#: tarfile's "end of archive" header error, the one that ends an archive normally (not exported
#: by the typing stubs, present since Python 3.2).
_TAR_END: type[Exception] = getattr(tarfile, "EOFHeaderError")  # noqa: B009


class ArchiveError(ArenaError):
    """An upload is refused; the message is one line naming the problem (and the member)."""


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """What one upload may be and unpack to."""

    #: The upload itself (the archive's bytes).
    max_upload_bytes: int = 32 * _MIB
    #: Files and directories written, implied directories counted.
    max_files: int = 2000
    #: The files' bytes, unpacked.
    max_unpacked_bytes: int = 256 * _MIB
    #: A member's path, in UTF-8 bytes, after ``./`` and the like are dropped.
    max_path_length: int = 1024
    #: Components of a member's path.
    max_depth: int = 32

    def __post_init__(self) -> None:
        for key in ("max_upload_bytes", "max_files", "max_unpacked_bytes"):
            if getattr(self, key) < 1:
                raise ValueError(f"ArchiveLimits.{key} must be positive")
        if self.max_path_length < 1 or self.max_depth < 1:
            raise ValueError("ArchiveLimits.max_path_length and max_depth must be positive")


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True, slots=True)
class Manifest:
    """A bot's ``cardarena.toml``."""

    #: Shell command that starts the bot, run in the snapshot's directory.
    command: str
    #: Label shown to people (``python3``, ``node``, ``native``), or ``""``.
    runtime: str = ""
    #: The author's name for the bot, or ``""``; the server ignores it.
    name: str = ""
    #: How the bot talks to the arena: ``grpc``, or ``stdio`` (JSON lines on its stdin and
    #: stdout, docs/protocol.md).
    protocol: BotProtocol = "grpc"

    def to_dict(self) -> dict[str, str]:
        """What a store keeps: command and runtime (and the protocol when not gRPC)."""
        kept = {"command": self.command, "runtime": self.runtime}
        return kept if self.protocol == "grpc" else {**kept, "protocol": self.protocol}


@dataclass(frozen=True, slots=True)
class Unpacked:
    """An archive written into a directory."""

    #: The bot's directory: the destination, or its single top-level directory.
    root: Path
    #: Its manifest, checked.
    manifest: Manifest


class _Reader(Protocol):
    def read(self, size: int, /) -> bytes: ...


def quote_name(name: str) -> str:
    """A member name in double quotes, safe on one line: control characters, bytes that were
    not UTF-8 and quotes escaped; very long names shortened."""
    out: list[str] = []
    for ch in name[:200]:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + ("…" if len(name) > 200 else "") + '"'


def _member_error(name: str, problem: str) -> ArchiveError:
    return ArchiveError(f"archive member {quote_name(name)}: {problem}")


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _size(n: int) -> str:
    return f"{n // _MIB} MiB" if n >= _MIB and n % _MIB == 0 else f"{n} bytes"


def read_upload(upload: bytes | Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> bytes:
    """The upload's bytes, refused when over ``max_upload_bytes`` (a file is not read then)."""
    cap = limits.max_upload_bytes
    if isinstance(upload, Path):
        try:
            with upload.open("rb") as f:
                # A file over the cap is refused without reading it.
                too_big = os.fstat(f.fileno()).st_size > cap
                data = b"" if too_big else f.read(cap + 1)
        except OSError as err:
            raise ArchiveError(f"cannot read the upload {str(upload)!r}: {err.strerror}") from None
    else:
        data = bytes(upload)
        too_big = False
    if too_big or len(data) > cap:
        raise ArchiveError(f"the upload is larger than the limit of {_size(cap)}")
    return data


def _is_tar_header(block: bytes) -> bool:
    """A tar header: the ustar magic, or (old tars have none) a valid header checksum."""
    if len(block) < 512:
        return False
    if block[257:262] == b"ustar" or block[:512] == bytes(512):  # zeros: an empty tar's end
        return True
    field = block[148:156].replace(b"\0", b" ").strip()
    if not field or any(c not in b"01234567" for c in field):
        return False
    return int(field, 8) == sum(block[:148]) + 8 * 0x20 + sum(block[156:512])


def archive_format(data: bytes) -> ArchiveFormat:
    """Which archive ``data`` is, by its first bytes; refuses anything else."""
    if data.startswith(_GZIP_MAGIC):
        return "tar.gz"
    if data.startswith(_ZIP_MAGICS):
        return "zip"
    if _is_tar_header(data[:512]):
        return "tar"
    raise ArchiveError("not a tar or zip archive (.tar, .tar.gz, .tgz or .zip)")


def member_path(name: str, limits: ArchiveLimits = DEFAULT_LIMITS) -> str:
    """A member's name as a checked relative path (``""``: the archive's root itself)."""
    if not name:
        raise ArchiveError("archive member with an empty name")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise _member_error(name, "a control character in its name")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise _member_error(name, "a name that is not UTF-8")
    if "\\" in name:
        raise _member_error(name, "a backslash in its name (separate directories with /)")
    if name.startswith("/"):
        raise _member_error(name, "an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _member_error(name, "a path outside the bot's directory")
    path = "/".join(parts)
    if len(path.encode()) > limits.max_path_length:
        raise _member_error(name, f"a path longer than {limits.max_path_length} bytes")
    if len(parts) > limits.max_depth:
        raise _member_error(name, f"deeper than {limits.max_depth} directories")
    if any(len(p.encode()) > _MAX_NAME_BYTES for p in parts):
        raise _member_error(name, f"a name longer than {_MAX_NAME_BYTES} bytes")
    return path


class _Tree:
    """The destination directory as members are written into it: what is there, and the limits
    counted so far."""

    def __init__(self, dest: Path, limits: ArchiveLimits) -> None:
        self.dest = dest
        self.limits = limits
        #: Path → ``"dir"`` or ``"file"``, for everything written (implied directories too).
        self.kinds: dict[str, str] = {}
        #: Paths that were members (not only implied directories).
        self.listed: set[str] = set()
        self.entries = 0
        self.unpacked = 0
        #: The member being read, for errors raised by the archive libraries.
        self.current: str | None = None

    def _count(self) -> None:
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise ArchiveError(
                f"the archive holds more than {self.limits.max_files} files and directories"
            )

    def _claim(self, name: str, path: str, kind: str) -> None:
        if path in self.listed or (path in self.kinds and "file" in (kind, self.kinds[path])):
            raise _member_error(name, "a path that appears twice in the archive")
        self.listed.add(path)

    def _mkdir(self, path: str) -> None:
        target = self.dest / path
        os.mkdir(target, 0o755)
        os.chmod(target, 0o755)  # whatever the umask
        self.kinds[path] = "dir"
        self._count()

    def _parents(self, name: str, path: str) -> None:
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            kind = self.kinds.get(parent)
            if kind == "file":
                raise _member_error(name, f"its directory {quote_name(parent)} is a file")
            if kind is None:
                self._mkdir(parent)

    def directory(self, name: str, path: str) -> None:
        if not path:  # ``./``: the root, which exists
            return
        self._claim(name, path, "dir")
        self._parents(name, path)
        if path not in self.kinds:
            self._mkdir(path)

    def file(self, name: str, path: str, executable: bool, size: int, src: _Reader) -> None:
        if not path:
            raise _member_error(name, "a file where the archive's root directory should be")
        self._claim(name, path, "file")
        cap = self.limits.max_unpacked_bytes
        if size > cap - self.unpacked:  # a declared size is refused before anything is read
            raise _member_error(name, f"the archive unpacks to more than {_size(cap)}")
        self._parents(name, path)
        self.kinds[path] = "file"
        self._count()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.dest / path, flags, 0o600)
        with open(fd, "wb", closefd=True) as out:
            while chunk := src.read(_CHUNK):
                self.unpacked += len(chunk)
                if self.unpacked > cap:  # declared sizes can lie: count what is read
                    raise _member_error(name, f"the archive unpacks to more than {_size(cap)}")
                out.write(chunk)
            out.flush()
            os.fchmod(fd, 0o755 if executable else 0o644)
            # Durable before the snapshot is renamed into place (a power cut, not only a kill).
            os.fsync(fd)


class _CappedStream:
    """A tar's (decompressed) bytes, cut off at ``cap``: tarfile reads a pax or GNU long-name
    header whole into memory, whatever size it declares, so the stream under it must end."""

    def __init__(self, source: _Reader, cap: int) -> None:
        self._source = source
        self._cap = cap
        self._read = 0

    def read(self, size: int = -1, /) -> bytes:
        want = _CHUNK if size < 0 else size
        data = self._source.read(min(want, self._cap - self._read + 1))
        self._read += len(data)
        if self._read > self._cap:
            raise ArchiveError(
                f"the tar stream is larger than its limit of {self._cap} bytes "
                "(the unpacked limit and an allowance per member for headers)"
            )
        return data

    def write(self, b: bytes, /) -> int:
        raise io.UnsupportedOperation("write")

    def tell(self) -> int:
        return self._read

    def seek(self, pos: int, /) -> int:
        raise io.UnsupportedOperation("seek")

    def close(self) -> None:
        pass


class _StrictTarInfo(tarfile.TarInfo):
    """tarfile ends an archive quietly at a truncated or invalid header after the first one;
    here only the end-of-archive block does, so a cut-off tar is refused, not half read."""

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(archive)
        except _TAR_END:
            raise
        except (tarfile.HeaderError, EOFError) as err:
            raise ArchiveError(
                f"truncated or corrupt tar archive: {_one_line(err)} "
                "(it ends without its end-of-archive marker)"
            ) from None


def _unpack_tar(data: bytes, compressed: bool, tree: _Tree) -> None:
    limits = tree.limits
    source: _Reader = io.BytesIO(data)
    if compressed:
        first = _peek(data)
        if len(first) == 512 and not _is_tar_header(first):
            raise ArchiveError("gzip data that is not a tar archive")
        source = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
    stream = _CappedStream(
        source, limits.max_unpacked_bytes + (limits.max_files + 4) * _TAR_MEMBER_OVERHEAD
    )
    with tarfile.open(
        fileobj=stream,
        mode="r|",
        tarinfo=_StrictTarInfo,
        encoding="utf-8",
        errors="surrogateescape",
    ) as archive:
        for member in archive:
            name = member.name
            tree.current = name
            path = member_path(name, limits)
            if member.issparse():
                raise _member_error(name, "a sparse file (archive it without --sparse)")
            if member.isdir():
                tree.directory(name, path)
            elif member.isreg():
                src = archive.extractfile(member)
                if src is None:  # pragma: no cover - isreg() members always have a reader
                    raise _member_error(name, "unreadable")
                tree.file(name, path, bool(member.mode & 0o111), member.size, src)
            else:
                raise _member_error(name, _special_kind(member))
            tree.current = None
    # The rest of the stream: a gzip's checksum is checked only when it is read to its end.
    while stream.read(_CHUNK):
        pass


def _peek(data: bytes) -> bytes:
    """The first tar block of gzip ``data`` (decompressing no more than that)."""
    try:
        # A slice: the decompressor keeps a copy of the input it has not used.
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:_MIB], 512)
    except zlib.error:
        return b""


def _special_kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "a symbolic link (links are refused: archive the file itself)"
    if member.islnk():
        return "a hard link (links are refused: archive the file itself)"
    if member.ischr() or member.isblk():
        return "a device file"
    if member.isfifo():
        return "a FIFO (named pipe)"
    return f"an unsupported member type {member.type!r}"


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The member's name as written, NUL included (zipfile cuts a name at NUL), and read as
    UTF-8 even without the UTF-8 flag (zipfile reads those as cp437; most tools write UTF-8)."""
    name = info.orig_filename
    if info.flag_bits & _ZIP_UTF8_NAME:
        return name
    try:
        raw = name.encode("cp437")
    except UnicodeEncodeError:
        return name
    return raw.decode("utf-8", "surrogateescape")


def _check_zip_directory(data: bytes, limits: ArchiveLimits) -> None:
    """Count the central directory's entries before zipfile parses them all into memory: each
    starts with a signature, so counting signatures in the bytes zipfile would parse bounds it."""
    end = data.rfind(_ZIP_EOCD_SIGNATURE, max(0, len(data) - _ZIP_EOCD.size - 0xFFFF))
    if end < 0 or len(data) - end < _ZIP_EOCD.size:
        raise ArchiveError("truncated or corrupt zip archive: no end of central directory")
    cd_size = _ZIP_EOCD.unpack_from(data, end)[5]
    start = 0 if cd_size == 0xFFFFFFFF else max(0, end - cd_size - _ZIP64_TRAILER)
    if data.count(_ZIP_CD_SIGNATURE, start, end) > limits.max_files:
        raise ArchiveError(f"the archive holds more than {limits.max_files} files and directories")


#: What macOS's Finder adds to every zip it makes (resource forks, AppleDouble files): not part of
#: the bot, and skipped, so a bot zipped there has a single top-level directory as it looks.
_MACOS_FOLDER = "__MACOSX"


def _macos_extra(name: str) -> bool:
    return name.split("/", 1)[0] == _MACOS_FOLDER


def _unpack_zip(data: bytes, tree: _Tree) -> None:
    limits = tree.limits
    _check_zip_directory(data, limits)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            name = _zip_name(info)
            if _macos_extra(name):
                continue
            tree.current = name
            path = member_path(name, limits)
            mode = info.external_attr >> 16  # a Unix mode, when the archiver wrote one
            kind = stat.S_IFMT(mode)
            if info.flag_bits & _ZIP_ENCRYPTED:
                raise _member_error(name, "encrypted (upload an archive without a password)")
            if kind == stat.S_IFLNK:
                raise _member_error(
                    name, "a symbolic link (links are refused: archive the file itself)"
                )
            if kind in (stat.S_IFCHR, stat.S_IFBLK):
                raise _member_error(name, "a device file")
            if kind == stat.S_IFIFO:
                raise _member_error(name, "a FIFO (named pipe)")
            if info.is_dir() or kind == stat.S_IFDIR:
                tree.directory(name, path)
                continue
            if kind not in (0, stat.S_IFREG):
                raise _member_error(name, f"an unsupported file type (mode {mode:o})")
            if info.compress_type not in _ZIP_METHODS:
                method = _ZIP_METHOD_NAMES.get(info.compress_type, str(info.compress_type))
                raise _member_error(
                    name, f"compression method {method} is not supported (use deflate or store)"
                )
            with archive.open(info) as src:
                tree.file(name, path, bool(mode & 0o111), info.file_size, src)
            tree.current = None


def unpack_archive(
    upload: bytes | Path, dest: Path, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Unpacked:
    """Write the archive ``upload`` into ``dest`` (an existing, empty directory) and read its
    manifest; raises :class:`ArchiveError` on any refusal, leaving ``dest`` for the caller to
    remove (:func:`arena.snapshots.tree.store_snapshot` does)."""
    data = read_upload(upload, limits)
    fmt = archive_format(data)
    tree = _Tree(dest, limits)
    try:
        if fmt == "zip":
            _unpack_zip(data, tree)
        else:
            _unpack_tar(data, fmt == "tar.gz", tree)
    except ArchiveError:
        raise
    except (
        tarfile.TarError,
        zipfile.BadZipFile,
        gzip.BadGzipFile,
        zlib.error,
        EOFError,
        UnicodeDecodeError,
        NotImplementedError,
        ValueError,
        struct.error,
    ) as err:
        what = "gzip data" if fmt == "tar.gz" else f"{fmt} archive"
        where = f"archive member {quote_name(tree.current)}: " if tree.current else ""
        raise ArchiveError(f"{where}truncated or corrupt {what}: {_one_line(err)}") from None
    if tree.entries == 0:
        raise ArchiveError("the archive is empty")
    root = _bot_root(dest)
    return Unpacked(root=root, manifest=read_manifest(root))


def _bot_root(dest: Path) -> Path:
    """Where the manifest is: ``dest``, or its single top-level directory."""
    if os.path.lexists(dest / MANIFEST_NAME):
        return dest
    entries = list(dest.iterdir())
    if len(entries) == 1 and entries[0].is_dir():
        top = entries[0]
        if os.path.lexists(top / MANIFEST_NAME):
            return top
        raise ArchiveError(
            f"no {MANIFEST_NAME} at the archive's root or in its top-level directory "
            f"{quote_name(top.name + '/')}"
        )
    raise ArchiveError(f"no {MANIFEST_NAME} at the archive's root")


def read_manifest(root: Path, *, check: bool = True) -> Manifest:
    """The manifest of the bot in ``root``; with ``check``, its command is checked against the
    directory and this machine's PATH (:func:`check_bot_command`)."""
    path = root / MANIFEST_NAME
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise ArchiveError(f"no {MANIFEST_NAME} in the bot's directory") from None
    if not stat.S_ISREG(info.st_mode):
        raise ArchiveError(f"{MANIFEST_NAME} is not a regular file")
    if info.st_size > MAX_MANIFEST_BYTES:
        raise ArchiveError(f"{MANIFEST_NAME} is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ArchiveError(f"{MANIFEST_NAME} is not UTF-8 text") from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ArchiveError(f"{MANIFEST_NAME}: not valid TOML: {_one_line(err)}") from None
    except RecursionError:  # 64 KiB is room for ~30,000 nested brackets
        raise ArchiveError(f"{MANIFEST_NAME}: not valid TOML: {TOO_DEEP}") from None
    for key, value in table.items():
        if key not in MANIFEST_KEYS:
            raise ArchiveError(
                f"{MANIFEST_NAME}: unknown key {quote_name(key)} "
                f"(the keys are {', '.join(MANIFEST_KEYS)})"
            )
        if not isinstance(value, str):
            raise ArchiveError(f'{MANIFEST_NAME}: "{key}" must be a string')
    if "command" not in table:
        raise ArchiveError(
            f'{MANIFEST_NAME}: no "command" (how the bot starts, e.g. command = "python3 bot.py")'
        )
    command = str(table["command"]).strip()
    runtime = str(table.get("runtime", "")).strip()
    name = str(table.get("name", "")).strip()
    if runtime and not RUNTIME_RE.fullmatch(runtime):
        raise ArchiveError(
            f'{MANIFEST_NAME}: "runtime" {quote_name(runtime)}: use up to 32 letters, digits, '
            "'_', '.', '+' or '-' (python3, node, native, ...)"
        )
    if len(name) > MAX_NAME_LENGTH or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise ArchiveError(
            f'{MANIFEST_NAME}: "name" must be one line of at most {MAX_NAME_LENGTH} characters'
        )
    _check_command_form(command)
    if check:
        check_bot_command(command, root)
    return Manifest(command=command, runtime=runtime, name=name, protocol=_protocol(table))


def _protocol(table: dict[str, object]) -> BotProtocol:
    """The manifest's ``protocol`` (default ``grpc``)."""
    value = str(table.get("protocol", "grpc")).strip()
    for known in PROTOCOLS:
        if value == known:
            return known
    raise ArchiveError(
        f'{MANIFEST_NAME}: "protocol" {quote_name(value)}: must be one of {", ".join(PROTOCOLS)}'
    )


def _command_error(command: str, problem: str) -> ArchiveError:
    return ArchiveError(f'{MANIFEST_NAME}: "command" {quote_name(command)}: {problem}')


def _check_command_form(command: str) -> list[str]:
    """The command's words, refusing what :func:`arena.bots.command.check_command` refuses for
    form (empty, does not parse) and what a stored command must not hold."""
    if not command:
        raise ArchiveError(f'{MANIFEST_NAME}: "command" is empty')
    if len(command) > MAX_COMMAND_LENGTH:
        raise _command_error(command, f"longer than {MAX_COMMAND_LENGTH} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in command):
        raise _command_error(command, "a control character (NUL, newline, ...) in the command")
    try:
        words = shlex.split(command)
    except ValueError as err:
        raise _command_error(command, f"cannot parse the command: {err}") from None
    if not words:
        raise ArchiveError(f'{MANIFEST_NAME}: "command" is empty')
    return words


def check_bot_command(command: str, root: Path) -> None:
    """Refuse ``command`` when, run by the shell in the bot's directory ``root``, it cannot start
    its program: a path must name an executable file inside ``root`` (or, when absolute, a file
    on this machine, as :func:`arena.bots.command.check_command` allows), a bare name must be a
    program on the bots' PATH (:func:`arena.bots.command.bot_path`)."""
    program = _check_command_form(command)[0]
    if "=" in program:  # ``VAR=value prog``: leave shell forms to the shell, as check_command
        return
    if "/" in program:
        if program.startswith("/"):
            if not os.path.exists(program):
                raise _command_error(command, f"program {quote_name(program)} not found")
            return
        parts = [p for p in program.split("/") if p not in ("", ".")]
        if ".." in parts or not parts:
            raise _command_error(
                command, f"program {quote_name(program)} is outside the bot's directory"
            )
        try:
            info = os.lstat(root.joinpath(*parts))
        except (FileNotFoundError, NotADirectoryError):
            raise _command_error(
                command, f"program {quote_name(program)} is not in the archive"
            ) from None
        if not stat.S_ISREG(info.st_mode):
            raise _command_error(command, f"program {quote_name(program)} is not a file")
        if not info.st_mode & 0o111:
            raise _command_error(
                command,
                f"program {quote_name(program)} is not executable (set its executable bit, "
                "chmod +x, before archiving it)",
            )
        return
    if shutil.which(program, path=bot_path()) is None:
        hint = ""
        if os.path.lexists(root / program):
            hint = f"; to run the archive's own file, write {quote_name('./' + program)}"
        raise _command_error(command, f"program {quote_name(program)} not found on PATH{hint}")

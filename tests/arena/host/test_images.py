"""Image tarballs (arena/host/images.py): told apart from archives of source, kept under the
image id with their tags stripped, and every kind of hostile or unusable tarball refused in one
line. The Docker engine's side (loading, running the container) is in ``make test-docker``."""

from __future__ import annotations

import gzip
import io
import json
import stat
import tarfile
from pathlib import Path

import pytest

from arena.host.images import image_path, is_image_tarball, remove_partial_tarballs, store_image
from arena.snapshots.archive import ArchiveError, ArchiveLimits
from tests.arena.host.image_tarballs import config_id, image_config, image_tarball, layer

LIMITS = ArchiveLimits(max_upload_bytes=1 << 24, max_files=50, max_unpacked_bytes=1 << 22)


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        out = {}
        for m in tar.getmembers():
            f = tar.extractfile(m)
            assert f is not None, m.name
            out[m.name] = f.read()
        return out


def test_a_tarball_is_kept_under_its_image_id_without_its_tags(tmp_path: Path) -> None:
    data = image_tarball(tags=("python:3.11", "cardarena/version:abc"))
    assert is_image_tarball(data, LIMITS)
    image = store_image(data, tmp_path, LIMITS)
    assert image.sha256 == config_id(data)
    assert image.path == image_path(tmp_path, image.sha256) == tmp_path / f"{image.sha256}.tar"
    assert image.manifest == {
        "runtime": "image",
        "image": f"sha256:{image.sha256}",
        "command": "arena bot random",
    }
    kept = members(image.path)
    # Only the configuration, the layers and a manifest naming no tag: no `repositories`.
    assert set(kept) == {f"{image.sha256}.json", f"{0:064x}/layer.tar", "manifest.json"}
    manifest = json.loads(kept["manifest.json"])
    assert manifest == [
        {
            "Config": f"{image.sha256}.json",
            "RepoTags": None,
            "Layers": [f"{0:064x}/layer.tar"],
        }
    ]
    assert stat.S_IMODE(image.path.stat().st_mode) == 0o444
    # Again, gzip'd: the same image, the same file, nothing else left behind.
    again = store_image(gzip.compress(data), tmp_path, LIMITS)
    assert (again.sha256, again.path) == (image.sha256, image.path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [image.path.name]


def test_archives_of_source_are_not_image_tarballs(tmp_path: Path) -> None:
    def tar(files: dict[str, bytes]) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w:gz") as t:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return out.getvalue()

    source = {"cardarena.toml": b'command = "python3 bot.py"\n', "bot.py": b""}
    assert not is_image_tarball(tar(source), LIMITS)
    # A bot whose data file is called manifest.json is still a bot.
    assert not is_image_tarball(tar({**source, "manifest.json": b"[]"}), LIMITS)
    nested = {f"bot/{k}": v for k, v in source.items()} | {"manifest.json": b"[]"}
    assert not is_image_tarball(tar(nested), LIMITS)
    assert not is_image_tarball(b"PK\x03\x04 a zip", LIMITS)
    assert not is_image_tarball(b"not an archive at all", LIMITS)
    assert is_image_tarball(gzip.compress(image_tarball()), LIMITS)


def _renamed_config() -> bytes:
    return image_tarball(config_name=f"{'0' * 64}.json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (image_tarball(images=2), "manifest.json must name exactly one image (it names 2)"),
        (image_tarball(extra={"../evil": b"x"}), 'archive member "../evil": a path outside'),
        (image_tarball(extra={"/etc/evil": b"x"}), 'archive member "/etc/evil": an absolute path'),
        (
            image_tarball(links={"escape": "/etc/passwd"}),
            'member "escape" is not a regular file or directory',
        ),
        (_renamed_config(), "does not match its name (the tarball was altered)"),
        (
            image_tarball(config=image_config(1, architecture="s390x")),
            "built for linux/s390x; this host runs linux/",
        ),
        (
            image_tarball(config=image_config(1, config={"User": "root"})),
            "the image has no command (give it a CMD or ENTRYPOINT)",
        ),
        (
            image_tarball(config=image_config(3)),
            "its configuration's layer digests do not match its layers",
        ),
        (
            image_tarball([gzip.compress(layer({"a": b"b"}))]),
            "is compressed or not a tar (save with docker save)",
        ),
        (image_tarball(extra={"manifest.json": b"{not json"}), "its manifest.json is not JSON"),
        (
            image_tarball([layer({"big": bytes(5 << 20)})]),
            "it unpacks to more than the limit of 4194304 bytes",
        ),
        (
            gzip.compress(image_tarball([layer({"big": bytes(8 << 20)})])),
            "it unpacks to more than the limit of",
        ),
    ],
    ids=[
        "two-images",
        "traversal",
        "absolute",
        "symlink",
        "altered-config",
        "architecture",
        "no-command",
        "layer-count",
        "compressed-layer",
        "bad-manifest",
        "too-big",
        "gzip-bomb",
    ],
)
def test_a_bad_tarball_is_refused_in_one_line_and_nothing_is_kept(
    tmp_path: Path, data: bytes, message: str
) -> None:
    with pytest.raises(ArchiveError) as caught:
        store_image(data, tmp_path / "images", LIMITS)
    text = str(caught.value)
    assert message in text and "\n" not in text, text
    assert list((tmp_path / "images").iterdir()) == []


def test_a_layer_the_manifest_names_but_the_tarball_lacks(tmp_path: Path) -> None:
    data = image_tarball()
    with tarfile.open(fileobj=io.BytesIO(data)) as src:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:") as dst:
            for m in src.getmembers():
                if not m.name.endswith("layer.tar"):
                    dst.addfile(m, src.extractfile(m))
    with pytest.raises(ArchiveError, match=r'names "0{64}/layer\.tar", which it does not hold'):
        store_image(buf.getvalue(), tmp_path, LIMITS)


def test_half_written_tarballs_are_removed_at_start(tmp_path: Path) -> None:
    kept = store_image(image_tarball(), tmp_path, LIMITS)
    (tmp_path / ".tmp-abc.tar").write_bytes(b"half")
    remove_partial_tarballs(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [kept.path.name]
    remove_partial_tarballs(tmp_path / "missing")  # no directory yet: nothing to do

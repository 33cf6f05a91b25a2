"""``docker save`` tarballs made in Python for tests of image submissions: the legacy layout
Docker writes (``manifest.json``, ``<id>.json``, ``<layer>/layer.tar``, ``repositories``), with
knobs to spoil each part."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from typing import Any

from arena.host.images import host_architecture


def layer(files: dict[str, bytes]) -> bytes:
    """An uncompressed layer tar of ``files``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def image_config(n_layers: int, **changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "architecture": host_architecture(),
        "os": "linux",
        "config": {"Cmd": ["arena", "bot", "random"], "User": "root"},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{i:064x}" for i in range(n_layers)]},
    }
    config.update(changes)
    return config


def image_tarball(
    layers: list[bytes] | None = None,
    *,
    config: dict[str, Any] | None = None,
    tags: tuple[str, ...] = ("python:3.11",),
    images: int = 1,
    extra: dict[str, bytes] | None = None,
    config_name: str | None = None,
    links: dict[str, str] | None = None,
) -> bytes:
    """A tarball of one image (``images`` copies of its manifest entry), tagged ``tags``, with
    ``extra`` files and symbolic ``links`` (name → target) added."""
    layers = [layer({"bot.py": b"print('hi')\n"})] if layers is None else layers
    config = image_config(len(layers)) if config is None else config
    raw = json.dumps(config).encode()
    digest = hashlib.sha256(raw).hexdigest()
    members: dict[str, bytes] = {config_name or f"{digest}.json": raw}
    layer_paths = []
    for i, data in enumerate(layers):
        path = f"{i:064x}/layer.tar"
        members[path] = data
        layer_paths.append(path)
    entry = {
        "Config": config_name or f"{digest}.json",
        "RepoTags": list(tags),
        "Layers": layer_paths,
    }
    members["manifest.json"] = json.dumps([entry] * images).encode()
    members["repositories"] = json.dumps({t.split(":")[0]: {"x": "y"} for t in tags}).encode()
    members.update(extra or {})
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return out.getvalue()


def config_id(tarball: bytes) -> str:
    """The image id (hex) of a tarball made by :func:`image_tarball`."""
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        manifest = json.loads(_read(tar, "manifest.json"))
        return hashlib.sha256(_read(tar, manifest[0]["Config"])).hexdigest()


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    f = tar.extractfile(name)
    assert f is not None
    return f.read()

"""The engine as a distribution of its own: a fresh venv with only ``cardarena-engine`` and
``cardarena-sdk`` (``pip install ./engine ./sdk/python``, as docs/sdk.md says) runs docs/sdk.md's
"Playing in process" snippet, ``play`` and a duplicate ``duel``, without importing grpc, and
``arena replay verify`` passes on the records it writes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.slow


def _snippet() -> str:
    """The Python block of docs/sdk.md's "Playing in process" section, verbatim."""
    text = (ROOT / "docs" / "sdk.md").read_text()
    section = text.split("## Playing in process", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "docs/sdk.md: no python block under 'Playing in process'"
    return found.group(1)


@pytest.fixture(scope="module")
def venv_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory with a venv holding the engine and the SDK, installed the documented way."""
    home = tmp_path_factory.mktemp("author")
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    # Copies: pip builds in the tree it installs from, and the checkout stays as it was.
    engine = shutil.copytree(ROOT / "engine", home / "src" / "engine", ignore=ignore)
    sdk = shutil.copytree(ROOT / "sdk" / "python", home / "src" / "sdk", ignore=ignore)
    subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
    pip = str(home / "venv" / "bin" / "pip")
    subprocess.run(
        [pip, "install", "--quiet", "--disable-pip-version-check", str(engine), str(sdk)],
        check=True,
        capture_output=True,
    )
    yield home


def test_the_venv_holds_the_engine_and_the_sdk_only(venv_home: Path) -> None:
    listed = subprocess.run(
        [str(venv_home / "venv" / "bin" / "pip"), "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"cardarena-engine", "cardarena-sdk"} <= names
    assert not names & {"card-arena", "trio", "structlog", "numpy", "scipy", "docker"}
    for absent in ("arena", "reference_bots"):
        done = subprocess.run(
            [str(venv_home / "venv" / "bin" / "python"), "-c", f"import {absent}"],
            cwd=venv_home,
            capture_output=True,
        )
        assert done.returncode != 0, absent


def test_the_docs_snippet_plays_and_duels_in_the_fresh_venv(venv_home: Path) -> None:
    script = venv_home / "snippet.py"
    check = "\nimport sys\nassert 'grpc' not in sys.modules, 'in-process play loaded grpc'\n"
    script.write_text(_snippet() + check)
    done = subprocess.run(
        [str(venv_home / "venv" / "bin" / "python"), str(script)],
        cwd=venv_home,  # not the checkout: its packages would be importable from there
        env={**os.environ, "PYTHONBREAKPOINT": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Two deals, each in both rotations, then the duel's SPRT line.
    assert len(lines) == 5, done.stdout
    assert [line.split()[0].rsplit("-", 2)[1:] for line in lines[:4]] == [
        ["g1", "r0"],
        ["g1", "r1"],
        ["g2", "r0"],
        ["g2", "r1"],
    ]
    assert "units" in lines[4] and "LLR" in lines[4]
    records = sorted((venv_home / "out" / "local").glob("*.jsonl.gz"))
    assert len(records) == 4
    verified = subprocess.run(
        [ARENA, "replay", "verify", *map(str, records)], capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.count("ok ") == 4

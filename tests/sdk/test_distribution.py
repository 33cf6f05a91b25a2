"""The Python SDK as a distribution of its own: ``pip install ./sdk/python`` into a fresh venv
gives ``cardarena`` with grpcio and protobuf and nothing of the arena, and a bot written against
it plays ``arena match`` (sandboxed) as any bot does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bot's directory holding a venv with only the SDK installed, the documented way."""
    home = tmp_path_factory.mktemp("author")
    venv = home / "venv"
    # A copy of the SDK's directory: pip builds in the tree it installs from, and the checkout
    # stays as it was.
    source = shutil.copytree(
        ROOT / "sdk" / "python",
        home / "sdk",
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    yield home


def _python(home: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(home / "venv" / "bin" / "python"), "-c", code],
        cwd=home,  # not the checkout: its packages would be importable from the current directory
        capture_output=True,
        text=True,
    )


def test_the_sdk_installs_alone_with_grpcio_and_protobuf(sdk_venv: Path) -> None:
    listed = subprocess.run(
        [
            str(sdk_venv / "venv" / "bin" / "pip"),
            "list",
            "--format",
            "json",
            "--disable-pip-version-check",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    # What a fresh venv brings (pip, setuptools), the SDK, and what grpcio and protobuf need.
    assert {"cardarena-sdk", "grpcio", "protobuf"} <= names
    assert not names & {"card-arena", "trio", "structlog", "numpy", "scipy", "docker"}
    assert _python(sdk_venv, "import cardarena; print(cardarena.__version__)").stdout.strip()
    for absent in ("engine", "arena", "reference_bots"):
        assert _python(sdk_venv, f"import {absent}").returncode != 0, absent


def _match(home: Path, bot: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            ARENA,
            "match",
            "whist",
            "--bot",
            f"venv/bin/python {bot}",
            *("--bot", "arena bot random") * 3,
            "--seed",
            "5",
            "--option",
            "points_to_win=1",
            "--out",
            str(home / "out"),
            *extra,
        ],
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_bot_on_the_sdk_alone_plays_arena_match(sdk_venv: Path) -> None:
    (sdk_venv / "first.py").write_text(
        "from cardarena import Bot, run_bot\n\n"
        "class First(Bot):\n"
        "    name = 'first'\n\n"
        "    def choose(self, game, observation, legal):\n"
        "        return 0\n\n"
        "run_bot(First())\n"
    )
    done = _match(sdk_venv, "first.py", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    seat = summary["seats"][0]
    assert (seat["bot"], seat["faults"], seat["forfeited"]) == ("first", [], False)
    assert seat["answer_time"]["answers"] == seat["answer_time"]["decisions"] > 0
    assert summary["result"]["reason"] == "normal"


def test_the_stateful_example_keeps_its_record_across_matches(sdk_venv: Path) -> None:
    shutil.copy(ROOT / "examples" / "bots" / "tally.py", sdk_venv / "tally.py")
    done = _match(sdk_venv, "tally.py", "--games", "2")
    assert done.returncode == 0, done.stderr
    lines = [
        json.loads(line)
        for log in sorted((sdk_venv / "out" / "logs").glob("seat0-*.log"))
        for line in log.read_text().splitlines()
        if line.startswith("{")
    ]
    tallies = [line for line in lines if line["event"] == "tally"]
    # One process played both matches: its record grows, and it saw the cards of each.
    assert [t["won"] + t["lost"] for t in tallies] == [1, 2]
    assert all(t["cards_seen"] >= 52 for t in tallies)

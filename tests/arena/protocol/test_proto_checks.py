"""buf's checks of the protocol file: its lint (buf.yaml: STANDARD, with the exceptions v1
cannot meet written there), and no wire-breaking change against the last release's copy
(proto/released). buf is the npm package @bufbuild/buf at the version proto/tools locks,
installed by ``make proto-tools`` (run by ``make test``) or here; without npm the tests fail
saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ROOT / "proto" / "tools"
BUF = TOOLS / "node_modules" / ".bin" / "buf"
PROTO = ROOT / "proto" / "cardarena" / "v1" / "arena.proto"
RELEASED = ROOT / "proto" / "released"


def _locked_version() -> str:
    lock = json.loads((TOOLS / "package-lock.json").read_text())
    version: str = lock["packages"]["node_modules/@bufbuild/buf"]["version"]
    return version


def _installed_version() -> str | None:
    if not BUF.exists():
        return None
    done = subprocess.run([str(BUF), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.fixture(scope="module")
def buf() -> Path:
    """buf at the locked version, installed with ``npm ci`` when it is missing or another."""
    if _installed_version() != _locked_version():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm must be installed to check the .proto with buf (make proto-tools)")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=TOOLS,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci failed in {TOOLS}:\n{done.stdout}\n{done.stderr}")
        assert _installed_version() == _locked_version(), "npm ci did not install the locked buf"
    return BUF


def _buf(buf: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(buf), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_buf_lint_passes(buf: Path) -> None:
    done = _buf(buf, "lint")
    assert done.returncode == 0, f"buf lint:\n{done.stdout}{done.stderr}"


def test_no_wire_breaking_change_against_the_last_release(buf: Path) -> None:
    done = _buf(buf, "breaking", "--against", "proto/released")
    assert done.returncode == 0, f"buf breaking:\n{done.stdout}{done.stderr}"


def test_the_only_json_break_since_the_release_is_the_announced_rename(buf: Path) -> None:
    """WIRE_JSON (stricter than the WIRE that buf.yaml checks) finds exactly the renames the
    change log announces: hand_size to hand_count, in two messages, numbers unchanged."""
    config = {
        "version": "v2",
        "modules": [{"path": "proto", "excludes": ["proto/released", "proto/tools"]}],
        "breaking": {"use": ["WIRE_JSON"]},
    }
    done = _buf(buf, "breaking", "--against", "proto/released", "--config", json.dumps(config))
    renames = set(re.findall(r'Field "(\d+)" on message "(\w+)" changed name', done.stdout))
    assert renames == {("5", "TennisWhistObservation"), ("4", "TennisPlayerView")}, done.stdout
    assert done.stdout.count("\n") == 4, done.stdout  # each: its name and its json_name


def _module_with(tmp_path: Path, text: str) -> Path:
    """A copy of the repository's buf setup whose .proto is ``text``."""
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    shutil.copytree(RELEASED, tmp_path / "proto" / "released")
    target = tmp_path / "proto" / "cardarena" / "v1" / "arena.proto"
    target.parent.mkdir(parents=True)
    target.write_text(text)
    return tmp_path


def test_the_copy_of_the_setup_passes_unchanged(buf: Path, tmp_path: Path) -> None:
    # The baseline of the next test: only its one edit can make it fail.
    work = _module_with(tmp_path, PROTO.read_text())
    done = _buf(buf, "breaking", "--against", "proto/released", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr


def test_breaking_check_catches_a_changed_field_number(buf: Path, tmp_path: Path) -> None:
    text = PROTO.read_text()
    edited = text.replace(
        "  uint64 request_id = 1;\n  // The match this",
        "  uint64 request_id = 9;\n  // The match this",
        1,
    )
    assert edited != text
    work = _module_with(tmp_path, edited)
    done = _buf(buf, "breaking", "--against", "proto/released", cwd=work)
    assert done.returncode != 0
    assert 'message "DecisionRequest"' in done.stdout, done.stdout


def test_lint_catches_an_unprefixed_enum_value(buf: Path, tmp_path: Path) -> None:
    text = PROTO.read_text()
    edited = text.replace("ERROR_CODE_FLOOD = 5;", "FLOOD = 5;", 1)
    assert edited != text
    done = _buf(buf, "lint", cwd=_module_with(tmp_path, edited))
    assert done.returncode != 0
    assert "FLOOD" in done.stdout, done.stdout

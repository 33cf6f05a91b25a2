"""The Node reference bot's npm packages, installed once per test session (``npm ci``) unless
node_modules already holds exactly the versions of package-lock.json. A fixture, so that every
test needing the Node bot (its own matches, the example configs that seat it) gets it whatever
order the tests run in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JS_DIR = ROOT / "reference_bots" / "js"
BOT_JS = JS_DIR / "bot.js"


def _lock_satisfied() -> bool:
    """Whether node_modules holds every package of package-lock.json at its locked version."""
    lock = json.loads((JS_DIR / "package-lock.json").read_text())
    for where, meta in lock["packages"].items():
        if not where:
            continue  # the root project itself
        manifest = JS_DIR / where / "package.json"
        if not manifest.is_file():
            return False
        if json.loads(manifest.read_text()).get("version") != meta.get("version"):
            return False
    return True


@pytest.fixture(scope="session")
def node_bot() -> list[str]:
    """The command that starts the Node bot, after making sure its packages are installed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm must be installed (Node 18 or later) to test the Node bot")
    if not _lock_satisfied():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci failed in {JS_DIR}:\n{done.stdout}\n{done.stderr}")
        assert _lock_satisfied(), "npm ci did not install the locked versions"
    return [node, str(BOT_JS)]

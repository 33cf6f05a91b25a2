"""The copies of the referee's law in docs/rules/law/ (scripts/sync_rules.py): never edited by
hand, and the same as the shared pages wherever those are at hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sync_rules", ROOT / "scripts" / "sync_rules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_copy_is_the_text_its_banner_names() -> None:
    sync = _script()
    for name in sync.PAGES:
        first, text = sync.split((sync.OUT / name).read_text(encoding="utf-8"))
        assert first == sync.banner(name, text), f"docs/rules/law/{name} was edited by hand"


def test_the_copies_are_the_shared_pages_when_those_are_here(tmp_path: Path) -> None:
    sync = _script()
    # A clone elsewhere has no ../shared: the test above still holds the copies to their banners.
    if not (sync.SOURCE / "README.md").is_file():
        pytest.skip(
            f"../shared/rules is not beside the checkout ({sync.SOURCE}): "
            "no shared pages to compare docs/rules/law/ with"
        )
    out = tmp_path / "law"
    sync.sync(sync.SOURCE, out)
    for name in sync.PAGES:
        fresh = (out / name).read_text(encoding="utf-8")
        assert (sync.OUT / name).read_text(encoding="utf-8") == fresh, (
            f"docs/rules/law/{name} is stale: run python scripts/sync_rules.py"
        )

"""The sandbox suite's marker."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests here (real bots boxed, flooding, killed with their arena) are the sandbox
    suite: `make test-sandbox` runs them, not `make test`."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.sandbox)

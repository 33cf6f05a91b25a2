"""The store's pages for the HTTP API: ``finished_matches_page`` is ``finished_matches`` newest
first, sliced in SQL, with each unit's state; ``version_refs`` names versions in one query."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.host.config import check_competition
from arena.host.store import CompetitionStore, Phase
from engine import Result
from tests.arena.host.serving import validated_versions

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")


def test_a_page_is_the_full_list_sliced(tmp_path: Path) -> None:
    config = check_competition({"game": "whist"}, "test", "cup")
    with CompetitionStore(tmp_path / "competition", config) as store:
        ids = validated_versions(store, ("a", "b", "c"))
        # Ladder and final units of every pair, each played out but the last (half played: its
        # record is not public yet).
        pairs = [(x, y) for x in ids for y in ids if x < y] * 3
        for n, (x, y) in enumerate(pairs):
            phase: Phase = "final" if n % 4 == 3 else "ladder"
            rotations = [(f"m{n}-r{r}", r, (x, y, x, y)[r:] + (x, y, x, y)[:r]) for r in (0, 1)]
            store.create_unit(phase, n, (x, y), rotations)
            store.commit_match(f"m{n}-r0", WIN, [], None)
            if n < len(pairs) - 1:
                store.commit_match(f"m{n}-r1", WIN, [], None)

        for version in (None, *ids):
            for phase_ in (None, "ladder", "final"):
                full = store.finished_matches(version_id=version, phase=phase_)[::-1]
                assert full, (version, phase_)
                for limit, offset in [(1, 0), (3, 0), (3, 2), (5, 4), (100, 0), (2, len(full) - 1)]:
                    page = store.finished_matches_page(version, phase_, limit, offset)
                    assert [m for m, _ in page] == full[offset : offset + limit]
                    assert [s for _, s in page] == [store.unit(m.unit_id).state for m, _ in page]
                assert store.finished_matches_page(version, phase_, 10, len(full)) == []
        assert {s for _, s in store.finished_matches_page(limit=1000)} == {"done", "pending"}
        refs = store.version_refs([ids[0], ids[2], ids[0], 999])
        assert refs == {ids[0]: "a@1", ids[2]: "c@1"}
        assert store.version_refs([]) == {}


@pytest.mark.parametrize("offset", [0, 2**62])
def test_an_empty_store_has_empty_pages(tmp_path: Path, offset: int) -> None:
    config = check_competition({"game": "whist"}, "test", "cup")
    with CompetitionStore(tmp_path / "competition", config) as store:
        assert store.finished_matches_page(limit=1000, offset=offset) == []

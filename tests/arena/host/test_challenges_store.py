"""The challenges table (schema 8): a challenge is stored playing, then done or failed and never
changed again; it enters the ladder's fit only when stored rated (``[challenges] rated``), with
the person as a player of their own; the limits' counts; a stopped host's challenges fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.host.config import CompetitionConfigError, check_competition
from arena.host.store import CompetitionStore, CompetitionStoreError
from arena.ratings import fit_ratings
from tests.arena.host.test_host_store import WIN_A, WIN_B, config, two_versions, whist_unit


def test_an_unrated_challenge_stays_out_of_the_fit_and_a_rated_one_counts(
    tmp_path: Path,
) -> None:
    with CompetitionStore(tmp_path / "cup", config(tmp_path)) as store:
        a, b = two_versions(store)
        unit = whist_unit(store, a.id, b.id)
        for m in store.unit_matches(unit):
            store.commit_match(m.match_id, WIN_A, [], None)
        before = store.rated_matches("ladder")
        assert len(before[0]) == 2
        alice = a.author_id
        store.add_challenge("challenge-1", alice, [None, b.id, b.id, b.id], 7, rated=False)
        assert store.author_challenges(alice, "2000-01-01T00:00:00.000Z")[1] == 1
        # The person's seat and their partner's (a version) rank first: person:alice wins.
        assert store.finish_challenge("challenge-1", WIN_A, [], "records/c1.jsonl.gz")
        assert not store.finish_challenge("challenge-1", WIN_B, [], "records/c1.jsonl.gz")
        assert store.rated_matches("ladder") == before
        refs = {r.bot for r in fit_ratings(before[0], clusters=before[1]).ratings}
        assert refs == {a.ref, b.ref}
        store.add_challenge("challenge-2", alice, [None, b.id, a.id, b.id], 8, rated=True)
        store.finish_challenge("challenge-2", WIN_A, [], "records/c2.jsonl.gz")
        entries, clusters = store.rated_matches("ladder")
        assert len(entries) == 3 and clusters[-1] < 0
        assert entries[-1][0].bots == ("person:alice", a.ref) and entries[-1][0].rank == 1
        assert store.rated_matches("ladder", season=1)[0] == entries
        assert store.rated_matches("final") == ([], [])
        fitted = {r.bot for r in fit_ratings(entries, clusters=clusters).ratings}
        assert "person:alice" in fitted
        # Neither is a ladder match.
        assert {m.match_id for m in store.finished_matches()} == {
            m.match_id for m in store.unit_matches(unit)
        }
        created, playing = store.author_challenges(alice, "2000-01-01T00:00:00.000Z")
        assert len(created) == 2 and playing == 0
        assert [c.match_id for c in store.challenges()] == ["challenge-2", "challenge-1"]


def test_a_stopped_host_s_challenges_fail_and_stay_failed(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "cup", config(tmp_path)) as store:
        a, b = two_versions(store)
        with pytest.raises(CompetitionStoreError, match="one person's seat"):
            store.add_challenge("challenge-x", a.author_id, [a.id, b.id, a.id, b.id], 1, False)
        store.add_challenge("challenge-1", a.author_id, [b.id, None, b.id, b.id], 1, False)
        assert store.fail_challenges("the host stopped") == 1
        c = store.challenge("challenge-1")
        assert (c.state, c.reason, c.person_seat) == ("failed", "the host stopped", 1)
        assert not store.finish_challenge("challenge-1", WIN_A, [], "records/x")
        assert store.challenge("challenge-1").state == "failed"


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ({"enabled": "yes"}, "challenges.enabled: must be true or false"),
        ({"move_ms": 5}, "challenges.move_ms: must be at least 1000"),
        ({"max_open_per_author": 0}, "challenges.max_open_per_author: must be at least 1"),
        ({"opponents": "all"}, "challenges.opponents: must be one of newest, ladder"),
        ({"rated_by": True}, "challenges.rated_by: unknown key"),
    ],
)
def test_a_bad_challenges_table_is_one_line(table: dict[str, object], words: str) -> None:
    with pytest.raises(CompetitionConfigError) as err:
        check_competition({"game": "whist", "challenges": table}, "cup.toml", "cup")
    assert str(err.value).startswith(f"cup.toml: {words}") and "\n" not in str(err.value)

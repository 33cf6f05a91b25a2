"""Events on a real competition store, results committed by hand: each round derived from the
stored results, a store reopened mid-event (as after a kill -9) going on with nothing stored
twice, and the winner as the stated rules say; the config's ``[[events]]`` checks."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.host.config import CompetitionConfig, CompetitionConfigError, load_competition
from arena.host.events.rounds import advance_event, begin_event, start_now
from arena.host.events.views import event_detail
from arena.host.store import CompetitionStore, Conflict, NotFound
from arena.ratings import fit_ratings
from engine import Result
from tests.arena.host.test_host_store import validated

WHIST = 'game = "whist"\n[options]\npoints_to_win = 1\n'
SPOIL = 'game = "spoil_five"\nplayers = 3\n'


def load(tmp_path: Path, text: str) -> CompetitionConfig:
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return load_competition(path)


def field(store: CompetitionStore, n: int) -> list[int]:
    out = []
    for i in range(n):
        author, _ = store.add_author(f"author{i}")
        out.append(validated(store, author.id, f"bot{i}").id)
    return out


Strength = Callable[[int], float]


def play_pending(store: CompetitionStore, config: CompetitionConfig, strength: Strength) -> int:
    """Commit every pending match: the stronger place wins (a tie when equal)."""
    played = 0
    for m in store.pending_matches():
        versions = [m.seats[g[0]] for g in config.places]
        power = [strength(v) for v in versions]
        ranks = [1 + sum(o > p for o in power) for p in power]
        seat_rank = [0] * len(m.seats)
        for place, group in enumerate(config.places):
            for seat in group:
                seat_rank[seat] = ranks[place]
        scores = tuple(float(len(power) - r) for r in seat_rank)
        assert store.commit_match(m.match_id, Result(scores, tuple(seat_rank)), [], None)
        played += 1
    return played


def run_to_end(
    directory: Path, config: CompetitionConfig, name: str, strength: Strength, reopen_at: int
) -> tuple[str | None, int]:
    """Step the event until it ends, reopening the store (a restart) after ``reopen_at``
    steps; the winner's ref and the matches played."""
    played = 0
    for step in itertools.count():
        with CompetitionStore(directory, config) as store:
            event = store.event(name)
            if event.state == "finished":
                winner = None if event.winner is None else store.version(event.winner).ref
                return winner, played
            # A step derived twice (a host killed after it) stores nothing the second time.
            advance_event(store, config, event)
            if step == reopen_at:
                continue
            assert advance_event(store, config, store.event(name)).new_units == []
            played += play_pending(store, config, strength)
    raise AssertionError("unreachable")


def test_a_knockout_plays_to_its_end_across_restarts(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        WHIST + '[[events]]\nname = "cup"\nformat = "knockout"\nentrants = 5\nbest_of = 2\n',
    )
    directory = tmp_path / "c"
    with CompetitionStore(directory, config) as store:
        ids = field(store, 6)
        # Nobody rated yet: the oldest five enter, by age; bot5 is left out.
        ladder = fit_ratings([])
        event = begin_event(store, config, ladder, config.events[0])
        assert event is not None and len(event.entrants) == 5
        with pytest.raises(Conflict):
            begin_event(store, config, ladder, config.events[0])
    strength = {v: float(v) for v in ids}
    # The strongest entrant wins every tie.
    winner, played = run_to_end(directory, config, "cup", strength.__getitem__, reopen_at=1)
    with CompetitionStore(directory, config) as store:
        entrants = store.event("cup").entrants
        assert winner == store.version(max(entrants, key=strength.__getitem__)).ref
        # Five entrants: three byes, then 1 tie, 2 semi-finals, the final: 4 ties of 2 deals
        # of 2 rotations; nothing played twice.
        assert played == 4 * 2 * 2
        matches = store.event_matches(store.event("cup").id)
        assert len(matches) == played == len({m.match_id for m in matches})
        detail = event_detail(store, config, "cup")
        assert [r.name for r in detail.rounds] == ["quarter-final", "semi-final", "final"]
        assert detail.winner == winner and detail.rounds[-1].ties[0].result == [winner]


def test_a_level_knockout_tie_has_an_extra_deal_then_goes_to_the_better_seed(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, WHIST + '[[events]]\nname = "cup"\nentrants = 2\n')
    directory = tmp_path / "c"
    with CompetitionStore(directory, config) as store:
        field(store, 2)
        event = begin_event(store, config, fit_ratings([]), config.events[0])
        assert event is not None
    winner, played = run_to_end(directory, config, "cup", lambda v: 1.0, reopen_at=0)
    with CompetitionStore(directory, config) as store:
        seed_1 = store.event("cup").entrants[0]
        assert winner == store.version(seed_1).ref
        assert played == 4  # the deal and its extra deal, each in both rotations
        assert "won the final" in store.event("cup").reason


def strongest_last(
    directory: Path, config: CompetitionConfig, name: str, n: int, reopen_at: int
) -> tuple[list[int], str | None, int]:
    """``n`` versions, the event started by the host and played to its end, each version
    stronger than the one before; their ids, the winner and the matches played."""
    with CompetitionStore(directory, config) as store:
        ids = field(store, n)
        start_now(store, config, fit_ratings([]), name)
    strength = {v: float(v) for v in ids}
    winner, played = run_to_end(directory, config, name, strength.__getitem__, reopen_at)
    return ids, winner, played


def test_a_swiss_pairs_without_repeats_and_the_strongest_leads(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        WHIST + '[[events]]\nname = "open"\nformat = "swiss"\nentrants = 5\nrounds = 4\n',
    )
    directory = tmp_path / "c"
    ids, winner, played = strongest_last(directory, config, "open", 5, reopen_at=2)
    with CompetitionStore(directory, config) as store:
        assert winner == store.version(ids[-1]).ref
        detail = event_detail(store, config, "open")
        assert len(detail.rounds) == 4 and played == 4 * 2 * 2  # two pairings a round, a bye
        pairs = [frozenset(t.sides) for r in detail.rounds for t in r.ties if None not in t.sides]
        assert len(pairs) == len(set(pairs))
        assert detail.standings[0].ref == winner and detail.standings[0].points == 4


def test_heats_send_the_best_of_each_heat_to_a_final_heat(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        SPOIL + '[[events]]\nname = "heats"\nformat = "heats"\nentrants = 7\nadvance = 1\n',
    )
    directory = tmp_path / "c"
    ids, winner, _ = strongest_last(directory, config, "heats", 7, reopen_at=0)
    with CompetitionStore(directory, config) as store:
        assert winner == store.version(ids[-1]).ref
        detail = event_detail(store, config, "heats")
        # Seven into heats of 3, 2, 2 (snake); their winners make the final heat of three.
        assert [len(t.sides) for t in detail.rounds[0].ties] == [3, 2, 2]
        assert detail.rounds[-1].name == "final heat" and len(detail.rounds[-1].ties[0].sides) == 3


def test_starting_an_unknown_or_short_event_is_one_line(tmp_path: Path) -> None:
    config = load(tmp_path, WHIST + '[[events]]\nname = "cup"\n')
    with CompetitionStore(tmp_path / "c", config) as store:
        with pytest.raises(NotFound, match="no event 'nope' in the competition's config"):
            start_now(store, config, fit_ratings([]), "nope")
        with pytest.raises(Conflict, match="needs at least two validated versions"):
            start_now(store, config, fit_ratings([]), "cup")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[events]]\nname = "x"\nformat = "cup"\n', "events[0].format: must be one of"),
        ('[[events]]\nname = "x"\nbest_of = 0\n', "events[0].best_of"),
        ('[[events]]\nname = "x"\nrounds = 3\n', "events[0].rounds: unknown key for a knockout"),
        ('[[events]]\nname = "x"\nformat = "heats"\n', "heats are for tables of 3 or more"),
        ('[[events]]\nname = "x y"\n', "events[0].name: letters, digits"),
        ('[[events]]\nname = "x"\n[[events]]\nname = "x"\n', "events[1].name: 'x' is taken"),
        ('[[events]]\nname = "x"\nstart = "tomorrow"\n', "events[0].start: must be a UTC time"),
        ('[[events]]\nname = "x"\nstart = 2026-01-01T10:00:00+02:00\n', "with its zone"),
        ("events = 3\n", "events: must be an array of tables"),
    ],
)
def test_a_bad_event_is_one_line_naming_its_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CompetitionConfigError) as err:
        # A top-level key goes before the [options] table.
        load(tmp_path, text + WHIST if text.startswith("events =") else WHIST + text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_spoil_five_event_must_be_heats(tmp_path: Path) -> None:
    with pytest.raises(CompetitionConfigError, match="is for two-sided games"):
        load(tmp_path, SPOIL + '[[events]]\nname = "x"\nformat = "swiss"\n')

"""Par (arena/par.py, arena/tournament/par.py): a tournament's results minus the reference's
scores on the same deals, replayed in process. The tournaments here are played in process too,
as the arena plays them (one bot per seat, seeded from the match seed and the seat:
test_par_e2e.py checks that against the real server), into a real results file."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from cardarena.bot import Bot, RandomBot

from arena.cli.tournament import par_reference
from arena.errors import UsageError
from arena.par import REFERENCES, MatchPar, Reference, match_par, reference_scores, summarize
from arena.rating_model import cluster_mean
from arena.tournament.par import PAR_NAME, tournament_par
from arena.tournament.schedule import build_schedule
from arena.tournament.store import DB_NAME, Store, StoreError
from engine import Result, get_game
from engine.local import play
from reference_bots.catalog import RulesOrRandomBot

WHIST = {"points_to_win": 1, "games_per_rubber": 1}
RULES = Reference("rules", RulesOrRandomBot)


def played(
    tmp_path: Path,
    bots: Mapping[str, Callable[[], Bot]],
    deals: int,
    *,
    duplicate: bool = True,
    seed: int = 5,
) -> Store:
    """A finished whist tournament of ``bots``, ``deals`` deals per table in both rotations."""
    spec = get_game("whist")
    config = spec.configure(4, WHIST)
    plans = build_schedule(spec, config, list(bots), "round_robin", 2 * deals, duplicate, seed)
    identity = {
        "game": "whist",
        "game_version": spec.version,
        "players": 4,
        "options": WHIST,
        "seed": seed,
    }
    store = Store(tmp_path / DB_NAME)
    store.initialize(identity, [(name, "") for name in bots], plans)
    for p in plans:
        seated = [bots[name]() for name in p.seats]
        match = play("whist", seated, seed=p.seed, players=4, options=WHIST)[0]
        store.finish(p.match_id, match.result, [], None, 0.0)
    return store


def test_a_copy_of_the_reference_scores_par_exactly_zero(tmp_path: Path) -> None:
    # The replay is the match itself: the same deals, the same bots seeded the same way.
    with played(tmp_path, {"rules": RulesOrRandomBot, "copy": RulesOrRandomBot}, 6) as store:
        table = tournament_par(store, RULES)
    assert len(table.matches) == 12
    assert all(m.par == {"rules": 0.0, "copy": 0.0} for m in table.matches)
    for bot in table.bots:
        assert (bot.mean, bot.plus_minus, bot.matches, bot.deals) == (0.0, 0.0, 12, 6)
        assert bot.mean - bot.plus_minus <= 0.0 <= bot.mean + bot.plus_minus


def test_random_has_a_negative_par_against_rules(tmp_path: Path) -> None:
    with played(tmp_path, {"rules": RulesOrRandomBot, "random": RandomBot}, 30) as store:
        table = tournament_par(store, RULES)
    by = table.by_bot()
    rand, rules = by["random"], by["rules"]
    assert rand.plus_minus is not None and rules.plus_minus is not None
    assert rand.mean + rand.plus_minus < 0 < rules.mean - rules.plus_minus
    assert (rand.deals, rand.matches) == (30, 60)
    assert [b.bot for b in table.bots] == ["rules", "random"]  # best first


def test_par_is_reproducible_and_each_deal_is_replayed_once(tmp_path: Path) -> None:
    made = 0

    def counted() -> Bot:
        nonlocal made
        made += 1
        return RulesOrRandomBot()

    reference = Reference("rules", counted)
    with played(tmp_path, {"rules": RulesOrRandomBot, "random": RandomBot}, 3) as store:
        first = tournament_par(store, reference)
        assert made == 3 * 4  # three deals, a bot per seat
        again = tournament_par(store, reference)
        assert made == 12  # from par.sqlite
        (tmp_path / PAR_NAME).unlink()
        fresh = tournament_par(store, reference)
        assert made == 24
    assert first == again == fresh
    assert first.to_dict()["matches"][0]["par"].keys() == {"rules", "random"}


def test_the_reference_replay_is_deterministic() -> None:
    scores = {reference_scores("whist", 4, WHIST, 99, RULES) for _ in range(3)}
    assert len(scores) == 1
    spoil = {reference_scores("spoil_five", 3, {"rounds": 1}, 7, RULES) for _ in range(2)}
    assert len(spoil) == 1


def test_a_forfeit_is_left_out(tmp_path: Path) -> None:
    store = played(tmp_path, {"rules": RulesOrRandomBot, "copy": RulesOrRandomBot}, 1)
    with store:
        done = store.matches("done")[0]
        with sqlite3.connect(tmp_path / DB_NAME) as db:
            db.execute("UPDATE matches SET status='pending' WHERE match_id=?", (done.match_id,))
        forfeit = Result((0.0, 1.0, 0.0, 1.0), (2, 1, 2, 1), "forfeit", 0)
        assert store.finish(done.match_id, forfeit, [], None, 0.0)
        table = tournament_par(store, RULES)
    assert table.left_out == 1 and len(table.matches) == 1
    assert "1 matches ended by a forfeit are left out." in table.render()


def test_a_damaged_cache_is_one_line(tmp_path: Path) -> None:
    with played(tmp_path, {"rules": RulesOrRandomBot, "copy": RulesOrRandomBot}, 1) as store:
        tournament_par(store, RULES)
        with sqlite3.connect(tmp_path / PAR_NAME) as db:
            db.execute("UPDATE reference_scores SET scores = 'x'")
        with pytest.raises(StoreError) as err:
            tournament_par(store, RULES)
    assert "\n" not in str(err.value)
    assert "par.sqlite" in str(err.value) and "damaged" in str(err.value)


def test_a_game_whose_rules_changed_is_refused(tmp_path: Path) -> None:
    with played(tmp_path, {"rules": RulesOrRandomBot, "copy": RulesOrRandomBot}, 1) as store:
        with sqlite3.connect(tmp_path / DB_NAME) as db:
            db.execute(
                "UPDATE meta SET value = json_set(value, '$.game_version', 'old') "
                "WHERE key='config'"
            )
        with pytest.raises(StoreError, match="version old, this engine has version"):
            tournament_par(store, RULES)
    assert not (tmp_path / PAR_NAME).exists()


def test_match_par_takes_a_bots_seats_together() -> None:
    assert match_par(["a", "b", "a", "b"], [2, 0, 2, 0], [1, 1, 1, 1]) == {"a": 1.0, "b": -1.0}
    assert match_par(["a", "a", "b"], [3, 1, 0], [1, 1, 1]) == {"a": 1.0, "b": -1.0}
    with pytest.raises(ValueError):
        match_par(["a", "b"], [1, 0, 0], [0, 0])


def test_the_clustered_mean_is_the_sandwich_of_a_mean() -> None:
    # Two clusters of two and one of one; x̄ = 1, each cluster's score g_c = Σ (x − x̄).
    values = [0.0, 2.0, 4.0, 0.0, -1.0]
    clusters = ["a", "a", "b", "b", "c"]
    mean, sd, g = cluster_mean(values, clusters)
    assert mean == 1.0 and g == 3
    scores = [(0 - 1) + (2 - 1), (4 - 1) + (0 - 1), -1 - 1]
    assert sd == pytest.approx(math.sqrt(3 / 2 * sum(s * s for s in scores) / 25))
    # Independent matches: the usual standard error with the n/(n−1) correction.
    mean, sd, g = cluster_mean([1.0, 2.0, 3.0], [1, 2, 3])
    assert sd == pytest.approx(math.sqrt(3 / 2 * (1 + 0 + 1) / 9))
    assert cluster_mean([5.0, 7.0], ["x", "x"]) == (6.0, None, 1)


def test_one_deal_gives_no_interval() -> None:
    table = summarize("rules", [MatchPar("m0", 1, {"a": 1.0}), MatchPar("m1", 1, {"a": 0.0})])
    assert table.bots[0].plus_minus is None
    assert table.render().splitlines()[1].split() == ["a", "+0.500", "-", "2", "1"]


@pytest.mark.parametrize("name", REFERENCES)
def test_every_reference_replays_the_same_match_twice(name: str) -> None:
    reference = par_reference(name)
    assert reference.label == ("search@64" if name == "search" else name)
    twice = {reference_scores("spoil_five", 3, {"rounds": 1}, 7, reference) for _ in range(2)}
    assert len(twice) == 1


def test_an_unknown_reference_is_one_line() -> None:
    with pytest.raises(UsageError, match=r"^--reference: unknown reference 'gib' \(known: rules"):
        par_reference("gib")

"""The ladder's par on a competition (``[ladder] par``; arena/host/par.py): computed by a part
of its own off the request path, cached in private/par.sqlite, served at
``/leaderboard/par`` over a real HTTP server."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing

import arena.host.par as host_par
from arena.cli.main import main
from arena.cli.tournament import par_reference
from arena.errors import ArenaError
from arena.host.announce import Announcer
from arena.host.api import HostState, create_app
from arena.host.config import CompetitionConfig, check_competition
from arena.host.ladder import Standings
from arena.host.par import ParKeeper
from arena.host.seasons import Seasons, parse_time
from arena.host.service import HostOptions, Listening, run_host
from arena.host.store import CompetitionStore
from arena.layout import PRIVATE_DIR
from arena.par import ParTable, Reference
from arena.ratings import fit_ratings
from arena.registry import hash_token
from arena.tournament.par import PAR_NAME
from engine.local import play
from engine.seeds import derive_seed
from reference_bots.catalog import RulesOrRandomBot
from tests.arena.host.serving import ADMIN, serving, validated_versions
from tests.arena.host.test_host_supervision import CONFIG, _done_matches, submit_two
from tests.arena.host.test_seasons import Clock
from tests.waiting import async_wait_until, wait_until

WHIST = {"points_to_win": 1, "games_per_rubber": 1}
RULES = Reference("rules", RulesOrRandomBot)


def config(par: object = "rules") -> CompetitionConfig:
    return check_competition(
        {"game": "whist", "options": WHIST, "ladder": {"par": par}}, "test", "cup"
    )


def ladder_of_copies(
    store: CompetitionStore, units: int, versions: tuple[int, int] | None = None
) -> tuple[str, str]:
    """Two versions (new ones unless given) that play as the rules bot does, ``units``
    duplicate deals between them, each played in process as the ladder's arena plays it; their
    refs."""
    a, b = versions or validated_versions(store, ("a", "b"))
    for _ in range(units):
        unit = store.next_unit_id()
        seed = derive_seed(1, "unit", unit)
        seatings = [(a, b) * 2, (b, a) * 2]
        ids = [f"u{unit}-r{r}" for r in range(2)]
        matches = [(ids[r], r, seatings[r]) for r in range(2)]
        store.create_unit("ladder", seed, (a, b), matches, unit_id=unit)
        for match_id, _, seats in matches:
            result = play("whist", [RulesOrRandomBot() for _ in seats], seed=seed, options=WHIST)
            assert store.commit_match(match_id, result[0].result, [], None)
    refs = {v.id: v.ref for v in store.versions()}
    return refs[a], refs[b]


def api_state(
    store: CompetitionStore,
    cfg: CompetitionConfig,
    directory: Path,
    par: Callable[[], ParTable | None],
) -> HostState:
    """The API's state over ``store`` with no ratings yet and ``par`` as the keeper's table."""
    empty = fit_ratings([])
    return HostState(
        store,
        cfg,
        directory,
        standings=lambda: Standings(empty, empty),
        admin_token_hash=hash_token(ADMIN),
        changed=lambda: None,
        par=par,
    )


def test_the_ladder_key_takes_a_reference_or_nothing() -> None:
    assert config().ladder.par == "rules"
    assert config("").ladder.par == ""
    assert check_competition({"game": "whist"}, "test", "cup").ladder.par == ""
    with pytest.raises(ArenaError) as err:
        config("gib")
    assert str(err.value) == (
        "test: ladder.par: must be \"\" (no par) or one of rules, random, search; got 'gib'"
    )


def remote_par(url: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``arena remote par`` against ``url``: its lines."""
    assert main(["remote", "par", "--server", url]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out.splitlines()


def test_versions_that_play_as_the_reference_have_par_zero_served_over_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = config()
    directory = tmp_path / "competition"
    with CompetitionStore(directory, cfg) as store:
        refs = ladder_of_copies(store, 3)
        keeper = ParKeeper(store, cfg, RULES, directory)
        state = api_state(store, cfg, directory, lambda: keeper.table)
        with serving(create_app(state)) as url, httpx.Client(base_url=url) as client:
            before = client.get("/api/v1/leaderboard/par")
            assert before.status_code == 200, before.text
            assert before.json() == {"reference": "rules", "rows": []}  # not computed yet
            assert remote_par(url, capsys) == [
                "no par against rules yet: it is computed as units finish"
            ]
            keeper.refresh()
            board = client.get("/api/v1/leaderboard/par").json()
            lines = remote_par(url, capsys)
    assert board["reference"] == "rules"
    assert sorted(r["ref"] for r in board["rows"]) == sorted(refs)
    for row in board["rows"]:
        assert row == {**row, "par": 0.0, "plus_minus": 0.0, "matches": 6, "deals": 3}
    assert (directory / PRIVATE_DIR / PAR_NAME).exists()  # the seeds stay private
    # `arena remote par`: the same table for a terminal.
    assert lines[0].split() == ["version", "par", "±", "matches", "deals"]
    assert sorted(line.split()[0] for line in lines[1:3]) == sorted(refs)
    assert all(line.split()[1:] == ["+0.000", "0.000", "6", "3"] for line in lines[1:3])
    assert lines[3].startswith("par: score per match minus rules's")


def test_the_keeper_refreshes_in_the_background(tmp_path: Path) -> None:
    cfg = config()
    directory = tmp_path / "competition"
    with CompetitionStore(directory, cfg) as store:
        ladder_of_copies(store, 1)
        keeper = ParKeeper(store, cfg, RULES, directory, interval_s=30.0)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(keeper.run)
                while keeper.table is None:
                    await trio.sleep(0.01)
                nursery.cancel_scope.cancel()

        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert keeper.table is not None and len(keeper.table.matches) == 2


def test_without_par_the_board_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config("")
    directory = tmp_path / "competition"
    with CompetitionStore(directory, cfg) as store:
        state = api_state(store, cfg, directory, lambda: None)
        with serving(create_app(state)) as url:
            board = httpx.get(f"{url}/api/v1/leaderboard/par").json()
            said = remote_par(url, capsys)
    assert board == {"reference": "", "rows": []}
    assert said == ["this competition measures no par ([ladder] par)"]


@pytest.mark.slow
def test_a_real_host_serves_the_par_of_its_ladder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `arena host`'s own path: the reference from the command line, the part under supervision,
    # real versions validated and played on the ladder by real bot processes.
    monkeypatch.setattr(host_par, "PAR_INTERVAL_S", 0.2)
    directory = tmp_path / "competition"
    raw = {**CONFIG, "ladder": {"concurrency": 2, "par": "rules"}}
    config = check_competition(raw, "t", "cup")
    options = HostOptions(
        http="127.0.0.1:0", grpc="127.0.0.1:0", no_sandbox=True, par_reference=par_reference
    )

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            where: Listening = await nursery.start(run_host, config, directory, options)
            http = httpx.Client(
                base_url=where.http_url,
                timeout=30,
                headers={"Authorization": f"Bearer {where.admin_token}"},
            )

            def board() -> dict[str, Any]:
                got: dict[str, Any] = http.get("/api/v1/leaderboard/par").json()
                return got

            await trio.to_thread.run_sync(submit_two, http)
            await async_wait_until(
                lambda: _done_matches(directory) >= 4, 180, what="the ladder to play"
            )
            # The API from a worker thread: this trio thread serves it.
            await trio.to_thread.run_sync(
                lambda: wait_until(
                    lambda: len(board()["rows"]) == 2, 60, what="the par of both versions"
                )
            )
            served = await trio.to_thread.run_sync(board)
            http.close()
            nursery.cancel_scope.cancel()
        assert served["reference"] == "rules"
        assert {r["ref"] for r in served["rows"]} == {"alpha@1", "beta@1"}
        assert all(r["matches"] >= 2 and r["deals"] >= 1 for r in served["rows"])

    trio.run(main)
    assert (directory / PRIVATE_DIR / PAR_NAME).exists()


def test_a_reset_season_counts_its_own_matches(tmp_path: Path) -> None:
    # As the ladder's leaderboard fits them: with ratings = "reset", the current season's only.
    raw = {"game": "whist", "options": WHIST, "ladder": {"par": "rules"}}
    cfg = check_competition(
        {**raw, "seasons": {"length_days": 1, "ratings": "reset"}}, "test", "cup"
    )
    with CompetitionStore(tmp_path / "cup", cfg) as store:
        clock = Clock(parse_time(store.current_season().starts))
        seasons = Seasons(store, cfg, Announcer(store, cfg), clock)
        seasons.plan()
        versions = validated_versions(store, ("a", "b"))
        ladder_of_copies(store, 3, (versions[0], versions[1]))
        keeper = ParKeeper(store, cfg, RULES, tmp_path / "cup")
        assert len(keeper.refresh().matches) == 6
        clock.now += timedelta(days=1, seconds=1)
        assert len(seasons.check()) == 1  # season 1 ended
        assert store.current_season().number == 2
        assert keeper.refresh().matches == ()  # a new season: nothing counted yet
        ladder_of_copies(store, 1, (versions[0], versions[1]))
        table = keeper.refresh()
    assert [m.match_id for m in table.matches] == ["u4-r0", "u4-r1"]

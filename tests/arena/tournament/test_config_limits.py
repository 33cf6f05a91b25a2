"""Configs that used to pass validation and then hang, exhaust memory, start a process per seat of
every match at once, or write outside ``out/tournaments`` (issue 21, item 9): each is refused
before anything starts, in one line naming the key.

The command-line tests run ``arena tournament`` in a subprocess with its address space capped at
2 GiB and a 20 s timeout, so a regression fails (MemoryError, or the timeout) instead of taking
the machine down.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.config import TournamentConfigError, load_config
from arena.tournament.schedule import Format, tables

#: The documented caps (docs/tournaments.md); the code's constants are checked against them.
CAP = 1_000_000
MAX_CONCURRENCY = 64
MEMORY_LIMIT = 2 << 30  # bytes of address space for a CLI run
TIMEOUT = 20  # seconds

TENNIS = 'game = "tennis"\nseed = 11\nduplicate = false\n'


def bots_toml(n: int, options: str = "sets_to_win = 1") -> str:
    """The tables that end a config: ``options`` (one-set tennis) and ``n`` bots named b00, b01,
    … running the random reference bot."""
    return f"[options]\n{options}\n" + "".join(
        f'[[bots]]\nname = "b{i:02d}"\ncommand = "arena bot random"\n' for i in range(n)
    )


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_guarded(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``cwd`` with a 2 GiB address space and a 20 s timeout; ``HOME`` and the
    arena's home are ``home``, so nothing is written outside the test's directory."""
    env = {**os.environ, "HOME": str(home), "ARENA_HOME": str(home / "arena"), "TMPDIR": str(home)}
    try:
        return subprocess.run(
            args,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args[2:]} still running after {TIMEOUT} s (a hang)")


def refused_by_cli(tmp_path: Path, text: str, *flags: str) -> str:
    """Write ``text`` to ``cfg/t.toml`` under ``tmp_path`` and run ``arena tournament t.toml
    FLAGS`` there; check it failed as a user's mistake should — exit status 2, one line on stderr,
    no traceback — having created nothing (no ``out``, nothing next to ``cfg``); return the
    line."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "t.toml").write_text(text)
    home = tmp_path / "home"
    home.mkdir()
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "t.toml", "--quiet", "--no-sandbox"]
    proc = run_guarded([*cmd, *flags], cfg, home)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg", "home"]
    assert [p.name for p in cfg.iterdir()] == ["t.toml"]  # nothing was started
    return lines[0]


# --- the four configs, through `arena tournament CONFIG` ---


@pytest.mark.slow  # a real arena process per case
def test_cli_refuses_two_billion_matches_per_pairing(tmp_path: Path) -> None:
    text = TENNIS + "matches_per_pairing = 2000000000\n" + bots_toml(2)
    line = refused_by_cli(tmp_path, text)
    assert line == (
        "arena: error: t.toml: matches_per_pairing: the schedule would have 2,000,000,000 "
        "matches (at most 1,000,000)"
    )


@pytest.mark.slow  # a real arena process per case
def test_cli_refuses_forty_bots_at_ten_player_spoil_five(tmp_path: Path) -> None:
    text = 'game = "spoil_five"\nplayers = 10\nseed = 1\n' + bots_toml(40, "rounds = 1")
    line = refused_by_cli(tmp_path, text)
    assert line.startswith("arena: error: t.toml: bots: 40 bots make 847,660,528 tables of 10")
    assert "the schedule would have 8,476,605,280 matches (at most 1,000,000)" in line


@pytest.mark.slow  # a real arena process per case
def test_cli_refuses_unbounded_concurrency(tmp_path: Path) -> None:
    text = TENNIS + "matches_per_pairing = 2\nconcurrency = 100000\n" + bots_toml(2)
    line = refused_by_cli(tmp_path, text)
    assert line.startswith("arena: error: t.toml: concurrency: must be at most 64 (")
    assert line.endswith("; got 100000")


@pytest.mark.slow  # a real arena process per case
def test_cli_refuses_a_name_that_moves_the_output(tmp_path: Path) -> None:
    # The default output is out/tournaments/<name> under the current directory (here cfg):
    # this name would have put it at tmp_path/escaped, beside cfg.
    text = 'name = "../../../escaped"\n' + TENNIS + "matches_per_pairing = 2\n" + bots_toml(2)
    line = refused_by_cli(tmp_path, text)
    assert line.startswith("arena: error: t.toml: name: must be 1-64 letters, digits,")
    assert line.endswith("got '../../../escaped'")
    assert not (tmp_path / "escaped").exists()


@pytest.mark.slow  # a real arena process per case
def test_cli_flags_are_capped_too(tmp_path: Path) -> None:
    flags = ["--game", "tennis", "--bot", "random", "--bot", "rules", "--matches", "2000000000"]
    cmd = [sys.executable, "-m", "arena.cli", "tournament", *flags, "-j", "8"]
    proc = run_guarded(cmd, tmp_path, tmp_path)
    assert (proc.returncode, proc.stderr.strip()) == (
        2,
        "arena: error: tournament: matches_per_pairing: the schedule would have "
        "2,000,000,000 matches (at most 1,000,000)",
    )
    assert list(tmp_path.iterdir()) == []


# --- the boundaries, in process (arithmetic only: nothing is built) ---


def flags_config(bots: int, **overrides: object) -> dict[str, object]:
    return {
        "game": "tennis",
        "bots": [{"name": f"b{i}", "command": "arena bot random"} for i in range(bots)],
        **overrides,
    }


@pytest.mark.parametrize(
    ("bots", "fmt", "players", "game", "at_cap", "over"),
    [
        (2, "round_robin", None, "tennis", 1_000_000, 1_000_002),  # one table
        (5, "round_robin", None, "tennis", 100_000, 100_002),  # C(5, 2) = 10 tables
        (5, "gauntlet", None, "tennis", 250_000, 250_002),  # C(4, 1) = 4 tables
        (3, "round_robin", 5, "spoil_five", 999_999, 1_000_002),  # one cyclic table, 3 rotations
        (12, "gauntlet", 4, "spoil_five", 6_060, 6_064),  # C(11, 3) = 165 tables, 4 rotations
    ],
)
def test_the_match_cap_is_exact(
    bots: int, fmt: str, players: int | None, game: str, at_cap: int, over: int
) -> None:
    extra: dict[str, object] = {"game": game, "format": fmt}
    if players is not None:
        extra["players"] = players
    config = load_config(None, flags_config(bots, matches_per_pairing=at_cap, **extra))
    assert config.matches_per_pairing == at_cap
    with pytest.raises(TournamentConfigError) as info:
        load_config(None, flags_config(bots, matches_per_pairing=over, **extra))
    message = str(info.value)
    assert message.startswith("tournament: matches_per_pairing: the schedule would have ")
    assert "(at most 1,000,000)" in message
    assert "\n" not in message


def test_the_match_cap_with_multiple_tables_names_the_product() -> None:
    with pytest.raises(
        TournamentConfigError,
        match=r"^tournament: matches_per_pairing: the schedule would have 1,000,020 matches "
        r"\(at most 1,000,000\): 10 tables × 100,002 each$",
    ):
        load_config(None, flags_config(5, matches_per_pairing=100_002))


def test_matches_per_pairing_alone_over_the_cap_is_refused_even_if_a_multiple() -> None:
    with pytest.raises(TournamentConfigError, match=r"^tournament: matches_per_pairing: .*"):
        load_config(None, flags_config(2, matches_per_pairing=2 * CAP))
    with pytest.raises(TournamentConfigError, match=r"2,000,000,000,000,000,000 matches"):
        load_config(None, flags_config(2, matches_per_pairing=2 * 10**18))


def test_too_many_tables_names_the_bots() -> None:
    overrides = flags_config(40, game="spoil_five", players=10)
    with pytest.raises(TournamentConfigError) as info:
        load_config(None, overrides)
    assert str(info.value).startswith("tournament: bots: 40 bots make 847,660,528 tables of 10 ")
    # The gauntlet draws C(39, 9) = 211,915,132 of them: still too many.
    with pytest.raises(TournamentConfigError, match="211,915,132 tables"):
        load_config(None, {**overrides, "format": "gauntlet"})


@pytest.mark.parametrize(("value", "ok"), [(1, True), (MAX_CONCURRENCY, True), (65, False)])
def test_the_concurrency_cap(value: int, ok: bool) -> None:
    overrides = flags_config(2, concurrency=value)
    if ok:
        assert load_config(None, overrides).concurrency == value
    else:
        with pytest.raises(
            TournamentConfigError, match=r"^tournament: concurrency: must be at most 64 \(.*got 65$"
        ):
            load_config(None, overrides)


@pytest.mark.parametrize(
    "name",
    ["../../x", "..", ".", "a/b", "/tmp/x", "a\\b", "-x", "_x", ".hidden", "a b", "x" * 65, "é"],
)
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(TournamentConfigError, match=r"^tournament: name: must be 1-64 ") as info:
        load_config(None, flags_config(2, name=name))
    assert repr(name) in str(info.value)


@pytest.mark.parametrize("name", ["x", "whist-2024.v2_final", "9", "x" * 64])
def test_good_names_give_the_output_under_out_tournaments(name: str) -> None:
    config = load_config(None, flags_config(2, name=name))
    assert config.name == name
    assert config.output == Path("out") / "tournaments" / name


def test_the_default_name_from_a_file_stem_is_checked_too(tmp_path: Path) -> None:
    # "...toml" has the stem "..": out/tournaments/.. would be out itself.
    path = tmp_path / "...toml"
    path.write_text(TENNIS + bots_toml(2))
    with pytest.raises(TournamentConfigError, match=r"name: .*got '\.\.' \(the file's stem"):
        load_config(path)
    assert load_config(path, {"name": "ok"}).output == Path("out/tournaments/ok")


def test_the_code_caps_are_the_documented_ones() -> None:
    from arena.tournament import config, schedule

    assert (schedule.MAX_MATCHES, config.MAX_CONCURRENCY) == (CAP, MAX_CONCURRENCY)
    docs = (Path(__file__).resolve().parents[3] / "docs" / "tournaments.md").read_text()
    assert "1,000,000" in docs and "64" in docs


# --- the schedule's own line of defence ---


def test_tables_refuses_to_materialise_more_than_the_cap() -> None:
    # C(1415, 2) = 1,000,405 pairs: over the cap (and small enough that the old code built it).
    bots = [f"b{i}" for i in range(1415)]
    with pytest.raises(ValueError, match=r"1,000,405 tables \(at most 1,000,000\)"):
        tables(bots, 2, Format.ROUND_ROBIN)
    assert len(tables(bots[:1414], 2, Format.ROUND_ROBIN)) == 998_991


def test_table_count_is_len_tables_and_the_gauntlet_order_is_unchanged() -> None:
    import itertools

    from arena.tournament.schedule import table_count

    for n in range(1, 9):
        bots = [f"b{i}" for i in range(n)]
        for k in range(2, 7):
            for fmt in Format:
                assert table_count(n, k, fmt) == len(tables(bots, k, fmt)), (n, k, fmt)
            if n >= k:
                # Resumes recompute the schedule: the gauntlet's tables keep their old order.
                old = [c for c in itertools.combinations(bots, k) if bots[0] in c]
                assert tables(bots, k, Format.GAUNTLET) == old


def test_build_schedule_refuses_before_building(tmp_path: Path) -> None:
    code = (
        "from arena.tournament.schedule import build_schedule\n"
        "from engine import get_game\n"
        "g = get_game('whist')\n"
        "try:\n"
        "    build_schedule(\n"
        "        g, g.configure(None), ['a', 'b'], 'round_robin', 2_000_000_000, True, 1\n"
        "    )\n"
        "except ValueError as err:\n"
        "    print(err)\n"
    )
    proc = run_guarded([sys.executable, "-c", code], tmp_path, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (
        proc.stdout.strip() == "the schedule would have 2,000,000,000 matches (at most 1,000,000)"
    )

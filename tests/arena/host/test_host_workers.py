"""A competition's ``[workers]`` table: checked key by key, left out of the identity, and which
seats may leave the host for a cluster's workers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.bots.command import BotProgram
from arena.host.config import CompetitionConfig, CompetitionConfigError, load_competition
from arena.host.play import Entrant
from arena.host.remote import on_cluster, run_key
from tests.arena.run_arena import arena_error

BASE = 'game = "whist"\n'


def load_competition_text(tmp_path: Path, text: str) -> CompetitionConfig:
    path = tmp_path / "cup.toml"
    path.write_text(BASE + text)
    return load_competition(path)


def test_workers_default_to_none_and_stay_out_of_the_identity(tmp_path: Path) -> None:
    plain = load_competition_text(tmp_path, "")
    assert plain.workers.dask is None
    clustered = load_competition_text(tmp_path, '[workers]\ndask = "tcp://127.0.0.1:8786"\n')
    assert clustered.workers.dask == "tcp://127.0.0.1:8786"
    assert clustered.identity() == plain.identity()
    tls = load_competition_text(tmp_path, '[workers]\ndask = "tls://sched.example.org:8786"\n')
    assert tls.workers.dask == "tls://sched.example.org:8786"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("workers = 3\n", "workers: must be a table ([workers])"),
        ('[workers]\nscheduler = "tcp://h:1"\n', "workers.scheduler: unknown key (known: dask)"),
        ("[workers]\ndask = 8786\n", "workers.dask: must be a Dask scheduler's address"),
        ('[workers]\ndask = "127.0.0.1"\n', "workers.dask: must be a Dask scheduler's address"),
        ('[workers]\ndask = "http://h:1"\n', "workers.dask: must be a Dask scheduler's address"),
    ],
)
def test_a_malformed_workers_table_is_one_line(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(CompetitionConfigError) as err:
        load_competition_text(tmp_path, text)
    message = str(err.value)
    assert "\n" not in message
    assert re.search(re.escape(expected), message), message
    assert message.startswith(str(tmp_path / "cup.toml"))


def test_which_seats_go_to_the_cluster() -> None:
    snapshot = Entrant("a@1", BotProgram("python3 bot.py", workdir="/x/snap"), snapshot="ab" * 32)
    reference = Entrant("random", BotProgram("arena bot random"))
    live = Entrant("l@1", None, "token")
    image = Entrant("i@1", BotProgram(image="sha256:" + "cd" * 32))
    unstored = Entrant("u", BotProgram("python3 bot.py", workdir="/somewhere"))
    assert on_cluster(snapshot) and on_cluster(reference)
    assert not any(on_cluster(e) for e in (live, image, unstored))


def test_the_run_key_is_stable_and_hides_the_secret() -> None:
    key, seed = run_key(12345)
    assert run_key(12345) == (key, seed)
    assert run_key(12346)[0] != key
    assert key.startswith("c-") and "12345" not in key


def test_a_refusal_at_the_hosts_start_is_one_line(tmp_path: Path) -> None:
    # Raised inside the host's nursery: it reaches the user as itself, not as a trio group.
    (tmp_path / "c.toml").write_text('name = "x"\ngame = "whist"\n')
    line = arena_error(
        "host", "c.toml", "--dir", "d", "--http", "0.0.0.0:0", "--no-sandbox", cwd=tmp_path
    )
    assert line.startswith("arena: error: --http 0.0.0.0:0: without --tls-cert/--tls-key"), line

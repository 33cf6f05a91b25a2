"""The Go gRPC bot of docs/other-languages.md, on Debian's grpc-go 1.33: built by the page's own
commands from the bot the page quotes, it plays every game over the real gRPC server with no
fault, over TCP and a Unix socket. Debian's packages for it take about 600 MB, so these tests run
in `make test-languages` (which installs them as root), not in `make test`; without them they
fail saying how to install them."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from arena.server import open_arena_server
from engine import OptionValue, get_game
from tests.languages.go_page import ROOT, blocks, run_block, shell_block
from tests.reference_bots.playing import PY_RANDOM, assert_clean, play
from tests.reference_bots.test_cpp_bot import CASES, SHORT_WHIST

pytestmark = [pytest.mark.languages, pytest.mark.slow]

#: What the build needs, from Debian's packages (the Makefile's GO_GRPC_DEBS).
TOOLS = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
GOCODE = Path("/usr/share/gocode/src")
LIBRARIES = ("google.golang.org/grpc", "github.com/golang/protobuf", "google.golang.org/protobuf")


@dataclass
class Built:
    """The directory the page's commands ran in, and how they went."""

    where: Path
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The page's gRPC commands run in a directory holding a copy of proto/ and of the bot the
    page quotes: they build ``go-bot`` and play one match with it."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    missing += [lib for lib in LIBRARIES if not (GOCODE / lib).is_dir()]
    if missing:
        pytest.fail(
            f"the Go gRPC bot cannot be built: missing {', '.join(missing)}; run "
            "`make test-languages` as root (it installs Debian's packages with apt-get)"
        )
    where = tmp_path_factory.mktemp("go-grpc")
    shutil.copytree(ROOT / "proto", where / "proto")
    (quoted,) = blocks("go")
    (where / "bot.go").write_text(quoted)
    cache = ROOT / "reference_bots" / "go" / "build" / "go-cache"
    return Built(where, run_block(shell_block("protoc"), where, cache))


@pytest.fixture(scope="module")
def go_bot(built: Built) -> list[str]:
    """The command that starts the bot the page built."""
    assert built.done.returncode == 0, built.done.stdout[-2000:] + built.done.stderr[-3000:]
    return [str(built.where / "go-bot")]


def test_the_pages_commands_build_the_bot_and_play(go_bot: list[str], built: Built) -> None:
    out = built.done.stdout
    assert out.count("go-random 1") == 2, out
    assert "[normal]" in out and "(0 by the referee)" in out, out


@pytest.mark.parametrize(("game", "players", "options"), CASES)
def test_the_go_grpc_bot_plays_every_game(
    game: str,
    players: int | None,
    options: dict[str, OptionValue],
    go_bot: list[str],
    tmp_path: Path,
) -> None:
    # Go in every seat but, at a table of more than two, the last: a Python SDK bot.
    g = get_game(game)
    seats = g.num_seats(g.configure(players, options))
    commands = [go_bot] * seats
    if seats > 2:
        commands[-1] = PY_RANDOM
    go_seats = [s for s in range(seats) if commands[s] is go_bot]
    run = play(game, commands, tmp_path, seed=7, options=options, players=players)
    assert assert_clean(run, go_seats, tmp_path, "go-") > 0
    assert {b.returncode for b in run.bots} == {0}, [b.stderr for b in run.bots]


def test_the_go_grpc_bot_over_a_unix_socket(go_bot: list[str], tmp_path: Path) -> None:
    # grpc.Dial of grpc-go 1.33 takes unix:PATH, the address a sandboxed bot is given.
    run = play("whist", [go_bot] * 4, tmp_path, seed=3, options=SHORT_WHIST, unix=tmp_path / "s")
    assert_clean(run, range(4), tmp_path, "go-")


def test_a_rejected_hello_exits_3_with_one_line(go_bot: list[str]) -> None:
    async def main() -> subprocess.CompletedProcess[str]:
        async with open_arena_server("127.0.0.1:0") as server:
            env = {**os.environ, "ARENA_ADDRESS": server.address, "ARENA_TOKEN": "not-a-token"}
            return await trio.to_thread.run_sync(
                lambda: subprocess.run(
                    go_bot, env=env, capture_output=True, text=True, timeout=30, check=False
                )
            )

    done = trio.run(main)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == ["rejected: unknown token"]

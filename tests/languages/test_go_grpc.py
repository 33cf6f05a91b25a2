"""The Go gRPC bot of docs/other-languages.md, on Debian's grpc-go 1.33: built by the page's own
commands from the bot the page quotes, it plays every game over the real gRPC server with no
fault, over TCP and a Unix socket. Debian's packages for it take about 600 MB, so these tests run
in `make test-languages` (which installs them as root), not in `make test`; without them they
fail saying how to install them."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine import OptionValue
from tests.languages.go_page import ROOT, blocks, run_block, shell_block
from tests.reference_bots.playing import (
    CASES,
    SHORT_WHIST,
    assert_clean,
    assert_cut_mid_match_fails,
    assert_gone_between_matches,
    play,
    play_beside_python,
    run_with_a_bad_token,
)

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
    play_beside_python(game, players, options, go_bot, tmp_path, "go-")


def test_the_go_grpc_bot_over_a_unix_socket(go_bot: list[str], tmp_path: Path) -> None:
    # grpc.Dial of grpc-go 1.33 takes unix:PATH, the address a sandboxed bot is given.
    run = play("whist", [go_bot] * 4, tmp_path, seed=3, options=SHORT_WHIST, unix=tmp_path / "s")
    assert_clean(run, range(4), tmp_path, "go-")


def test_a_rejected_hello_exits_3_with_one_line(go_bot: list[str]) -> None:
    done = run_with_a_bad_token(go_bot)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == ["rejected: unknown token"]


def test_the_go_grpc_bot_cut_between_matches_exits_0(go_bot: list[str], tmp_path: Path) -> None:
    assert_gone_between_matches(go_bot, tmp_path)


def test_the_go_grpc_bot_cut_mid_match_exits_1(go_bot: list[str], tmp_path: Path) -> None:
    assert_cut_mid_match_fails(go_bot, tmp_path)

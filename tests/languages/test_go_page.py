"""docs/other-languages.md's Go section, the part `make test` checks: the stdio bot built and
played by the page's own commands, the gRPC bot the page quotes is reference_bots/go/bot.go, and
the packages the page installs are the ones `make test-languages` installs (its tests,
tests/languages/test_go_grpc.py, build and play that bot from the page)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.languages.go_page import ROOT, blocks, go_section, run_block, shell_block


@pytest.mark.slow
def test_the_stdio_commands_build_the_bot_and_play(tmp_path: Path, go_stdio_bot: Path) -> None:
    # go_stdio_bot: a missing Go fails here saying how to install it; its cache makes this quick.
    shutil.copy(ROOT / "reference_bots/stdio/random_bot.go", tmp_path)
    done = run_block(shell_block("random_bot.go"), tmp_path, go_stdio_bot.parent / "go-cache")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "random_bot_go").is_file()
    assert done.stdout.count("stdio-random-go") == 2, done.stdout
    assert "(0 by the referee)" in done.stdout, done.stdout


def test_the_page_quotes_the_grpc_bot_whole() -> None:
    (quoted,) = blocks("go")
    assert quoted == (ROOT / "reference_bots/go/bot.go").read_text()


def test_the_page_installs_what_make_test_languages_installs() -> None:
    (install,) = blocks("console")
    page = install.replace("\\\n", " ").split()
    assert page[:2] == ["apt-get", "install"]
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    (debs,) = re.findall(r"^GO_GRPC_DEBS := (.*)$", makefile, re.M)
    assert sorted(page[2:]) == sorted(debs.split())
    # The protobuf 1.3 package panics on the first Send: the page names it only to warn.
    assert "golang-github-golang-protobuf-1-5-dev" in page
    assert "`1-3` package" in go_section()

"""docs/llm.md's harness sections as written: the config loads verbatim (it is
examples/llm/whist.toml), the commands run as printed and print what the page shows (the
prompt, the estimate), and the note it explains has the harness's form. After a change of the
text views' or the prompt's wording, paste the commands' new output into the page."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.tournament import cost_lines
from arena.records.telemetry import telemetry_lines
from arena.tournament.config import load_config
from arena.tournament.schedule import Format
from reference_bots.llm.prompt import HARNESS
from tests.arena.llm.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "llm.md"
EXAMPLE = ROOT / "examples" / "llm" / "whist.toml"
ARENA = str(Path(sys.executable).parent / "arena")
STALE = "docs/llm.md is stale: python -m tests.arena.llm.test_llm_page rewrites its outputs"


def harness_part() -> str:
    """The page from its harness sections on (other sections belong to other parts)."""
    text = PAGE.read_text()
    return text[text.index("## The harness bot") :]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", harness_part(), re.S)


def argv(command: str) -> list[str]:
    words = shlex.split(command.replace("\\\n", " "))
    assert words[0] == "arena"
    return [ARENA, *words[1:]]


def test_the_config_is_the_example_and_loads(tmp_path: Path) -> None:
    (config,) = [b for b in blocks("toml") if b.startswith("# A language model against")]
    assert config == EXAMPLE.read_text()
    path = tmp_path / "whist.toml"
    path.write_text(config)
    loaded = load_config(path)
    assert loaded.rules.config.game_id == "whist" and loaded.duplicate
    assert loaded.format is Format.GAUNTLET and loaded.bots[0].name == "model"
    assert loaded.bots[0].program.command.startswith("arena bot llm --endpoint ")
    assert [b.name for b in loaded.bots[1:]] == ["random", "rules"]


def shown_prompt() -> str:
    """What the page's ``--show-prompt`` command prints."""
    shown = next(b for b in blocks("sh") if "--show-prompt" in b)
    return subprocess.run(
        argv(shown.strip()), capture_output=True, text=True, timeout=60, check=True
    ).stdout


def estimated() -> str:
    """What ``arena tournament`` prints as the example's estimate."""
    return "\n".join(cost_lines(load_config(EXAMPLE))) + "\n"


def test_the_prompt_is_what_the_command_prints() -> None:
    printed = next(b for b in blocks("text") if b.startswith("harness "))
    assert shown_prompt() == printed, STALE


def test_the_estimate_is_what_the_tournament_prints() -> None:
    printed = next(b for b in blocks("text") if b.startswith("cost estimate"))
    assert estimated() == printed, STALE


def test_the_note_has_the_harness_form() -> None:
    note = next(b for b in blocks("text") if b.startswith("llm ")).strip()
    form = (
        r"llm (\S+) \d+ms tries=\d+ tok=~?\d+\+\d+ parse=(exact|soft|none)( faults=\S+)? \| "
        r"match d=\d+ tries=\d+ tok=~?\d+\+\d+ fallbacks=\d+ faults=\d+ \| "
        r"t\.tok_in=\d+ t\.tok_out=\d+ t\.ms=\d+ t\.retries=\d+ t\.fallbacks=[01] t\.faults=\d+"
        r"( t\.tok_est=1)?"
    )
    match = re.fullmatch(form, note)
    assert match is not None and match[1] == HARNESS, STALE


def test_the_telemetry_lines_have_the_arena_s_form() -> None:
    shown = next(b for b in blocks("text") if b.startswith("telemetry ")).splitlines()
    entries = [
        {"type": "decision", "seat": 0, "note": "t.tok_in=1 t.tok_out=1 t.ms=1 t.retries=0"},
    ]
    head, line = telemetry_lines(entries, ["N"])
    assert shown[0] == head and len(shown) == 2
    form = r"  N \(seat 0\): decisions \d+, tok_in [\d,]+, tok_out [\d,]+, ms [\d,]+, "
    assert re.fullmatch(form + r"retries \d+, fallbacks \d+, faults \d+", shown[1])
    assert line.startswith("  N (seat 0): decisions 1, tok_in 1, tok_out 1, ms 1, retries 0")


@pytest.mark.slow
@pytest.mark.agents
def test_the_match_command_runs_as_written(tmp_path: Path) -> None:
    command = next(b for b in blocks("sh") if b.startswith("export OPENAI_API_KEY"))
    match = command.split("\n", 1)[1]
    with FakeOpenAI() as fake:
        words = argv(match.replace("https://api.openai.com/v1", fake.url))
        proc = subprocess.run(
            [*words, "--out", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OPENAI_API_KEY": "sk-page"},
            check=False,
        )
        assert fake.requests
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[normal]" in proc.stdout


def rewrite() -> None:
    """Put the commands' output and the harness hash into the page, after a change of the text
    views' or the prompt's wording."""
    text = PAGE.read_text()
    fenced = "```text\n{}```"
    text = re.sub(
        r"```text\nharness .*?```", lambda _: fenced.format(shown_prompt()), text, flags=re.S
    )
    text = re.sub(
        r"```text\ncost estimate.*?```", lambda _: fenced.format(estimated()), text, flags=re.S
    )
    text = re.sub(r"(```text\nllm )\S+", lambda m: m[1] + HARNESS, text)
    PAGE.write_text(text)


if __name__ == "__main__":
    rewrite()

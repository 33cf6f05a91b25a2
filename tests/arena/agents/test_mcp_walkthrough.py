"""docs/llm.md's MCP walk-through run as written: its shell block starts ``arena serve`` and three
rules bots (port 50051, as the page says), the framework's JSON names the command, and the
page's Python loop, with the JSON's address and token, plays the fourth seat to the end; the
record verifies (step 4)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.agents]

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "llm.md"
BIN = Path(sys.executable).parent


def walkthrough() -> str:
    text = PAGE.read_text()
    start = text.index("### Walk-through")
    return text[start : text.index("\n## ", start)]


def blocks(language: str) -> list[str]:
    return [
        textwrap.dedent(b) for b in re.findall(rf"```{language}\n(.*?)```", walkthrough(), re.S)
    ]


def test_the_walkthrough_plays_a_match_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (shell,) = blocks("sh")
    (framework,) = [json.loads(b) for b in blocks("json")]
    (loop,) = blocks("python")
    server = framework["mcpServers"]["card-arena"]
    assert server["command"] == "arena"
    args = server["args"]
    assert args[:2] == ["mcp", "--server"] and args[3] == "--token", args
    # `arena` on the PATH, as for a user who installed it (the page's loop starts it by name).
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    env = dict(os.environ)
    # The block's own `&`s, then wait: the server and the bots are this shell's children.
    started = subprocess.Popen(
        ["bash", "-c", shell + "\nwait\n"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert started.stdout is not None
        # Log lines (stderr) come first; the server says where it serves once it listens.
        seen = [started.stdout.readline() for _ in range(1)]
        while not seen[-1].startswith("arena: serving") and seen[-1] and len(seen) < 100:
            seen.append(started.stdout.readline())
        assert seen[-1].startswith(f"arena: serving whist on {args[2]}"), seen
        # The page's loop, at the top level of a coroutine, with the JSON's address and token.
        scope: dict[str, Any] = {"ADDR": args[2], "T": args[4]}
        exec(
            "async def main():\n" + textwrap.indent(loop, "    "),
            scope,
        )

        async def bounded() -> None:
            with anyio.fail_after(300):
                await scope["main"]()

        anyio.run(bounded)
        records = wait_until(
            lambda: sorted((tmp_path / "records").glob("*.jsonl.gz")) or None,
            60,
            what="the match's record",
        )
    finally:
        os.killpg(started.pid, signal.SIGINT)
        try:
            started.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(started.pid, signal.SIGKILL)
            started.wait()
    (record,) = records
    verify = subprocess.run(
        ["arena", "replay", "verify", f"records/{record.name}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    header = json.loads(subprocess.check_output(["zcat", str(record)], text=True).splitlines()[0])
    names = sorted(s["bot_name"] for s in header["seats"])
    assert names == ["mcp-agent", "rules", "rules", "rules"], names

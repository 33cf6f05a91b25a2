"""docs/protocol.md's stdio section: its transcript is the protocol's JSON mapping, line for line as
the arena writes it, and its example command plays."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cardarena import rpc
from google.protobuf import json_format

from arena.server.stdio import decode_line, encode_line

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "protocol.md"


def section() -> str:
    text = PAGE.read_text()
    start = text.index("## stdio: a bot without gRPC")
    return text[start : text.index("\n## ", start + 1)]


def transcript() -> list[str]:
    (block,) = re.findall(r"```text\n(.*?)```", section(), re.S)
    return block.splitlines()


def test_the_transcript_is_the_protocols_json_mapping() -> None:
    lines = transcript()
    assert lines and all(line[:2] in ("> ", "< ") for line in lines), lines
    kinds = []
    for line in lines:
        body = line[2:]
        if line.startswith("> "):
            bot = json_format.Parse(body, rpc.BotMessage())  # unknown fields would raise
            kinds.append(str(bot.WhichOneof("kind")))
            assert type(decode_line(body.encode())).__name__ != "Garbage"
        else:
            server = json_format.Parse(body, rpc.ServerMessage())
            kinds.append(str(server.WhichOneof("kind")))
            # What the arena writes today (a map's keys may come in another order).
            assert json.loads(encode_line(server.SerializeToString())) == json.loads(body)
    assert kinds[:5] == ["hello", "welcome", "match_start", "decision", "action"]
    assert kinds[-1] == "match_end"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_example_command_plays(tmp_path: Path) -> None:
    (block,) = re.findall(r"```sh\n(.*?)```", section(), re.S)
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[:2] == ["arena", "match"]
    argv[0] = str(Path(sys.executable).parent / "arena")
    argv += ["--no-sandbox", "--seed", "1", "--out", str(tmp_path / "out")]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "stdio-random-py" in done.stdout and "stdio-random-js" in done.stdout

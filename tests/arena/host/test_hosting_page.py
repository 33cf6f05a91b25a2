"""docs/hosting.md's blocks as written: its competition config, its cluster table and a bot's
manifest load verbatim, and its certificate command runs as printed (the host it makes reaches
its own API with it: tests/arena/host/test_host_certificates.py)."""

from __future__ import annotations

import re
import shlex
import ssl
import subprocess
from pathlib import Path

from arena.host.config import load_competition
from arena.policy import FaultPolicy
from arena.snapshots.archive import MANIFEST_NAME, read_manifest

PAGE = Path(__file__).resolve().parents[3] / "docs" / "hosting.md"


def blocks(language: str) -> list[str]:
    """The page's fenced blocks of ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)


def test_the_competition_config_loads_as_written(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    path = tmp_path / "cup.toml"
    path.write_text(cup)
    config = load_competition(path)
    # Every key the page sets took effect.
    rules = config.rules
    assert (config.name, rules.game_id, rules.config.players) == ("whist-cup", "whist", 4)
    assert dict(rules.config.options)["points_to_win"] == 5
    assert config.rules.fault_policy is FaultPolicy.LENIENT
    assert (config.rules.time_control.move_ms, config.rules.time_control.bank_ms) == (1000, 10000)
    assert config.ladder.concurrency == 2 and config.authors.invite_code == "a long secret"
    # With the cluster's table beside it, as the page says to add it.
    (workers,) = [b for b in blocks("toml") if b.startswith("[workers]")]
    path.write_text(cup + workers)
    assert load_competition(path).workers.dask == "tcp://scheduler.example.org:8786"


def test_a_bot_s_manifest_reads_as_written(tmp_path: Path) -> None:
    (manifest,) = [b for b in blocks("toml") if b.startswith("command = ")]
    (tmp_path / MANIFEST_NAME).write_text(manifest)
    read = read_manifest(tmp_path)
    assert read.command == "python3 bot.py"


def test_the_certificate_command_runs_as_printed(tmp_path: Path) -> None:
    (command,) = [b for b in blocks("sh") if b.startswith("openssl req")]
    argv = shlex.split(command.replace("\\\n", " "))
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    context = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    assert (tmp_path / "key.pem").stat().st_size > 0

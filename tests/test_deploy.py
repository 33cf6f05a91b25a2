"""deploy/: the systemd unit parses (``systemd-analyze verify`` where systemd is installed, its
keys checked everywhere) and starts ``arena host`` with flags it has; compose.yaml's services run
real ``arena`` (and ``dask``) commands with flags that exist, and its competition config loads
with the scheduler the workers join. ``make test-docker`` brings the stack up for real."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.host.config import load_competition

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
UNIT = DEPLOY / "cardarena-host.service"
COMPOSE = DEPLOY / "compose.yaml"
#: Where the unit expects the arena to be installed (its comment says how).
INSTALLED = "/opt/cardarena/bin/arena"


def arena() -> str:
    return str(Path(sys.executable).parent / "arena")


def unit_sections(text: str) -> dict[str, dict[str, list[str]]]:
    """The unit's sections, each key's values in order (a key may repeat); continuation lines
    (ending in ``\\``) joined, comments left out."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None and "=" in line, f"not a unit line: {line!r}"
        key, value = (part.strip() for part in line.split("=", 1))
        current.setdefault(key, []).append(value)
    return sections


def flags_exist(argv: list[str], help_argv: list[str]) -> None:
    """Every ``--flag`` of ``argv`` is in the help of ``help_argv``."""
    shown = subprocess.run(help_argv, capture_output=True, text=True, check=True).stdout
    for word in argv:
        flag = word.split("=", 1)[0]
        if flag.startswith("--"):
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", shown), (flag, help_argv)


def test_the_systemd_unit_has_what_the_host_needs() -> None:
    unit = unit_sections(UNIT.read_text())
    service = unit["Service"]
    one = {key: values[-1] for key, values in service.items()}
    assert one["Restart"] == "on-failure" and one["Type"] == "simple"
    assert one["User"] not in ("root", "0") and one["Group"] not in ("root", "0")
    assert one["StateDirectory"] == "cardarena" and one["NoNewPrivileges"] == "yes"
    assert one["ProtectSystem"] == "strict" and one["KillSignal"] == "SIGTERM"
    # What would break the bot sandbox (bubblewrap) is left out.
    for breaks in ("RestrictNamespaces", "PrivateUsers", "SystemCallFilter", "ProtectHostname"):
        assert breaks not in service, breaks
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]
    argv = shlex.split(one["ExecStart"])
    assert argv[:2] == [INSTALLED, "host"]
    # Its directory is the state directory's: the only place ProtectSystem=strict lets it write.
    assert argv[argv.index("--dir") + 1].startswith("/var/lib/cardarena/")
    flags_exist(argv, [arena(), "host", "--help"])


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    # The arena where this test runs stands for the one the unit expects in /opt.
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace(INSTALLED, arena()))
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def _substituted(text: str) -> str:
    """Compose's ``${VAR:-default}`` as its default (what the stack runs when nothing is set)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", text)


def _services() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    loaded = yaml.safe_load(_substituted(COMPOSE.read_text()))
    services: dict[str, Any] = loaded["services"]
    return services


def test_compose_runs_a_host_a_scheduler_and_two_workers() -> None:
    services = _services()
    assert sorted(services) == ["host", "scheduler", "worker1", "worker2"]
    # One network for all, the machine's (the test engine has no bridge; the comment says why).
    assert {s["network_mode"] for s in services.values()} == {"host"}
    assert len({s["image"] for s in services.values()}) == 1
    config = load_competition(DEPLOY / "competition.toml")
    assert config.workers.dask is not None
    scheduler = services["scheduler"]["command"]
    port = scheduler[scheduler.index("--port") + 1]
    assert config.workers.dask.endswith(f":{port}")
    for name in ("worker1", "worker2"):
        command = services[name]["command"]
        assert command[command.index("--scheduler") + 1] == config.workers.dask
        assert "--no-sandbox" in command  # the image has no bubblewrap
    host = services["host"]
    mounted = {v.split(":")[1]: v.split(":")[0] for v in host["volumes"]}
    assert mounted["/etc/cardarena/cup.toml"] == "./competition.toml"
    assert host["command"][:3] == ["arena", "host", "/etc/cardarena/cup.toml"]


def test_compose_commands_are_real_commands_with_real_flags() -> None:
    for name, service in _services().items():
        command = service["command"]
        if command[0] == "arena":
            flags_exist(command, [arena(), command[1], "--help"])
        else:
            assert command[:2] == ["dask", "scheduler"], name
            dask = Path(sys.executable).parent / "dask"
            if not dask.exists():
                pytest.skip("no dask command here (pip install 'card-arena[cluster]')")
            flags_exist(command, [str(dask), "scheduler", "--help"])

"""Bots as Docker images, run through the Docker SDK with every door shut.

Each seat gets its own container: no network at all (``--network none``), a read-only root, every
capability dropped, no new privileges, uid ``nobody``, memory, pid and open-file limits, a small
private /tmp, and the arena's socket directory mounted read-only at ``/arena``. The bot finds the
arena through ``ARENA_ADDRESS=unix:/arena/arena.sock`` (plus ``ARENA_TOKEN`` and ``ARENA_SEED``);
nothing else of the arena's environment goes in. The container's output is saved to the seat's
log file (capped like a process bot's, arena/bots/logs.py; the engine itself keeps only about
that much of it) and the container is removed when the match ends (or when the bot exits).

An image is never pulled: it must already be on the engine (``docker pull`` or ``docker build``
it first), so a match never waits on a registry. With no engine reachable the arena says so in
one line (:class:`DockerUnavailable`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shlex
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.bots.logs import LOG_CAP, CappedLog, last_line
from arena.bots.sandbox import NOBODY, Limits
from arena.errors import ArenaError

#: Where the arena's socket directory appears inside a bot's container.
CONTAINER_SOCKET_DIR = "/arena"
#: ``--bot image:IMAGE [COMMAND]`` in ``arena match``.
IMAGE_PREFIX = "image:"
#: Label set on every bot container (``docker ps --filter label=card-arena.bot``).
LABEL = "card-arena.bot"
#: Label naming the run whose bot it is (its directory's name): the run's reaper removes the
#: containers left when the arena was killed (arena/bots/reaper.py).
RUN_LABEL = "card-arena.run"
#: Seconds a container gets between SIGTERM and SIGKILL.
STOP_GRACE_S = 1


class DockerUnavailable(ArenaError):
    """No Docker engine can be reached; the message says where the arena looked."""


class BotStartFailed(ArenaError):
    """A bot's container could not be created or started (a missing image, a bad command)."""


def _sdk() -> Any:
    """The Docker SDK (``docker``), untyped: it ships no type hints, and a plain import would let
    mypy take this repository's docker/ scripts directory for it."""
    return importlib.import_module("docker")


def _engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def docker_client() -> Any:
    """A connected Docker client (``docker.from_env``: honours DOCKER_HOST); raises
    :class:`DockerUnavailable` in one line when no engine answers."""
    docker = _sdk()
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except docker.errors.DockerException as err:
        raise DockerUnavailable(
            f"no Docker engine is reachable at {_engine_address()} ({_first_line(err)}); start "
            "Docker or set DOCKER_HOST to run bots from images"
        ) from None
    return client


def check_available() -> None:
    """Raise :class:`DockerUnavailable` unless a Docker engine answers."""
    docker_client().close()


def parse_image_bot(text: str) -> tuple[str, str | None] | None:
    """``image:IMAGE [COMMAND]`` → ``(IMAGE, COMMAND or None)``; ``None`` for a shell command."""
    if not text.startswith(IMAGE_PREFIX):
        return None
    image, _, command = text[len(IMAGE_PREFIX) :].strip().partition(" ")
    if not image:
        raise ArenaError(f"{text!r}: give an image after {IMAGE_PREFIX!r}")
    return image, (command.strip() or None)


def container_environment(env: Mapping[str, str], socket_dir: Path) -> dict[str, str]:
    """The bot's environment inside the container: the arena's address as seen from inside,
    its token and seed; nothing else of the host's."""
    address = env.get("ARENA_ADDRESS", "")
    socket_name = "arena.sock"
    if address.startswith("unix:"):
        path = Path(address[len("unix:") :])
        if path.parent.resolve() == socket_dir.resolve():
            socket_name = path.name
    return {
        "ARENA_ADDRESS": f"unix:{CONTAINER_SOCKET_DIR}/{socket_name}",
        "ARENA_TOKEN": env.get("ARENA_TOKEN", ""),
        "ARENA_SEED": env.get("ARENA_SEED", "0"),
        "PYTHONUNBUFFERED": "1",
    }


def container_options(limits: Limits, socket_dir: Path) -> dict[str, Any]:
    """The locked-down ``containers.create`` keyword arguments (see the module docstring)."""
    docker = _sdk()
    return {
        "network_mode": "none",
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "user": f"{NOBODY}:{NOBODY}",
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.processes,
        "ulimits": [
            docker.types.Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            docker.types.Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds),
            docker.types.Ulimit(name="core", soft=0, hard=0),
        ],
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
        "volumes": {str(socket_dir.resolve()): {"bind": CONTAINER_SOCKET_DIR, "mode": "ro"}},
        "working_dir": "/tmp",
        "labels": {LABEL: "1", RUN_LABEL: socket_dir.resolve().parent.name},
        # The engine's own copy of the output, bounded (its default keeps it all, on the
        # engine's disk): two files of half the log cap each, so it holds the newest output.
        "log_config": docker.types.LogConfig(
            type="json-file",
            config={"max-size": f"{max(1, LOG_CAP // 2048)}k", "max-file": "2"},
        ),
    }


@dataclass(eq=False)
class ContainerBot:
    """A bot running in a container (the same interface as a bot process)."""

    #: The image.
    image: str
    #: Where the container's output is saved.
    log_path: Path
    _client: Any
    _container: Any
    #: Exit status once it has exited.
    returncode: int | None = None
    #: Whether the engine killed it for exceeding its memory limit.
    oom_killed: bool = False
    _stopped: bool = field(default=False)

    async def wait(self) -> int:
        """Wait for the container to exit; its status (its output is saved first)."""
        reply = await trio.to_thread.run_sync(self._container.wait, abandon_on_cancel=True)
        await trio.to_thread.run_sync(self._collect)
        self.returncode = int(reply.get("StatusCode", -1))
        return self.returncode

    def _collect(self) -> None:
        """Save the container's output and exit state (thread)."""
        with contextlib.suppress(Exception):
            # Streamed into a capped log: the whole output at once could be large.
            log = CappedLog(self.log_path)
            try:
                for chunk in self._container.logs(stdout=True, stderr=True, stream=True):
                    log.write(chunk)
            finally:
                log.close()
        with contextlib.suppress(Exception):
            self._container.reload()
            state = self._container.attrs.get("State", {})
            self.oom_killed = bool(state.get("OOMKilled"))

    def last_output(self) -> str:
        """The last non-empty line the bot wrote."""
        return last_line(self.log_path)

    def exit_detail(self, with_output: bool = False) -> str:
        """Why the container is gone, for the fault record; ``with_output`` adds the bot's last
        line of output (keep that out of public fault details: it may name private cards)."""
        if self.returncode is None:
            return "still running"
        if self.oom_killed:
            how = "was killed for exceeding its memory limit"
        elif self.returncode > 128:
            how = f"was killed by signal {self.returncode - 128}"
        else:
            how = f"exited with status {self.returncode}"
        tail = self.last_output() if with_output else ""
        return f"bot container ({self.image}) {how}" + (f": {tail}" if tail else "")

    async def stop(self) -> None:
        """Stop the container (SIGTERM, then SIGKILL), save its output and remove it."""
        if self._stopped:
            return
        self._stopped = True
        await trio.to_thread.run_sync(self._stop_sync)

    def _stop_sync(self) -> None:
        with contextlib.suppress(Exception):
            self._container.stop(timeout=STOP_GRACE_S)
        self._collect()
        with contextlib.suppress(Exception):
            self._container.remove(force=True, v=True)
        with contextlib.suppress(Exception):
            self._client.close()


def _start_sync(
    image: str,
    command: str | None,
    env: Mapping[str, str],
    socket_dir: Path,
    limits: Limits,
) -> tuple[Any, Any]:
    docker = _sdk()
    client = docker_client()
    try:
        container = client.containers.create(
            image,
            command=shlex.split(command) if command else None,
            environment=container_environment(env, socket_dir),
            name=f"cardarena-bot-{uuid.uuid4().hex[:12]}",
            detach=True,
            **container_options(limits, socket_dir),
        )
    except docker.errors.ImageNotFound:
        client.close()
        raise BotStartFailed(
            f"image {image!r} is not on the Docker engine (pull or build it first)"
        ) from None
    except docker.errors.DockerException as err:
        client.close()
        raise BotStartFailed(
            f"cannot create a container from {image!r}: {_first_line(err)}"
        ) from None
    try:
        container.start()
    except docker.errors.DockerException as err:
        with contextlib.suppress(Exception):
            container.remove(force=True)
        client.close()
        raise BotStartFailed(f"cannot start a container of {image!r}: {_first_line(err)}") from None
    return client, container


async def launch_container(
    image: str,
    env: Mapping[str, str],
    log_path: Path,
    socket_dir: Path,
    limits: Limits,
    command: str | None = None,
) -> ContainerBot:
    """Start a bot container of ``image`` (running ``command`` instead of the image's own when
    given); ``env`` is the bot's environment as for a process (only its ARENA_* values are used).

    Raises :class:`DockerUnavailable` when no engine answers and :class:`BotStartFailed` when the
    container cannot start.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    client, container = await trio.to_thread.run_sync(
        _start_sync, image, command, env, socket_dir, limits
    )
    return ContainerBot(image, log_path, client, container)

"""``arena host``: the competition service, one trio program.

It serves the gRPC arena (bots: the ladder's sandboxed versions over a Unix socket, live bots
over TCP) and the HTTP API, validates new versions, and runs the ladder, all in one process and
one competition directory::

    DIR/competition.sqlite   authors, bots, versions, units, matches (arena/host/store/)
    DIR/snapshots/SHA256/    each version's files, read-only (arena/snapshots/tree.py)
    DIR/records/ DIR/logs/   match records, seat logs
    DIR/private/             the admin token, where the host listens, its log (mode 0700)

With ``--tls-cert``/``--tls-key`` both servers speak TLS; without them they listen on loopback
only, unless ``--insecure`` says the host means it. With ``[workers] dask`` the ladder's matches
go to a Dask cluster's workers (arena/host/remote.py).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio
from hypercorn.config import Config as HypercornConfig

from arena.bots.docker import DockerUnavailable
from arena.bots.docker import check_available as check_docker
from arena.bots.launch import Confinement
from arena.bots.sandbox import Limits, check_available, default_limits
from arena.boxed import boxed_arena
from arena.cluster.task import Cluster
from arena.errors import ArenaError, UsageError
from arena.host.analyses import Analyses
from arena.host.announce import Announcer, read_secret
from arena.host.api import HostState, create_app
from arena.host.challenges import Challenges
from arena.host.client import is_loopback
from arena.host.config import CompetitionConfig
from arena.host.events.runner import EventRunner
from arena.host.http import serve_http
from arena.host.images import remove_partial_tarballs
from arena.host.ladder import IDLE_POLL_S, Ladder, Wakeup, store_unusable
from arena.host.live import LiveBots
from arena.host.livefeed import LiveFeeds
from arena.host.par import ParKeeper
from arena.host.play import MatchPlayer, Player
from arena.host.remote import ClusterPlayer
from arena.host.retention import keep_pruning
from arena.host.seasons import Seasons
from arena.host.store import CompetitionStore, Version
from arena.host.supervise import PartStates, supervised
from arena.host.throttle import Throttle, TokenGate
from arena.host.validation import validate
from arena.layout import IMAGES_DIR, LOGS_DIR, PRIVATE_DIR, RECORDS_DIR
from arena.par import Reference
from arena.registry import hash_token
from arena.server import ArenaServer

log = structlog.get_logger("arena.host")

#: The host's own files in the competition directory, hidden from every bot.
ADMIN_TOKEN_FILE = "admin.token"
#: Where a running host says it listens (for ``arena host add-author`` and the tests).
HOST_FILE = "host.json"


@dataclass(frozen=True, slots=True)
class HostOptions:
    """How ``arena host`` listens and confines."""

    #: HTTP API address, ``host:port`` (port 0: a free one).
    http: str = "127.0.0.1:8080"
    #: gRPC address for live bots, ``host:port``.
    grpc: str = "127.0.0.1:50051"
    #: TLS certificate and key (PEM) for both; ``None``: plaintext.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: Listen beyond loopback without TLS.
    insecure: bool = False
    #: Run versions as plain processes (trusted bots only).
    no_sandbox: bool = False
    #: The gRPC address live bots are told (a host behind a proxy or NAT); ``None``: ``grpc``'s
    #: own, or for a wildcard (``0.0.0.0``) the name each API request came by.
    public_grpc: str | None = None
    #: The reference bots by name, for ``[ladder] par`` (the command line's: only it imports
    #: the reference bots); ``None``: no par, whatever the config says.
    par_reference: Callable[[str], Reference] | None = None


@dataclass(frozen=True, slots=True)
class Listening:
    """Where a started host listens."""

    http_url: str
    grpc_address: str
    admin_token: str


def check_listen(options: HostOptions) -> None:
    """One line when the addresses or TLS files would expose the host by mistake."""
    if (options.tls_cert is None) != (options.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    for path in (options.tls_cert, options.tls_key):
        if path is not None and not path.is_file():
            raise UsageError(f"TLS file {str(path)!r} not found")
    if options.tls_cert is not None or options.insecure:
        return
    for flag, address in (("--http", options.http), ("--grpc", options.grpc)):
        host = address.rsplit(":", 1)[0].strip("[]")
        if not is_loopback(host):
            raise UsageError(
                f"{flag} {address}: without --tls-cert/--tls-key the host listens on loopback "
                "only (pass --insecure to serve plaintext beyond it)"
            )


def advertised(address: str) -> str:
    """``address`` as live bots may be told it; ``""`` for a wildcard (``0.0.0.0``, ``[::]``),
    which names no host."""
    host = address.rsplit(":", 1)[0].strip("[]")
    return "" if host in ("", "0.0.0.0", "::") else address


def check_free(options: HostOptions) -> None:
    """One line, before anything starts, when another program listens on ``--http`` or
    ``--grpc`` (a bind then closed; port 0 is always free)."""
    for flag, address in (("--http", options.http), ("--grpc", options.grpc)):
        host, _, port = address.rpartition(":")
        host = host.strip("[]") or "0.0.0.0"
        if not port.isdigit() or int(port) == 0:
            continue  # the server says what is wrong with it
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            try:
                probe.bind((host, int(port)))
            except OSError as err:
                why = (err.strerror or str(err)).lower()
                if err.errno == errno.EADDRINUSE:
                    why += " (another program listens there: stop it, or choose another port)"
                raise UsageError(f"{flag} {address}: {why}") from None


def admin_token(directory: Path) -> str:
    """The host's admin token (made on first use, kept in ``DIR/private``, mode 0600)."""
    private = directory / PRIVATE_DIR
    private.mkdir(mode=0o700, exist_ok=True)
    path = private / ADMIN_TOKEN_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        token = "caa_" + secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        return token


def cluster_connector(config: CompetitionConfig) -> Callable[[], Cluster] | None:
    """How the host reaches its workers' scheduler (``[workers] dask``), or ``None``. Dask is
    imported here only, so a host without workers runs without it."""
    address = config.workers.dask
    if address is None:
        return None
    try:
        from arena.cluster.coordinator import DaskCluster
    except ImportError:
        raise ArenaError(
            "workers.dask needs Dask distributed, which this installation lacks: "
            "pip install 'card-arena[cluster]'"
        ) from None
    return lambda: DaskCluster(address)


async def run_host(
    config: CompetitionConfig,
    directory: Path,
    options: HostOptions,
    *,
    task_status: trio.TaskStatus[Listening] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the competition in ``directory`` until cancelled."""
    check_listen(options)
    check_free(options)
    limits = None
    if not options.no_sandbox:
        check_available()
        limits = default_limits()
    if config.submissions.allow_images:
        try:
            check_docker()
        except DockerUnavailable as err:
            raise DockerUnavailable(f"submissions.allow_images = true: {err}") from None
        remove_partial_tarballs(directory / IMAGES_DIR)
    connect = cluster_connector(config)
    read_secret(config, directory)  # a webhook's missing secret: one line before anything starts
    store = await trio.to_thread.run_sync(CompetitionStore, directory, config)
    try:
        token = admin_token(directory)
        tls = None
        if options.tls_cert is not None and options.tls_key is not None:
            tls = (options.tls_cert.read_bytes(), options.tls_key.read_bytes())
        hidden = tuple(directory / d for d in (PRIVATE_DIR, RECORDS_DIR, LOGS_DIR))
        # Duplicate deals with strangers' bots: nothing is shown as it is played (the pages'
        # live view says who plays, from the board, never what).
        async with boxed_arena(
            limits, hidden, listen=options.grpc, tls=tls, spectators=False
        ) as arena:
            await _serve(
                store,
                config,
                directory,
                options,
                arena.server,
                arena.box.confinement,
                token,
                task_status,
                connect,
                limits,
            )
    finally:
        await trio.to_thread.run_sync(store.close)


async def _serve(
    store: CompetitionStore,
    config: CompetitionConfig,
    directory: Path,
    options: HostOptions,
    server: ArenaServer,
    confinement: Confinement,
    token: str,
    task_status: trio.TaskStatus[Listening],
    connect: Callable[[], Cluster] | None = None,
    limits: Limits | None = None,
) -> None:
    trio_token = trio.lowlevel.current_trio_token()
    live = LiveBots(
        store,
        server.connected,
        lambda: trio_token.run_sync_soon(ladder.poke),
        max_per_author=config.limits.live_bots_per_author,
    )
    player = MatchPlayer(server, config, directory, confinement)
    remote = None
    if connect is not None:
        # The ladder's matches go out; validation stays here (arena/host/remote.py).
        remote = ClusterPlayer(connect, player, config, directory, store.secret_seed(), limits)
    ladder_player: Player = remote if remote is not None else player
    announcer = Announcer(store, config, read_secret(config, directory))
    ladder = Ladder(store, config, ladder_player, live.token, announcer=announcer)
    seasons = Seasons(store, config, announcer)
    validations = Wakeup()
    parts = PartStates()
    keeper = _par_keeper(store, config, directory, options)

    def changed() -> None:
        # From the API's worker threads and its trio tasks alike: a token is thread-safe.
        def wake() -> None:
            ladder.poke()
            validations.set()

        trio_token.run_sync_soon(wake)

    throttle = Throttle(config.limits)
    rules = config.rules.config
    analyses = Analyses(directory, config.analysis)
    challenges = Challenges(store, config, server, directory, confinement, ladder.refit)
    state = HostState(
        store,
        config,
        directory,
        lambda: ladder.standings,
        hash_token(token),
        changed,
        grpc_port=int(server.address.rsplit(":", 1)[1]),
        tls=options.tls_cert is not None,
        throttle=throttle,
        grpc_address=options.public_grpc or advertised(server.address),
        live_bots=live.connected,
        parts=parts.states,
        live_versions=live.connected_versions,
        disconnect_live=lambda ids: live.disconnect(ids, server.disconnect),
        play_unit=lambda unit_id: trio_token.run_sync_soon(ladder.adopt, unit_id),
        running=lambda: [m.match_id for m in server.summaries(running_only=True)],
        par=lambda: keeper.table if keeper is not None else None,
        analyses=analyses,
        challenges=challenges,
        live_feeds=LiveFeeds(server.tap, rules.players, dict(rules.options), rules.game_id),
    )
    app = create_app(state)
    server.token_owner = live.owner
    server.guard_tokens(TokenGate(throttle))
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve_http, app, _hypercorn(options), stop, config.http)
        url = binds[0]
        listening = Listening(url, server.address, token)
        _write_host_file(directory, url, server.address, options.tls_cert)
        log.info("hosting", competition=config.name, http=url, grpc=server.address)
        # Each part on its own: an unexpected error restarts that part, not the host.
        watched = functools.partial(supervised, fatal=store_unusable, states=parts)
        if remote is not None:
            nursery.start_soon(functools.partial(watched, "cluster client", remote.connect))
        await _start_schedule(nursery, watched, store, config, ladder, seasons, announcer)
        validator = functools.partial(_validator, store, player, config, ladder, validations, set())
        nursery.start_soon(functools.partial(watched, "validator", validator))
        for name, part in _optional_parts(config, store, analyses, challenges, keeper):
            nursery.start_soon(functools.partial(watched, name, part))
        task_status.started(listening)
        try:
            await trio.sleep_forever()
        finally:
            stop.set()
            if remote is not None:
                with trio.CancelScope(shield=True):  # a stop still says goodbye to the scheduler
                    await trio.to_thread.run_sync(remote.close)


async def _start_schedule(
    nursery: trio.Nursery,
    watched: Callable[[str, Callable[[], Awaitable[object]]], Awaitable[None]],
    store: CompetitionStore,
    config: CompetitionConfig,
    ladder: Ladder,
    seasons: Seasons,
    announcer: Announcer,
) -> None:
    """The parts that decide what is played and when, each ``watched``: the ladder, the
    seasons, the announcer (where there are webhooks) and the events."""
    nursery.start_soon(functools.partial(watched, "ladder", ladder.run))
    nursery.start_soon(
        functools.partial(watched, "seasons", functools.partial(seasons.run, ladder.refit))
    )
    if announcer.url is not None:
        nursery.start_soon(functools.partial(watched, "announcer", announcer.deliver_forever))
    # A part only where there are events (configured, or started under an earlier config).
    started = await trio.to_thread.run_sync(store.events)
    if config.events or started:
        events = EventRunner(store, config, ladder, announcer=announcer)
        nursery.start_soon(functools.partial(watched, "events", events.run))


def _optional_parts(
    config: CompetitionConfig,
    store: CompetitionStore,
    analyses: Analyses,
    challenges: Challenges,
    keeper: ParKeeper | None,
) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    """The host's parts that only some configs have, by name."""
    parts: list[tuple[str, Callable[[], Awaitable[None]]]] = []
    if config.analysis.enabled:
        parts.append(("analysis", analyses.run))
    if config.challenges.enabled:
        parts.append(("challenges", challenges.run))
    if config.retention.enabled:
        parts.append(("retention", functools.partial(keep_pruning, store, config.retention)))
    if keeper is not None:
        parts.append(("par", keeper.run))
    return parts


def _write_host_file(directory: Path, url: str, grpc: str, tls_cert: Path | None) -> None:
    """Where the running host listens, for its own tools (``add-author``); a self-signed host's
    tools trust its certificate."""
    cafile = str(tls_cert.resolve()) if tls_cert is not None else None
    (directory / PRIVATE_DIR / HOST_FILE).write_text(
        json.dumps({"http": url, "grpc": grpc, "cafile": cafile}) + "\n"
    )


def _par_keeper(
    store: CompetitionStore, config: CompetitionConfig, directory: Path, options: HostOptions
) -> ParKeeper | None:
    """The ladder's par keeper when ``[ladder] par`` names a reference and the host can make
    it."""
    if not config.ladder.par or options.par_reference is None:
        return None
    return ParKeeper(store, config, options.par_reference(config.ladder.par), directory)


def _hypercorn(options: HostOptions) -> HypercornConfig:
    """The HTTP server's settings: its address, TLS when given, no logs of its own (the host
    logs what matters)."""
    hc = HypercornConfig()
    hc.bind = [options.http]
    hc.accesslog = None
    hc.errorlog = None
    if options.tls_cert is not None and options.tls_key is not None:
        hc.certfile, hc.keyfile = str(options.tls_cert), str(options.tls_key)
    return hc


async def _validator(
    store: CompetitionStore,
    player: MatchPlayer,
    config: CompetitionConfig,
    ladder: Ladder,
    wakeup: Wakeup,
    troubled: set[int],
) -> None:
    """Validate versions as they come, one at a time (a validation is one short match); a
    validation a killed host left unfinished is played again. ``troubled``, kept across the
    part's restarts: the versions whose validation failed the validator, tried after the
    others so that one cannot hold every later submission up."""

    def waiting() -> list[Version]:
        found = store.versions(status="validating") + store.versions(status="pending")
        return sorted(found, key=lambda v: v.id in troubled)  # stable: oldest first otherwise

    while True:
        for version in await trio.to_thread.run_sync(waiting):
            troubled.add(version.id)
            await validate(store, player, config, version)
            troubled.discard(version.id)
            ladder.poke()
        await wakeup.wait(IDLE_POLL_S)

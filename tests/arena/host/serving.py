"""The competition's API served for tests: the real app (``arena.host.api.create_app``) over a real
store, by hypercorn on trio in a thread, on a real socket (plain or TLS)."""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve

from arena.host.analyses import Analyses
from arena.host.api import HostState, create_app
from arena.host.challenges import Challenges
from arena.host.config import CompetitionConfig, check_competition
from arena.host.ladder import Standings
from arena.host.store import CompetitionStore
from arena.ratings import fit_ratings
from arena.registry import hash_token

ADMIN = "admin-secret"
INVITE = "come-in-please"


# --- a host: the API over a real store, served on a real socket ---------------------------------


@dataclass
class Host:
    url: str
    store: CompetitionStore
    directory: Path
    #: What the leaderboard serves; a test may replace it.
    standings: Standings
    #: The authors' analyses it serves, when asked for (``hosting(analysis=…)``).
    analyses: Analyses | None = None


@contextmanager
def serving(app: object, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """``app`` served by hypercorn on trio in a thread; yields its URL."""
    config = HypercornConfig()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("tests.hypercorn")  # shown by pytest on a failure
    if tls is not None:
        config.certfile, config.keyfile = str(tls[0]), str(tls[1])
    started: queue.Queue[tuple[str, trio.lowlevel.TrioToken, trio.Event] | BaseException] = (
        queue.Queue()
    )

    async def run() -> None:
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                functools.partial(serve, app, config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]
            )
            started.put((binds[0], trio.lowlevel.current_trio_token(), stop))

    def thread() -> None:
        try:
            trio.run(run)
        except BaseException as err:  # handed to the test's thread
            started.put(err)

    worker = threading.Thread(target=thread, name="hypercorn", daemon=True)
    worker.start()
    item = started.get(timeout=30)
    if isinstance(item, BaseException):
        raise item
    url, token, stop = item
    try:
        yield url
    finally:
        trio.from_thread.run_sync(stop.set, trio_token=token)
        worker.join(timeout=30)
        assert not worker.is_alive()


def competition(
    invite: bool = False,
    images: bool = False,
    dask: str | None = None,
    analysis: dict[str, object] | None = None,
) -> CompetitionConfig:
    raw: dict[str, object] = {
        "game": "whist",
        "options": {"points_to_win": 1, "games_per_rubber": 1},
    }
    if invite:
        raw["authors"] = {"invite_code": INVITE}
    if images:
        raw["submissions"] = {"allow_images": True}
    if dask:
        raw["workers"] = {"dask": dask}
    if analysis is not None:
        raw["analysis"] = analysis
    return check_competition(raw, "test", "cup")


@contextmanager
def hosting(
    tmp_path: Path,
    tls: tuple[Path, Path] | None = None,
    invite: bool = False,
    images: bool = False,
    *,
    dask: str | None = None,
    running: Callable[[], list[str]] = list,
    analysis: dict[str, object] | None = None,
    challenges: Challenges | None = None,
) -> Iterator[Host]:
    """The API over a real store; ``dask``: its ``[workers]``; ``running``: the ids of the
    matches its arena would be playing; ``analysis``: its ``[analysis]``, the API then serving
    authors' analyses (``Host.analyses``, whose worker the test runs); ``challenges``: what its
    challenges' pages are looked up in."""
    config = competition(invite, images, dask, analysis)
    directory = tmp_path / "competition"
    with CompetitionStore(directory, config) as store:
        empty = fit_ratings([])
        host = Host("", store, directory, Standings(empty, empty))
        if analysis is not None:
            host.analyses = Analyses(directory, config.analysis)
        state = HostState(
            store,
            config,
            directory,
            standings=lambda: host.standings,
            admin_token_hash=hash_token(ADMIN),
            changed=lambda: None,
            running=running,
            analyses=host.analyses,
            challenges=challenges,
        )
        with serving(create_app(state), tls) as url:
            host.url = url
            yield host


def validated_versions(store: CompetitionStore, names: tuple[str, ...]) -> list[int]:
    """A validated first version of each bot of ``names``, all alice's (a new author); their
    ids."""
    author, _ = store.add_author("alice")
    ids = []
    for name in names:
        v = store.add_version(author.id, name, "archive", "ab" * 32, {"command": "python bot.py"})
        store.set_status(v.id, "validating")
        ids.append(store.set_status(v.id, "validated").id)
    return ids

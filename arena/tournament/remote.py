"""A tournament's matches on a cluster (``--dask ADDR``): the coordinator's half of the job.

Before the first match each bot becomes a content-addressed snapshot under the output directory
(``snapshots/<sha256>/``: its command and the files it names, or its config's ``files``) and is
offered to the workers (arena/cluster/). A match goes out as a
:class:`~arena.cluster.task.ClusterMatch` and comes back as a
:class:`~arena.cluster.task.ClusterResult`; the record and the seat logs it carries are written
here, into the same places a local run writes them, and the runner stores the result as it would
a local one: the coordinator alone writes the store.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import trio

from arena.bots.sandbox import Limits
from arena.cluster.bundles import BundleError, bundle_bot, named_files
from arena.cluster.results import keep_result
from arena.cluster.task import BotRef, Cluster, ClusterMatch, ClusterRun, SlotsLike
from arena.layout import SNAPSHOTS_DIR
from arena.rules import PlayedMatch
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import MatchPlan


class RemoteRun:
    """One tournament's matches on ``cluster``."""

    def __init__(self, cluster: Cluster, config: TournamentConfig, sandbox: Limits | None) -> None:
        self._cluster = cluster
        self._config = config
        assert config.seed is not None  # settled by open_store
        identity = json.dumps(config.identity(), sort_keys=True, default=str)
        # Pools on the workers are per run: the same tournament resumed meets its own processes.
        run = "t-" + hashlib.sha256(identity.encode()).hexdigest()[:24]
        self._run = ClusterRun(run, config.seed, config.rules, sandbox)
        self._refs: dict[str, BotRef] = {}

    def offer_bots(self) -> None:
        """Snapshot every bot and offer it to the workers (blocking; one line if a bot cannot
        go: an image bot, a file it names that is gone)."""
        snapshots = self._config.output / SNAPSHOTS_DIR
        for bot in self._config.bots:
            program = bot.program
            if program.kind == "image":
                raise BundleError(
                    f'bot "{bot.name}" runs from a Docker image: a cluster takes commands only'
                )
            if program.directory is not None:  # a registered bot: its whole directory
                base = program.directory
                files = sorted(p.name for p in base.iterdir())
            else:
                base = Path.cwd()
                files = list(bot.files) if bot.files is not None else named_files(program.command)
            snapshot = bundle_bot(
                bot.name, program.command, files, snapshots, base, program.protocol
            )
            self._refs[bot.name] = self._cluster.offer(bot.name, snapshot)

    def slots(self) -> SlotsLike:
        """The limit on matches in flight: the workers' slots."""
        return self._cluster.slots()

    def task(self, plan: MatchPlan) -> ClusterMatch:
        """``plan`` as a task."""
        return self._run.task(plan.match_id, plan.seed, plan.seats, self._refs)

    async def play(self, plan: MatchPlan) -> PlayedMatch:
        """Play ``plan`` on the cluster; write its record and seat logs here."""
        got = await self._cluster.play(self.task(plan))
        # A RecordError (disk full) is an ArenaError: the match stays pending, as locally.
        record, _ = await trio.to_thread.run_sync(keep_result, self._config.output, got)
        return PlayedMatch(got.result, got.faults, record)

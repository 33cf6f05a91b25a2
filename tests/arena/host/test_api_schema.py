"""The competition API against its own OpenAPI schema (schemathesis): whatever a client sends that
the schema allows, and much that it does not, no request gets a server error (5xx), anonymous, as
an author, or as the host. Served for real (tests/arena/host/serving.py), over a store with an
author, versions in every state, and finished matches, so the paths that read them run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings

from arena.host.client import pack_directory
from arena.layout import SNAPSHOTS_DIR
from arena.snapshots.archive import ArchiveLimits
from arena.snapshots.tree import store_snapshot
from engine import Result
from tests.arena.host.serving import ADMIN, hosting

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N+S")
#: The author's token of the current fixture (schemathesis calls go out with it or the admin's).
TOKENS: dict[str, str] = {}


def _seed(host: Any) -> None:
    store = host.store
    author, token = store.add_author("alice")
    TOKENS["author"] = token
    source = host.directory.parent / "bot"
    source.mkdir()
    (source / "cardarena.toml").write_text('command = "python3 bot.py"\n')
    (source / "bot.py").write_text("print(1)\n")
    bot = pack_directory(source)
    snap = store_snapshot(bot, host.directory / SNAPSHOTS_DIR, ArchiveLimits())
    ids = []
    for name in ("a", "b", "c"):
        v = store.add_version(author.id, name, "archive", snap.sha256, snap.manifest.to_dict())
        ids.append(v.id)
    for v in ids[:2]:
        store.set_status(v, "validating")
        store.set_status(v, "validated")
    store.add_live_version(author.id, "live")
    unit = store.create_unit("ladder", 1, (ids[0], ids[1]), [("u1-r0", 0, (ids[0], ids[1]) * 2)])
    store.commit_match("u1-r0", WIN, [], "records/u1-r0.jsonl.gz")
    assert store.unit(unit).state == "done"


def test_no_request_gets_a_server_error(tmp_path: Path) -> None:
    # Driven by hand rather than by schemathesis's pytest plugin, which this pytest breaks.
    with hosting(tmp_path, invite=True) as host:
        _seed(host)
        schema = schemathesis.openapi.from_url(f"{host.url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        # 24, /live, the seasons (GET /seasons, /seasons/{n}, POST /admin/seasons/end), the exports,
        # the events (GET /events, /events/{name}, POST /admin/events/{name}/start), the admin's
        # (GET authors, units, queue, audit; POST suspend, reinstate, retire, rerun, reopen),
        # GET /leaderboard/par, an author's analysis (GET, POST /matches/{id}/analysis),
        # the challenges (POST /challenges, GET the list, one, its record) and a match
        # followed live (GET /live/{id}, /live/{id}/feed)
        live = 2
        assert len(operations) == 24 + 1 + 3 + 2 + 3 + 9 + 1 + 2 + 4 + live, [
            op.label for op in operations
        ]
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                max_examples=25,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                # Each request three times: anonymous, as an author, as the host.
                for token in (None, TOKENS["author"], ADMIN):
                    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
                    response = case.call(headers=headers)
                    # The bytes: a record or an archive is gzip, not text.
                    where = (case.method, case.formatted_path, response.content[:300])
                    assert response.status_code < 500, where
                    if response.status_code >= 400 and "json" in response.headers.get(
                        "content-type", ""
                    ):
                        detail = response.json().get("detail")
                        assert isinstance(detail, str) and "\n" not in detail, where

            check()

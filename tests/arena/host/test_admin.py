"""``arena remote admin …`` against a real ``arena host`` (real HTTP, real gRPC, real SQLite, real
bot processes): listing authors with their quotas, suspending one (their API token 401 at once,
their live bot disconnected and refused when it comes back, their versions retired, their name
not registrable again), reinstating them (a new token, the old one dead, versions still
retired), retiring anyone's version, playing a failed unit again (played by the ladder; a table
with a retired version refused in one line), the validation queue, reopening a closed ladder
(the final's pending units failed), every action in the audit, and every admin route refused
to anyone without the admin token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from arena.host.config import load_competition
from arena.host.store import CompetitionStore
from tests.arena.host.processes import (
    GOOD_BOT,
    UNTHROTTLED,
    Host,
    bot_archive,
    competition_config,
)
from tests.arena.host.test_live_quota import _bot
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

INVITE = "let me in"
EXTRA = (
    "live_grace_s = 3\n[final]\ntop = 2\nmatches_per_pairing = 40\n"
    f'[authors]\ninvite_code = "{INVITE}"\n'
)

#: Every admin route, with a body where it takes one.
ROUTES = [
    ("GET", "/admin/authors", None),
    ("POST", "/admin/authors", {"name": "mallory"}),
    ("POST", "/admin/authors/alice/suspend", {}),
    ("POST", "/admin/authors/alice/reinstate", None),
    ("POST", "/admin/versions/1/retire", {}),
    ("GET", "/admin/units", None),
    ("POST", "/admin/units/1/rerun", None),
    ("GET", "/admin/queue", None),
    ("POST", "/admin/reopen", None),
    ("POST", "/admin/ladder", {"state": "paused"}),
    ("GET", "/admin/audit", None),
]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    # Every route tried with wrong tokens: more failed attempts than the default lockout allows.
    config.write_text(
        competition_config(extra=EXTRA, limits=UNTHROTTLED + "auth_failures = 1000\n")
    )
    with Host(config, tmp_path / "cup", None).running() as h:
        yield h


class Admin:
    """``arena remote admin …`` in a process of its own, with the host's admin token."""

    def __init__(self, host: Host) -> None:
        token = (host.directory / "private" / "admin.token").read_text().strip()
        base = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env = base | {"ARENA_SERVER": host.url, "ARENA_ADMIN_TOKEN": token}

    def run(self, *args: str, admin: bool = True) -> subprocess.CompletedProcess[str]:
        command = ["remote", "admin", *args] if admin else ["remote", *args]
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", *command],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return done.stdout

    def refused(self, *args: str, admin: bool = True) -> str:
        done = self.run(*args, admin=admin)
        assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
        (line,) = done.stderr.splitlines()
        assert "Traceback" not in line
        return line.removeprefix("arena: error: ")


def _token(printed: str) -> str:
    found = re.search(r"(cau_\S+)", printed)
    assert found is not None, printed
    return found.group(1)


def _played(client: httpx.Client) -> dict[str, int]:
    return {r["ref"]: r["matches"] for r in client.get("/api/v1/leaderboard").json()}


def _submit(client: httpx.Client, name: str) -> int:
    answer = client.put(f"/api/v1/bots/{name}/versions", content=bot_archive(GOOD_BOT))
    assert answer.status_code == 201, answer.text
    version: int = answer.json()["id"]
    return version


def _status(client: httpx.Client, version: int) -> str:
    status: str = client.get(f"/api/v1/versions/{version}").json()["status"]
    return status


def test_non_admin_tokens_are_refused_on_every_admin_route(host: Host) -> None:
    alice = host.add_author("alice")
    for token in (None, alice, "caa_not-the-admin-token"):
        with host.client(token) as c:
            for method, path, body in ROUTES:
                answer = c.request(method, "/api/v1" + path, json=body)
                assert answer.status_code == 403, (token, method, path, answer.text)
                assert answer.json() == {"detail": "the host's admin token is required"}
    admin = Admin(host)
    admin.env["ARENA_ADMIN_TOKEN"] = alice
    assert admin.refused("authors").endswith("the host's admin token is required")
    # Nothing happened: alice stands, nothing is in the audit but her addition.
    admin = Admin(host)
    assert "alice (author 1" in admin.ok("authors") and "SUSPENDED" not in admin.ok("authors")
    assert admin.ok("audit").count("\n") == 1


def test_suspend_reinstate_retire_and_the_audit(host: Host) -> None:
    admin = Admin(host)
    alice = _token(admin.ok("add-author", "alice"))
    bob = _token(admin.ok("add-author", "bob"))
    bots: list[subprocess.Popen[str]] = []
    with host.client(alice) as a, host.client(bob) as b:
        alpha = _submit(a, "alpha")
        live = b.post("/api/v1/bots/bee/live").json()
        bee, bee_token = live["version"]["id"], live["token"]
        try:
            bots.append(_bot(host, bee_token))
            wait_until(lambda: _played(a).get("bee@1", 0) > 0, 240, what="bob's live bot to play")
            listed = admin.ok("authors")
            assert "bob (author 2" in listed and f"{bee:>5}  bee@1  live  validated" in listed
            assert "live bots 1/4" in listed

            said = admin.ok("suspend", "bob", "--reason", "spamming the ladder")
            assert "suspended bob: their API token and live bots' tokens no longer work" in said
            assert "retired: bee@1; live bots disconnected: 1" in said
            # At once: his token is dead over HTTP, his bot's stream is ended and it is turned
            # away when it comes back (over gRPC).
            assert b.get("/api/v1/me").status_code == 401
            first = bots[0]
            wait_until(lambda: first.poll() is not None, 60, what="bob's bot to be let go")
            again = _bot(host, bee_token)
            bots.append(again)
            assert again.wait(60) != 0
            assert again.stderr is not None
            assert "your author is suspended by the host" in again.stderr.read()
            version = a.get(f"/api/v1/versions/{bee}").json()
            assert version["status"] == "retired"
            assert b.put("/api/v1/bots/bee/versions", content=b"x").status_code == 401
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
                bot.wait()
        # Nor can he come back under his name.
        line = admin.refused("register", "bob", "--invite", INVITE, admin=False)
        assert line == "HTTP 409: author 'bob' already exists"
        listed = admin.ok("authors")
        assert "bob (author 2" in listed and "SUSPENDED since" in listed
        assert "(spamming the ladder)" in listed
        assert "bee@1  live  retired  suspended by the host: spamming the ladder" in listed
        assert admin.refused("suspend", "bob") == "HTTP 409: author 'bob' is suspended already"
        assert admin.refused("suspend", "nobody") == "HTTP 404: no author 'nobody'"

        said = admin.ok("reinstate", "bob")
        assert "retired versions stay retired" in said
        new = _token(said)
        assert b.get("/api/v1/me").status_code == 401  # the old token stays dead
        with host.client(new) as b2:
            me = b2.get("/api/v1/me").json()
            assert me["author"]["name"] == "bob"
            assert [v["status"] for bot in me["bots"] for v in bot["versions"]] == ["retired"]
        assert admin.refused("reinstate", "bob") == "HTTP 409: author 'bob' is not suspended"

        # Anyone's version, retired by the host: its author sees why.
        wait_until(lambda: _status(a, alpha) == "validated", 120, what="alpha@1 validated")
        said = admin.ok("retire", str(alpha), "--reason", "uses a lookup table")
        assert said == f"retired alpha@1 (version {alpha}): uses a lookup table\n"
        assert a.get(f"/api/v1/versions/{alpha}").json()["reason"] == "uses a lookup table"
        assert admin.refused("retire", str(alpha)).startswith("HTTP 409: version alpha@1 is")

    audit = admin.ok("audit")
    actions = [line.split()[4] for line in audit.splitlines()]
    assert actions == ["retire", "reinstate", "suspend", "add-author", "add-author"], audit
    assert '"reason": "spamming the ladder", "retired": ["bee@1"]' in audit
    assert "retire  alpha@1" in audit


def _fail_units(host: Host, alpha: int, beta: int, gamma: int) -> tuple[int, int]:
    """With the host stopped: a failed unit of alpha and beta (both validated), and one of alpha
    and gamma, gamma retired since; their ids."""
    config = load_competition(host.config)
    made = []
    with CompetitionStore(host.directory, config) as store:
        for other in (beta, gamma):
            unit_id = store.next_unit_id()
            seats = (alpha, other, alpha, other)
            matches = [(f"test{unit_id}-r0", 0, seats)]
            store.create_unit("ladder", 7, (alpha, other), matches, unit_id=unit_id)
            assert store.fail_unit(unit_id, "made to fail by the test")
            made.append(unit_id)
        store.set_status(gamma, "retired", "gone")
    return made[0], made[1]


@pytest.mark.host  # a real host for many seconds: make test-host
def test_rerun_a_failed_unit_the_queue_and_reopening(host: Host) -> None:
    admin = Admin(host)
    alice = _token(admin.ok("add-author", "alice"))
    with host.client(alice) as a:
        ids = [_submit(a, name) for name in ("alpha", "beta", "gamma")]
        wait_until(
            lambda: all(_status(a, v) == "validated" for v in ids), 180, what="three validated"
        )
        wait_until(
            lambda: _played(a).get("alpha@1") and _played(a).get("beta@1"),
            240,
            what="alpha@1 and beta@1 rated",
        )
        admin.ok("ladder", "--pause")
    queue = admin.ok("queue")
    assert queue == "validation queue: empty\nfailed units: none\n", queue
    host.stop()
    ok_unit, bad_unit = _fail_units(host, *ids)
    host.start()
    queue = admin.ok("queue")
    assert f"unit {ok_unit} (ladder: alpha@1, beta@1)" in queue
    assert "made to fail by the test" in queue

    said = admin.ok("rerun", str(ok_unit))
    found = re.search(
        rf"unit {ok_unit} played again as unit (\d+) \(ladder: alpha@1, beta@1\)", said
    )
    assert found is not None, said
    new = int(found.group(1))
    # Played by the ladder, though it is paused (a stored unit is always played out).
    with host.client() as c:

        def played() -> bool:
            matches = c.get("/api/v1/matches", params={"phase": "ladder", "limit": 1000}).json()
            return any(m["unit"] == new for m in matches)

        wait_until(played, 120, what=f"unit {new} played")
    assert f"(played again as unit {new})" in admin.ok("queue")
    assert admin.refused("rerun", str(ok_unit)) == (
        f"HTTP 409: unit {ok_unit} cannot be played again: it was played again already, as "
        f"unit {new}"
    )
    assert admin.refused("rerun", str(bad_unit)) == (
        f"HTTP 409: unit {bad_unit} cannot be played again: gamma@1 is retired; only "
        "validated versions play"
    )
    assert admin.refused("rerun", str(new)) == (
        f"HTTP 409: unit {new} cannot be played again: it is done; only a failed unit is "
        "played again"
    )
    assert admin.refused("rerun", "999999") == "HTTP 404: no unit 999999"
    assert admin.refused("rerun") == "give one UNIT_ID or --all-failed"
    said = admin.ok("rerun", "--all-failed")
    assert f"unit {bad_unit} not played again: HTTP 409: unit {bad_unit} cannot" in said
    assert "no failed unit played again" in said

    # Closed, the final is playing; reopened, its pending units fail and submissions open.
    admin.ok("ladder", "--close")
    with host.client(alice) as a:
        wait_until(
            lambda: a.get("/api/v1/status").json()["final"] == "playing", 120, what="the final"
        )
        assert a.put("/api/v1/bots/delta/versions", content=b"x").status_code == 409
        said = admin.ok("reopen")
        assert said.startswith("ladder: running (reopened")
        assert "reopened by the host" in admin.ok("queue")
        status = a.get("/api/v1/status").json()
        assert (status["state"], status["final"], status["final_winners"]) == (
            "running",
            "interrupted",
            [],
        )
        _submit(a, "delta")
    assert (
        admin.refused("reopen")
        == "HTTP 409: the ladder is running; only a closed ladder is reopened"
    )
    audit = admin.ok("audit")
    actions = [line.split()[4] for line in audit.splitlines()]
    assert actions[:3] == ["reopen", "ladder", "rerun"], audit
    assert "ladder  ladder" in audit and '"state": "closed"' in audit
    assert f'"as": {new}' in audit

"""The host's ``[limits]`` over real HTTP (the real app, a real store, hypercorn on a loopback
socket): a guesser at the invite code or at tokens, from 127.0.0.2, is locked out with 429 and
``Retry-After`` while an honest author at 127.0.0.1 goes on; request rates per address and per
token; an author's quotas on versions a day (the clock moved) and on stored bytes (nothing
stored past it); and ``arena remote``'s client shows a 429 in one line. The throttle's clock and
the quotas' wall clock are the test's, so no test waits for a lock-out to pass."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.cli.main import main
from arena.errors import ArenaError
from arena.host.api import HostState, create_app
from arena.host.api.forwarded import forwarded_client
from arena.host.client import RemoteClient, RemoteError
from arena.host.config import check_competition
from arena.host.ladder import Standings
from arena.host.store import CompetitionStore
from arena.host.throttle import DAY_S, Throttle
from arena.layout import SNAPSHOTS_DIR
from arena.ratings import fit_ratings
from arena.registry import hash_token
from tests.arena.host.processes import archive, bot_archive
from tests.arena.host.serving import ADMIN, INVITE, serving

GOOD_BOT = b"from cardarena import RandomBot, run_bot\nrun_bot(RandomBot())\n"
OCTET = {"Content-Type": "application/octet-stream"}
#: Everything generous but what a test turns down.
ROOMY = {
    "address_requests_per_minute": 0,
    "token_requests_per_minute": 0,
    "versions_per_day": 0,
    "stored_mib_per_author": 0,
}


class Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@dataclass
class Limited:
    url: str
    store: CompetitionStore
    directory: Path
    #: The throttle's clock (monotonic seconds) and the quotas' wall clock (epoch seconds).
    clock: Clock
    wall: Clock

    def client(self, token: str | None = None, address: str = "127.0.0.1") -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(
            base_url=self.url,
            headers=headers,
            transport=httpx.HTTPTransport(local_address=address),
            timeout=30,
        )


@contextmanager
def limited(tmp_path: Path, http: dict[str, Any] | None = None, **limits: int) -> Iterator[Limited]:
    raw: dict[str, Any] = {
        "game": "whist",
        "options": {"points_to_win": 1, "games_per_rubber": 1},
        "authors": {"invite_code": INVITE},
        "limits": {**ROOMY, **limits},
        "http": http or {},
    }
    config = check_competition(raw, "test", "cup")
    directory = tmp_path / "competition"
    clock, wall = Clock(1000.0), Clock(time.time())
    with CompetitionStore(directory, config) as store:
        empty = fit_ratings([])
        state = HostState(
            store,
            config,
            directory,
            standings=lambda: Standings(empty, empty),
            admin_token_hash=hash_token(ADMIN),
            changed=lambda: None,
            throttle=Throttle(config.limits, clock),
            clock=wall,
        )
        with serving(create_app(state)) as url:
            yield Limited(url, store, directory, clock, wall)


def _too_many(response: httpx.Response, retry_after: int | None = None) -> str:
    """The 429's one line, checked: a Retry-After in whole seconds, the usual body."""
    assert response.status_code == 429, response.text
    wait = response.headers["Retry-After"]
    assert wait.isdigit() and int(wait) >= 1
    if retry_after is not None:
        assert int(wait) == retry_after
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    assert detail.endswith(f"try again in {wait} s"), detail
    return detail


def _register(c: httpx.Client, name: str, code: str = INVITE) -> httpx.Response:
    return c.post("/api/v1/authors", json={"name": name, "invite_code": code})


def test_invite_code_guessing_is_locked_out_while_an_honest_author_goes_on(
    tmp_path: Path,
) -> None:
    with (
        limited(tmp_path, auth_failures=5, auth_window_s=60, auth_lockout_s=30) as host,
        host.client(address="127.0.0.2") as guesser,
        host.client() as honest,
    ):
        for i in range(5):
            wrong = _register(guesser, f"g{i}", f"guess-{i:04d}")
            assert wrong.status_code == 403 and wrong.json()["detail"] == "wrong invite code"
        detail = _too_many(_register(guesser, "g", "guess-9999"), retry_after=30)
        assert detail.startswith("too many failed authentications from your address")
        # Locked out even with the right code: guessing cannot tell it found it.
        _too_many(_register(guesser, "lucky"), retry_after=30)
        # Another address registers and works meanwhile.
        made = _register(honest, "alice")
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        assert honest.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).is_success
        host.clock.now += 29
        _too_many(_register(guesser, "lucky"), retry_after=1)
        host.clock.now += 1
        assert _register(guesser, "lucky").status_code == 201
        # A taken name is no guess: it never locks anyone out.
        for _ in range(10):
            assert _register(honest, "alice").status_code == 409


def test_bad_tokens_are_locked_out_whatever_route_they_try(tmp_path: Path) -> None:
    with limited(tmp_path, auth_failures=4, auth_window_s=60, auth_lockout_s=60) as host:
        _, token = host.store.add_author("alice")
        with host.client(address="127.0.0.2") as prober, host.client(token) as alice:
            bad = {"Authorization": "Bearer cau_not-a-token"}
            assert prober.get("/api/v1/me", headers=bad).status_code == 401
            assert (
                prober.post("/api/v1/admin/authors", json={"name": "x"}, headers=bad).status_code
                == 403
            )
            # A public read with a wrong token is an oracle too: it counts.
            assert prober.get("/api/v1/versions/999", headers=bad).status_code == 404
            assert prober.get("/api/v1/me", headers=bad).status_code == 401
            _too_many(prober.get("/api/v1/me", headers=bad), retry_after=60)
            right = {"Authorization": f"Bearer {token}"}
            _too_many(prober.get("/api/v1/me", headers=right), retry_after=60)
            admin = {"Authorization": f"Bearer {ADMIN}"}
            _too_many(prober.post("/api/v1/admin/authors", json={"name": "x"}, headers=admin))
            _too_many(prober.get("/api/v1/versions/999", headers=right))
            # What asks for no authentication is still served to the locked-out address.
            assert prober.get("/api/v1/status").status_code == 200
            assert prober.get("/api/v1/me").status_code == 401  # no token: no attempt
            # The author, elsewhere, is not affected; successes never count.
            for _ in range(10):
                assert alice.get("/api/v1/me").status_code == 200
            host.clock.now += 60
            assert prober.get("/api/v1/me", headers=right).status_code == 200
            # A second lock-out lasts twice as long.
            for _ in range(4):
                prober.get("/api/v1/me", headers=bad)
            _too_many(prober.get("/api/v1/me", headers=right), retry_after=120)


def test_request_rate_per_address(tmp_path: Path) -> None:
    with (
        limited(tmp_path, address_requests_per_minute=60, address_burst=5) as host,
        host.client(address="127.0.0.2") as flood,
        host.client() as other,
    ):
        assert all(flood.get("/api/v1/status").status_code == 200 for _ in range(5))
        detail = _too_many(flood.get("/api/v1/status"), retry_after=1)
        assert detail == "too many requests from your address; try again in 1 s"
        _too_many(flood.get("/"))  # the pages too
        _too_many(flood.get("/api/v1/no-such-route"))
        assert other.get("/api/v1/status").status_code == 200
        host.clock.now += 1
        assert flood.get("/api/v1/status").status_code == 200
        _too_many(flood.get("/api/v1/status"))


def test_request_rate_per_token_from_any_address(tmp_path: Path) -> None:
    with limited(tmp_path, token_requests_per_minute=30, token_burst=4) as host:
        _, token = host.store.add_author("alice")
        with host.client(token) as here, host.client(token, "127.0.0.2") as there:
            for c in (here, there, here, there):
                assert c.get("/api/v1/me").status_code == 200
            detail = _too_many(there.get("/api/v1/me"), retry_after=2)
            assert detail == "too many requests with this token; try again in 2 s"
            _too_many(here.get("/api/v1/status"))
            with host.client() as anonymous:
                assert anonymous.get("/api/v1/status").status_code == 200
            host.clock.now += 2
            assert here.get("/api/v1/me").status_code == 200


def test_versions_per_day_quota_resets_as_the_day_moves(tmp_path: Path) -> None:
    with limited(tmp_path, versions_per_day=2) as host:
        _, token = host.store.add_author("alice")
        with host.client(token) as alice:
            for n in (1, 2):
                code = GOOD_BOT + f"# {n}\n".encode()
                made = alice.put(
                    "/api/v1/bots/alpha/versions", content=bot_archive(code), headers=OCTET
                )
                assert made.status_code == 201, made.text
            host.wall.now += 3600
            refused = alice.put(
                "/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET
            )
            wait = int(DAY_S - 3600)
            detail = _too_many(refused)
            assert abs(int(refused.headers["Retry-After"]) - wait) <= 2
            assert detail.startswith(
                "quota: 2 new versions in any 24 hours (limits.versions_per_day)"
            )
            # A live bot is a new version too.
            _too_many(alice.post("/api/v1/bots/beta/live"))
            assert len(host.store.versions()) == 2
            host.wall.now += wait + 2
            assert alice.post("/api/v1/bots/beta/live").status_code == 201
            again = alice.put(
                "/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET
            )
            assert again.status_code == 201, again.text


def _big_bot(tag: bytes, size: int) -> bytes:
    """A bot whose archive unpacks to about ``size`` bytes (random: it does not compress)."""
    return archive(
        {
            "cardarena.toml": b'command = "python3 bot.py"\n',
            "bot.py": GOOD_BOT + b"# " + tag + b"\n",
            "weights.bin": os.urandom(size),
        }
    )


def _snapshots(directory: Path) -> set[str]:
    root = directory / SNAPSHOTS_DIR
    return (
        {p.name for p in root.iterdir() if not p.name.startswith(".")} if root.exists() else set()
    )


def test_stored_bytes_quota_refuses_an_upload_and_stores_nothing(tmp_path: Path) -> None:
    mib = 1024 * 1024
    with limited(tmp_path, stored_mib_per_author=1) as host:
        _, token = host.store.add_author("alice")
        _, other = host.store.add_author("bob")
        with host.client(token) as alice, host.client(other) as bob:
            first_upload = _big_bot(b"1", 600_000)
            first = alice.put("/api/v1/bots/a/versions", content=first_upload, headers=OCTET)
            assert first.status_code == 201, first.text
            kept = _snapshots(host.directory)
            refused = alice.put(
                "/api/v1/bots/a/versions", content=_big_bot(b"2", 600_000), headers=OCTET
            )
            assert refused.status_code == 409, refused.text
            detail = refused.json()["detail"]
            assert "\n" not in detail and "limits.stored_mib_per_author" in detail
            assert f"{mib:,} bytes of stored uploads" in detail
            assert _snapshots(host.directory) == kept
            assert [v.number for v in host.store.versions()] == [1]
            # What still fits is taken; another author has a quota of their own.
            small = _big_bot(b"3", 1000)
            assert alice.put("/api/v1/bots/a/versions", content=small, headers=OCTET).is_success
            big = _big_bot(b"4", 600_000)
            assert bob.put("/api/v1/bots/b/versions", content=big, headers=OCTET).is_success
        # Full (a version stored by hand takes the rest): refused before the body is read.
        (author,) = [a for a in host.store.authors() if a.name == "alice"]
        manifest = {"command": "python3 bot.py", "runtime": "python3", "bytes": mib}
        host.store.add_version(author.id, "a", "archive", "e" * 64, manifest)
        with host.client(token) as alice:
            full = alice.put("/api/v1/bots/a/versions", content=small, headers=OCTET)
            assert full.status_code == 409, full.text
            assert full.json()["detail"].startswith("quota: you reached your 1,048,576 bytes")
            assert alice.post("/api/v1/bots/live/live").status_code == 201  # no bytes stored


def test_the_client_shows_a_429_in_one_line(tmp_path: Path) -> None:
    with limited(tmp_path, auth_failures=2, auth_window_s=60, auth_lockout_s=30) as host:
        for _ in range(2):
            with pytest.raises(RemoteError):
                RemoteClient(host.url, token="caa_wrong").admin_add_author("x")
        with pytest.raises(RemoteError) as err:
            RemoteClient(host.url, token=ADMIN).admin_add_author("x")  # what add-author calls
        assert str(err.value) == (
            "HTTP 429: too many failed authentications from your address; try again in 30 s"
        )


def test_arena_remote_prints_a_429_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ARENA_SERVER", "ARENA_API_TOKEN", "ARENA_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with limited(tmp_path, address_requests_per_minute=60, address_burst=1) as host:
        _, token = host.store.add_author("alice")
        assert main(["remote", "me", "--server", host.url, "--token", token]) == 0
        capsys.readouterr()
        assert main(["remote", "me", "--server", host.url, "--token", token]) == 2
        out, err = capsys.readouterr()
    assert out == ""
    assert err == "arena: error: HTTP 429: too many requests from your address; try again in 1 s\n"


def test_the_client_reads_a_bare_429_from_a_proxy(tmp_path: Path) -> None:
    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = [(b"content-type", b"text/html"), (b"retry-after", b"7")]
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": b"<html>slow down</html>"})

    with serving(proxy) as url, pytest.raises(RemoteError) as err:
        RemoteClient(url).status()
    assert str(err.value) == "HTTP 429: too many requests; try again in 7 s"


def test_behind_a_trusted_proxy_each_forwarded_client_is_limited_alone(tmp_path: Path) -> None:
    proxy = {"trusted_proxies": ["127.0.0.1", "10.0.0.0/8"]}
    with limited(tmp_path, proxy, auth_failures=2, auth_window_s=60, auth_lockout_s=60) as host:
        _, token = host.store.add_author("alice")
        bad = {"Authorization": "Bearer cau_not-a-token"}
        right = {"Authorization": f"Bearer {token}"}

        def via_proxy(client: str, **headers: str) -> dict[str, str]:
            # What the client claimed, then what each proxy saw (the second one a trusted hop).
            return {"X-Forwarded-For": f"6.6.6.6, {client}, 10.1.2.3", **headers}

        with host.client() as proxy_conn, host.client(address="127.0.0.2") as direct:
            for _ in range(2):
                got = proxy_conn.get("/api/v1/me", headers=via_proxy("203.0.113.5", **bad))
                assert got.status_code == 401
            _too_many(proxy_conn.get("/api/v1/me", headers=via_proxy("203.0.113.5", **right)))
            # Another client through the same proxy, and the proxy's own calls, go on.
            assert (
                proxy_conn.get("/api/v1/me", headers=via_proxy("203.0.113.6", **right)).status_code
                == 200
            )
            assert proxy_conn.get("/api/v1/me", headers=right).status_code == 200
            # The guesser cannot hide behind a claimed address (only the proxy's hop counts).
            spoof = {"X-Forwarded-For": "198.51.100.7, 203.0.113.5", **right}
            _too_many(proxy_conn.get("/api/v1/me", headers=spoof))
            # An address the host does not trust forwards nothing: its header is ignored.
            for _ in range(2):
                assert (
                    direct.get(
                        "/api/v1/me", headers={"X-Forwarded-For": "203.0.113.9", **bad}
                    ).status_code
                    == 401
                )
            _too_many(
                direct.get("/api/v1/me", headers={"X-Forwarded-For": "203.0.113.10", **right})
            )
            assert (
                proxy_conn.get("/api/v1/me", headers=via_proxy("203.0.113.9", **right)).status_code
                == 200
            )


@pytest.mark.parametrize(
    ("header", "client"),
    [
        ("203.0.113.5", "203.0.113.5"),
        ("1.2.3.4, 203.0.113.5, 10.0.0.1", "203.0.113.5"),
        ("10.0.0.2, 10.0.0.1", "10.0.0.2"),
        ("2001:db8::1", "2001:db8::1"),
        ("not-an-address, 10.0.0.1", None),
        ("", None),
    ],
)
def test_the_forwarded_client_is_the_rightmost_untrusted_hop(
    header: str, client: str | None
) -> None:
    assert forwarded_client(header, [ip_network("10.0.0.0/8")]) == client


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    for value, why in (("10.0.0.1", "must be a list"), (["10.0.0.300"], "not an address")):
        raw = {"game": "whist", "http": {"trusted_proxies": value}}
        with pytest.raises(ArenaError, match=f"http.trusted_proxies.*{why}"):
            check_competition(raw, "test", "cup")

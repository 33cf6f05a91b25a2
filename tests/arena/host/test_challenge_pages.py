"""A challenge's page passed through to a bridge that does not answer: one line, 502 while the
page still exists, the site's "Not found" once its match has ended, and the host serves on."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import httpx

from arena.host.challenges import Challenges
from tests.arena.host.serving import hosting


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class Pages:
    """The challenges' page lookup alone: ``secret``'s page on ``port`` for ``lookups`` looks."""

    def __init__(self, secret: str, port: int, lookups: int) -> None:
        self.secret, self.port, self.lookups = secret, port, lookups

    def page_port(self, secret: str) -> int | None:
        if secret != self.secret or self.lookups <= 0:
            return None
        self.lookups -= 1
        return self.port


def requests(client: httpx.Client) -> Iterator[httpx.Response]:
    """The page, its feed and an answer, one after another."""
    yield client.get("/play/s3cret/")
    yield client.get("/play/s3cret/feed")
    yield client.post("/play/s3cret/answer", json={"action": "AS"})


def one_line(r: httpx.Response) -> str:
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and "Traceback" not in detail
    return detail


def test_a_bridge_that_does_not_answer_gets_a_one_line_502(tmp_path: Path) -> None:
    pages = Pages("s3cret", dead_port(), lookups=1_000)
    with (
        hosting(tmp_path, challenges=cast(Challenges, pages)) as h,
        httpx.Client(base_url=h.url, timeout=30) as client,
    ):
        for r in requests(client):
            assert r.status_code == 502, r.text
            assert "did not answer" in one_line(r)
        assert client.get("/play/other/").status_code == 404
        assert client.get("/api/v1/leaderboard").status_code == 200


def test_a_page_gone_while_passed_through_is_404(tmp_path: Path) -> None:
    # Found at the first look, gone by the second: the match ended between the two.
    pages = Pages("s3cret", dead_port(), lookups=1)
    with (
        hosting(tmp_path, challenges=cast(Challenges, pages)) as h,
        httpx.Client(base_url=h.url, timeout=30) as client,
    ):
        for r in requests(client):
            assert r.status_code == 404, r.text
            assert "Traceback" not in r.text  # the site's "Not found" page
            pages.lookups = 1

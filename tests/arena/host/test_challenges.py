"""Challenges on a real host (``[challenges]``, docs/hosting.md): a signed-in author starts a
match against the ladder's newest version of a bot and plays it through the host's own address
(its page, its feed and its answers passed through to the seat's bridge), the match labelled
human everywhere, its record a normal one, the ladder's ratings untouched; the limits per author
(one at a time, so many a day) refuse with 429 and ``Retry-After``; bad requests in one line."""

from __future__ import annotations

import json
import shlex
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.cli.main import main
from arena.records.format import read_record
from tests.arena.host.processes import (
    GOOD_BOT,
    Host,
    competition_config,
    host_in,
    make_certificate,
)
from tests.arena.host.test_hosting_page import commands
from tests.waiting import wait_until

pytestmark = pytest.mark.host

CHALLENGES = "[challenges]\nenabled = true\nper_author_per_day = 2\nmove_ms = 20000\n"


def validated(h: Host, token: str, bot: str, code: bytes = GOOD_BOT) -> None:
    """``bot`` of ``code`` submitted by ``token``'s author, and on the ladder."""
    h.submit(token, bot, code + f"# {bot}\n".encode())
    with h.client() as api:

        def on_ladder() -> bool:
            bots = {b["name"]: b for b in api.get("/api/v1/bots").json()}
            versions = bots[bot]["versions"] if bot in bots else []
            return bool(versions) and versions[-1]["status"] == "validated"

        wait_until(on_ladder, 120, what=f"{bot} validated")


def play_through(url: str, verify: ssl.SSLContext | bool = True) -> int:
    """Play the person's seat at ``url`` (the host's address) to the end, first legal action
    each time, as the page would; how many decisions."""
    decisions = 0
    client = httpx.Client(timeout=60, verify=verify)
    with client, client.stream("GET", url + "feed") as feed:
        assert feed.status_code == 200
        for line in feed.iter_lines():
            if not line.startswith("data: "):
                continue
            message: dict[str, Any] = json.loads(line[6:])
            if message["type"] == "decision":
                decisions += 1
                answer = client.post(
                    url + "answer", json={"request_id": message["request_id"], "index": 0}
                )
                assert answer.status_code == 204, answer.text
            elif message["type"] == "end":
                return decisions
    raise AssertionError("the feed ended before the match")


def finished(api: httpx.Client, match_id: str) -> dict[str, Any] | None:
    """The challenge once stored as done."""
    c: dict[str, Any] = api.get(f"/api/v1/challenges/{match_id}").json()
    return c if c["state"] == "done" else None


def test_an_author_challenges_the_ladder_and_plays_through_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = host_in(tmp_path, "cup", CHALLENGES)
    with h.running():
        alice, bob = h.add_author("alice"), h.add_author("bob")
        validated(h, bob, "bobbot")
        with h.client() as anon, h.client(alice) as api:
            assert (
                anon.post("/api/v1/challenges", json={"opponents": ["bobbot"]}).status_code == 401
            )
            for body, status in (
                ({"opponents": ["nobot"]}, 404),
                ({"opponents": ["bobbot"], "seat": 4}, 422),
                ({"opponents": ["bobbot", "bobbot"]}, 422),
                ({"opponents": ["bobbot@9"]}, 404),
                ({"opponents": []}, 422),
                ({"opponents": ["bobbot"], "seat": "first"}, 422),
            ):
                r = api.post("/api/v1/challenges", json=body)
                assert r.status_code == status, r.text
                assert "\n" not in r.json()["detail"]
            r = api.post("/api/v1/challenges", json={"opponents": ["bobbot"], "seat": 1})
            assert r.status_code == 201, r.text
            started = r.json()
            match_id, url = started["match_id"], started["play_url"]
            assert url.startswith(h.url + "/play/") and started["state"] == "playing"
            assert started["human"] and started["phase"] == "challenge"
            assert started["seats"] == ["bobbot@1", "person:alice", "bobbot@1", "bobbot@1"]
            assert anon.get("/api/v1/challenges/challenge-none").status_code == 404
            # One at a time.
            again = api.post("/api/v1/challenges", json={"opponents": ["bobbot"]})
            assert again.status_code == 429 and int(again.headers["Retry-After"]) > 0
            assert "max_open_per_author" in again.json()["detail"]
            # The page through the host, with the bridge's policy.
            page = anon.get(url)
            assert page.status_code == 200
            assert "connect-src 'self'" in page.headers["content-security-policy"]
            assert anon.get(url.replace("/play/", "/play/x")).status_code == 404
            # Its URL again, to its author only.
            assert api.get(f"/api/v1/challenges/{match_id}").json()["play_url"] == url
            assert anon.get(f"/api/v1/challenges/{match_id}").json()["play_url"] is None
            assert play_through(url) > 0

            c = wait_until(lambda: finished(anon, match_id), 60, what="the challenge stored")
            assert c["human"] and not c["rated"] and c["ranks"] and c["record_available"]
            record = anon.get(f"/api/v1/challenges/{match_id}/record")
            assert record.status_code == 200
            path = tmp_path / "challenge.jsonl.gz"
            path.write_bytes(record.content)
            assert main(["replay", "verify", str(path)]) == 0
            names = read_record(path).header["seats"]
            assert [s["bot_name"] for s in names] == started["seats"]
            # A match like any other, labelled human: its body, its record, its page, exports.
            as_match = anon.get(f"/api/v1/matches/{match_id}").json()
            assert as_match["human"] and as_match["phase"] == "challenge"
            assert as_match["record_available"] and as_match["seats"] == started["seats"]
            same = anon.get(f"/api/v1/matches/{match_id}/record")
            assert same.status_code == 200 and same.content == record.content
            viewer = anon.get(f"/api/v1/matches/{match_id}/viewer")
            assert viewer.status_code == 200, viewer.text
            assert anon.get(f"/matches/{match_id}").status_code == 200
            exported = anon.get("/api/v1/export/matches.json", params={"human": True}).json()
            assert [(e["match_id"], e["human"]) for e in exported] == [(match_id, True)]
            rows = anon.get("/api/v1/export/matches.csv", params={"human": True}).text
            assert rows.splitlines()[0].endswith(",human") and rows.splitlines()[1].endswith(
                ",True"
            )
            listed = anon.get("/api/v1/challenges").json()
            assert [x["match_id"] for x in listed] == [match_id] and listed[0]["human"]
            # Not among the ladder's matches, not rated.
            assert all(m["match_id"] != match_id for m in anon.get("/api/v1/matches").json())
            # The day's second from the command line, which prints the page's URL.
            # hosting.md's commands as written (its bot's name for ours).
            start, listing = (
                shlex.split(c.split("#")[0].replace("mybot", "bobbot@1"))[1:]
                for c in commands("arena remote challenge ")
            )
            remote = ["--server", h.url, "--token", alice]
            capsys.readouterr()
            assert main([*start, *remote]) == 0
            printed = capsys.readouterr().out.splitlines()
            second_id = printed[0].split(":")[0]
            assert printed[1].startswith(f"play at {h.url}/play/")
            assert play_through(printed[1].removeprefix("play at ")) > 0
            wait_until(lambda: finished(anon, second_id), 60, what="stored")
            assert main([*listing, "--server", h.url]) == 0
            lines = capsys.readouterr().out.splitlines()
            assert [line.split()[:3] for line in lines] == [
                [second_id, "human", "done"],
                [match_id, "human", "done"],
            ]
            assert main(["remote", "match", match_id, "--server", h.url]) == 0
            assert "a human match (challenge)" in capsys.readouterr().out
            # Never rated: the ladder's fit has no person in it.
            assert not anon.get("/api/v1/leaderboard").json()
            third = api.post("/api/v1/challenges", json={"opponents": ["bobbot"]})
            assert third.status_code == 429 and int(third.headers["Retry-After"]) > 3600
            assert "per_author_per_day" in third.json()["detail"]


def test_a_rated_challenge_puts_the_person_on_the_ladder_over_https(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config("cup", CHALLENGES + "rated = true\n"))
    h = Host(config, tmp_path / "cup", tls=make_certificate(tmp_path))
    with h.running():
        alice, bob = h.add_author("alice"), h.add_author("bob")
        validated(h, bob, "bobbot")
        with h.client() as anon, h.client(alice) as api:
            assert not anon.get("/api/v1/leaderboard").json()
            r = api.post("/api/v1/challenges", json={"opponents": ["bobbot"]})
            assert r.status_code == 201 and r.json()["rated"], r.text
            # The page through the host's TLS: the seat's bridge is behind it.
            assert r.json()["play_url"].startswith(f"https://127.0.0.1:{h.http_port}/play/")
            play_through(r.json()["play_url"], ssl.create_default_context(cafile=str(h.tls[0])))
            assert wait_until(lambda: finished(anon, r.json()["match_id"]), 60, what="stored")

            def rated() -> set[str] | None:
                rows = anon.get("/api/v1/leaderboard").json()
                return {row["ref"] for row in rows} or None

            assert wait_until(rated, 60, what="the refit") == {"person:alice", "bobbot@1"}


def test_a_person_who_never_answers_gets_the_seat_s_fault_rules(tmp_path: Path) -> None:
    h = host_in(tmp_path, "cup", "[challenges]\nenabled = true\nmove_ms = 1000\nbank_ms = 0\n")
    with h.running():
        alice, bob = h.add_author("alice"), h.add_author("bob")
        validated(h, bob, "bobbot")
        with h.client() as anon, h.client(alice) as api:
            r = api.post("/api/v1/challenges", json={"opponents": ["bobbot"], "seat": 3})
            assert r.status_code == 201, r.text
            c = wait_until(lambda: finished(anon, r.json()["match_id"]), 60, what="the forfeit")
            assert c["reason"] == "forfeit" and c["faults"]
            assert all(f["seat"] == 3 and f["kind"] == "timeout" for f in c["faults"])
            # Over: the page is gone, and the author may start another.
            page = r.json()["play_url"]
            wait_until(lambda: anon.get(page).status_code == 404, 30, what="the page gone")
            again = api.post("/api/v1/challenges", json={"opponents": ["bobbot"]})
            assert again.status_code == 201, again.text

"""What the host serves beside the API and the drawn pages: HTML 404 pages (the API's errors stay
JSON), a 404 for a bot or a match that does not exist, the game's rules, the ``.proto`` and a
starter bot; the starter bot, submitted as it comes to a real ``arena host``, is validated."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import httpx
import pytest

from arena.snapshots.archive import MANIFEST_NAME, read_manifest
from engine import Result
from tests.arena.host.processes import host_in
from tests.arena.host.serving import Host, hosting, validated_versions
from tests.waiting import wait_until

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")


def starter_members(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {
            m.name: tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            for m in tar.getmembers()
        }


@pytest.fixture
def host(tmp_path: Path) -> Host:
    with hosting(tmp_path) as h:
        store = h.store
        ids = validated_versions(store, ("a", "b"))
        store.create_unit("ladder", 1, tuple(ids), [("u1-r0", 0, (ids[0], ids[1]) * 2)])
        store.commit_match("u1-r0", WIN, [], None)
        yield h  # type: ignore[misc]


def test_unknown_pages_are_html_and_unknown_api_paths_json(host: Host) -> None:
    with httpx.Client(base_url=host.url) as c:
        for path, line in (
            ("/nowhere", "There is no page at /nowhere."),
            ("/bots/nobody", "No bot called nobody."),
            ("/matches/u9-r9", "No match u9-r9."),
            ("/static/nothing.js", "There is no page at /static/nothing.js."),
        ):
            r = c.get(path)
            assert r.status_code == 404, path
            assert r.headers["content-type"].startswith("text/html")
            assert f'<p class="error" role="alert">{line}</p>' in r.text
            assert '<a href="/leaderboard" id="home">' in r.text
            assert "default-src 'self'" in r.headers["content-security-policy"]
        # A name is text, never markup.
        r = c.get("/bots/<b>x</b>")
        assert r.status_code == 404 and "<b>x</b>" not in r.text and "&lt;b&gt;" in r.text
        for path in ("/api/v1/nowhere", "/api/v1/matches/u9-r9", "/api/nothing"):
            r = c.get(path)
            assert r.status_code == 404 and r.headers["content-type"] == "application/json"
            assert set(r.json()) == {"detail"}
        for path in ("/bots/a", "/matches/u1-r0", "/bots", "/rules", "/protocol"):
            assert c.get(path).status_code == 200, path


def test_the_rules_the_protocol_and_a_starter_bot(host: Host, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    with httpx.Client(base_url=host.url) as c:
        rules = c.get("/rules")
        assert "# Whist (`whist`)" in rules.text and "## Players" in rules.text
        assert "COPIED" not in rules.text and "Whist — referee decisions" in rules.text
        page = c.get("/protocol")
        assert "service Arena" in page.text and "rpc Play" in page.text
        proto = c.get("/arena.proto")
        assert proto.headers["content-type"].startswith("text/plain")
        assert proto.text == (root / "proto/cardarena/v1/arena.proto").read_text()
        starter = c.get("/starter.tar.gz")
        assert starter.headers["content-type"] == "application/gzip"
        assert "attachment" in starter.headers["content-disposition"]
    files = starter_members(starter.content)
    assert set(files) == {MANIFEST_NAME, "bot.py", "README.md"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    manifest = read_manifest(tmp_path)
    assert (manifest.command, manifest.runtime) == ("python3 bot.py", "python3")
    assert "(whist)" in files["bot.py"] and host.url in files["README.md"]
    compile(files["bot.py"], "bot.py", "exec")
    # Every page links them.
    for path in ("/leaderboard", "/nowhere", "/rules"):
        text = httpx.get(host.url + path).text
        for href in ('href="/rules"', 'href="/protocol"', 'href="/starter.tar.gz"'):
            assert href in text, (path, href)


@pytest.mark.slow
def test_the_starter_bot_is_validated_as_it_comes(tmp_path: Path) -> None:
    with host_in(tmp_path, "starter-cup").running() as host:
        token = host.add_author("newcomer")
        with host.client() as c:
            archive = c.get("/starter.tar.gz").content
        with host.client(token) as c:
            octet = {"Content-Type": "application/octet-stream"}
            r = c.put("/api/v1/bots/starter/versions", content=archive, headers=octet)
            assert r.status_code == 201, r.text
            version = r.json()["id"]

            def status() -> str:
                answer: str = c.get(f"/api/v1/versions/{version}").json()["status"]
                return answer

            wait_until(lambda: status() not in ("pending", "validating"), 180, what="validation")
            assert status() == "validated", c.get(f"/api/v1/versions/{version}/log").text

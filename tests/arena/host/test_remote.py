"""``arena remote`` against the real API (``arena.host.api.create_app``) served by hypercorn on
trio over real sockets, plain and TLS, with a real competition store: every answer a user reads,
and every refusal one line with exit status 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cardarena.messages import FaultInfo
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse

from arena.cli.main import main
from arena.host.apitypes import CrossCell
from arena.host.client import RemoteClient, RemoteError, pack_directory
from arena.host.ladder import Standings
from arena.layout import LOGS_DIR, RECORDS_DIR, seat_log_name
from arena.ratings import fit_ratings
from engine import Result
from tests.arena.host.image_tarballs import image_tarball
from tests.arena.host.serving import ADMIN, INVITE, Host, hosting, serving
from tests.arena.run_arena import ARENA, arena_error
from tests.helpers import free_port

WIN_FIRST = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")
WIN_SECOND = Result((0, 1, 0, 1), (2, 1, 2, 1), summary="E-W")
TOKEN_ENVS = ("ARENA_SERVER", "ARENA_API_TOKEN", "ARENA_ADMIN_TOKEN")


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    for name in TOKEN_ENVS:
        monkeypatch.delenv(name, raising=False)
    with hosting(tmp_path, invite=True) as h:
        monkeypatch.setenv("ARENA_SERVER", h.url)
        yield h


# --- arena remote, in this process ------------------------------------------------------------


@dataclass
class Remote:
    """``arena remote …`` as ``main`` runs it, output captured."""

    capsys: pytest.CaptureFixture[str]

    def run(self, *args: str) -> tuple[int, str, str]:
        code = main(["remote", *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def ok(self, *args: str) -> str:
        code, out, err = self.run(*args)
        assert (code, err) == (0, ""), err
        return out

    def json(self, *args: str) -> object:
        return json.loads(self.ok(*args, "--json"))

    def refused(self, *args: str) -> str:
        """The one line of a refusal (exit status 2, nothing on stdout), after ``arena: error:``."""
        code, out, err = self.run(*args)
        assert code == 2, (code, out, err)
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: "), err
        return lines[0].removeprefix("arena: error: ")


@pytest.fixture
def remote(capsys: pytest.CaptureFixture[str]) -> Remote:
    return Remote(capsys)


def add_author(remote: Remote, name: str) -> str:
    """A new author's token, through ``arena remote admin add-author``."""
    answer = remote.json("admin", "add-author", name, "--token", ADMIN)
    assert isinstance(answer, dict)
    assert answer["author"]["name"] == name
    token = answer["token"]
    assert isinstance(token, str)
    return token


def bot_dir(where: Path, text: str = "print('hello')\n") -> Path:
    where.mkdir(parents=True)
    (where / "cardarena.toml").write_text('command = "python3 bot.py"\nruntime = "python3"\n')
    (where / "bot.py").write_text(text)
    return where


def members(archive: bytes) -> dict[str, bytes | None]:
    """An archive's members: a file's bytes, ``None`` for a directory."""
    out: dict[str, bytes | None] = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for m in tar.getmembers():
            f = tar.extractfile(m)
            out[m.name] = None if f is None else f.read()
    return out


# --- the tests --------------------------------------------------------------------------------


def test_an_author_submits_a_directory_and_manages_the_version(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    token = add_author(remote, "alice")
    source = bot_dir(tmp_path / "alpha")
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"junk")
    (source / ".git").mkdir()
    (source / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (source / "node_modules" / "dep").mkdir(parents=True)
    (source / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")

    out = remote.ok("submit", "alpha", str(source), "--token", token)
    lines = out.splitlines()
    assert lines[0] == "submitted alpha@1 (version 1): pending"
    sha = lines[1].removeprefix("sha256: ")
    assert len(sha) == 64 and host.store.version(1).sha256 == sha

    bots = remote.ok("bots")
    assert "alpha@1" in bots and "alice" in bots and "pending" in bots
    me = remote.json("me", "--token", token)
    assert isinstance(me, dict)
    assert me["author"]["name"] == "alice"
    assert [v["ref"] for b in me["bots"] for v in b["versions"]] == ["alpha@1"]
    assert remote.ok("me", "--token", token).startswith("author alice (id 1, since ")
    assert remote.ok("version", "1").splitlines()[0] == "alpha@1 (version 1): pending"

    # The snapshot holds what was packed: no .git or __pycache__, node_modules kept.
    archive = tmp_path / "got.tar.gz"
    remote.ok("archive", "1", "-o", str(archive), "--token", token)
    files = {k: v for k, v in members(archive.read_bytes()).items() if v is not None}
    assert files == {
        "cardarena.toml": (source / "cardarena.toml").read_bytes(),
        "bot.py": b"print('hello')\n",
        "node_modules/dep/index.js": b"module.exports = 1\n",
    }

    assert remote.ok("retire", "1", "--token", token) == "retired alpha@1 (version 1)\n"
    version = remote.json("version", "1", "--token", token)
    assert isinstance(version, dict)
    assert (version["status"], version["reason"]) == ("retired", "retired by its author")
    # A stranger sees the status, not the reason.
    stranger = remote.json("version", "1")
    assert isinstance(stranger, dict)
    assert (stranger["status"], stranger["reason"]) == ("retired", None)
    assert remote.refused("retire", "1", "--token", token).startswith("HTTP 409: version alpha@1")


def test_an_author_downloads_the_validation_records_of_their_version(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    alice, bob = add_author(remote, "alice"), add_author(remote, "bob")
    remote.ok("submit", "alpha", str(bot_dir(tmp_path / "alpha")), "--token", alice)
    assert remote.ok("validation", "1", "--token", alice) == (
        "version 1 has no validation records (arena remote log 1 says why)\n"
    )
    (host.directory / RECORDS_DIR).mkdir(exist_ok=True)
    (host.directory / RECORDS_DIR / "validate-1-1.jsonl.gz").write_bytes(b"\x1f\x8b a record")
    out = tmp_path / "out"
    out.mkdir()
    assert remote.ok("validation", "1", "-o", str(out), "--token", alice) == (
        f"wrote {out / 'validate-1-1.jsonl.gz'} (11 bytes)\n"
    )
    assert (out / "validate-1-1.jsonl.gz").read_bytes() == b"\x1f\x8b a record"
    assert remote.refused("validation", "1", "--token", bob) == (
        "HTTP 403: version alpha@1 is not yours"
    )
    client = RemoteClient(host.url, alice)
    with pytest.raises(RemoteError, match=r"^HTTP 404: version alpha@1 has no validation match"):
        client.validation_record(1, "u1-r0")


def test_a_rotated_token_is_refused_in_one_line(host: Host, remote: Remote) -> None:
    old = add_author(remote, "alice")
    out = remote.ok("token", "rotate", "--token", old)
    new = out.splitlines()[0].removeprefix("token: ")
    assert new.startswith("cau_") and new != old
    line = remote.refused("me", "--token", old)
    assert line.startswith("HTTP 401: an author's API token is required")
    assert "refused" in line
    assert remote.ok("me", "--token", new).startswith("author alice")


def test_tokens_come_from_the_environment(
    host: Host, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("ARENA_API_TOKEN", "cau_not-the-admin-token")
    token = remote.json("admin", "add-author", "alice")
    assert isinstance(token, dict)
    monkeypatch.setenv("ARENA_API_TOKEN", token["token"])
    assert remote.ok("me").startswith("author alice")
    monkeypatch.delenv("ARENA_API_TOKEN")
    assert "ARENA_API_TOKEN" in remote.refused("me")
    monkeypatch.delenv("ARENA_SERVER")
    assert "--server" in remote.refused("status")


def test_another_authors_log_and_archive_are_forbidden(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    alice = add_author(remote, "alice")
    bob = add_author(remote, "bob")
    remote.ok("submit", "alpha", str(bot_dir(tmp_path / "alpha")), "--token", alice)
    assert remote.refused("log", "1", "--token", bob) == "HTTP 403: version alpha@1 is not yours"
    out = str(tmp_path / "x.tar.gz")
    line = remote.refused("archive", "1", "-o", out, "--token", bob)
    assert line == "HTTP 403: version alpha@1 is not yours"
    assert not Path(out).exists()
    # Its author: no validation ran yet, so no log.
    assert remote.refused("log", "1", "--token", alice) == (
        "HTTP 404: version alpha@1 has no validation log"
    )
    line = remote.refused("submit", "alpha", str(tmp_path / "alpha"), "--token", bob)
    assert line == "HTTP 403: bot name 'alpha' belongs to another author"


def test_a_hostile_archive_is_refused_naming_the_member(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    token = add_author(remote, "alice")
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        data = b"owned\n"
        info = tarfile.TarInfo("../x")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    line = remote.refused("submit", "evil", str(evil), "--token", token)
    assert line == 'HTTP 400: archive member "../x": a path outside the bot\'s directory'
    assert not (tmp_path / "x").exists() and not (host.directory / "x").exists()
    assert host.store.versions() == []
    garbage = tmp_path / "notes.txt"
    garbage.write_text("hello\n")
    assert remote.refused("submit", "evil", str(garbage), "--token", token).startswith(
        "HTTP 400: not a tar or zip archive"
    )


def test_an_image_tarball_is_refused_where_the_host_takes_no_images(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    token = add_author(remote, "alice")
    tarball = tmp_path / "bot-image.tar"
    tarball.write_bytes(image_tarball())
    line = remote.refused("submit", "imaged", str(tarball), "--token", token)
    assert line == (
        "HTTP 400: this competition takes archives of source only, not Docker image tarballs "
        "(its host has not set submissions.allow_images)"
    )
    assert host.store.versions() == []


def test_an_image_submission_without_a_docker_engine_is_the_hosts_problem(
    tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine went away after the host started: 503, one line, no version made.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    for name in TOKEN_ENVS:
        monkeypatch.delenv(name, raising=False)
    with hosting(tmp_path, images=True) as h:
        monkeypatch.setenv("ARENA_SERVER", h.url)
        token = add_author(remote, "alice")
        tarball = tmp_path / "bot-image.tar"
        tarball.write_bytes(image_tarball())
        line = remote.refused("submit", "imaged", str(tarball), "--token", token)
        assert line.startswith("HTTP 503: no Docker engine is reachable at unix://"), line
        assert h.store.versions() == []
        # A source archive still goes in.
        remote.ok(
            "submit", "plain", str(bot_dir(tmp_path / "plain")), "--token", token, "--server", h.url
        )
        assert [v.kind for v in h.store.versions()] == ["archive"]


def test_a_directory_that_cannot_be_packed_is_refused_before_any_upload(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    token = add_author(remote, "alice")
    linked = bot_dir(tmp_path / "linked")
    (linked / "data").symlink_to("/etc/passwd")
    assert "a symbolic link" in remote.refused("submit", "b", str(linked), "--token", token)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "bot.py").write_text("")
    assert "has no cardarena.toml" in remote.refused("submit", "b", str(bare), "--token", token)
    broken = bot_dir(tmp_path / "broken")
    (broken / "cardarena.toml").write_text("command = \n")
    assert "not valid TOML" in remote.refused("submit", "b", str(broken), "--token", token)
    missing = str(tmp_path / "nowhere")
    assert "no such directory" in remote.refused("submit", "b", missing, "--token", token)
    assert host.store.versions() == []


def test_packing_is_deterministic_and_keeps_the_executable_bit(tmp_path: Path) -> None:
    source = bot_dir(tmp_path / "b")
    (source / "run").write_text("#!/bin/sh\n")
    (source / "run").chmod(0o755)
    assert pack_directory(source) == pack_directory(source)
    with tarfile.open(fileobj=io.BytesIO(pack_directory(source))) as tar:
        modes = {m.name: (m.mode, m.mtime, m.uid, m.uname) for m in tar.getmembers()}
    assert modes == {
        "bot.py": (0o644, 0, 0, ""),
        "cardarena.toml": (0o644, 0, 0, ""),
        "run": (0o755, 0, 0, ""),
    }


def test_live_version_and_registration(host: Host, remote: Remote) -> None:
    out = remote.ok("register", "carol", "--invite", INVITE)
    token = out.splitlines()[1].removeprefix("token: ")
    assert out.startswith("author carol (id 1)")
    assert remote.refused("register", "dave", "--invite", "wrong-code") == (
        "HTTP 403: wrong invite code"
    )
    out = remote.ok("live", "gamma", "--token", token)
    lines = out.splitlines()
    assert lines[0] == "live version gamma@1 (version 1): pending"
    live_token = lines[1].removeprefix("token: ")
    assert live_token.startswith("cal_")
    assert f"ARENA_TOKEN={live_token}" in out and "ARENA_ADDRESS=127.0.0.1:" in out
    assert host.store.version_for_live_token(live_token) is not None


def test_the_admin_steers_the_ladder(host: Host, remote: Remote) -> None:
    out = remote.ok("admin", "ladder", "--pause", "--rate", "6", "--token", ADMIN)
    assert "ladder: paused, pace: 6 units per minute" in out
    assert host.store.ladder_state() == "paused"
    status = remote.json("status")
    assert isinstance(status, dict)
    assert (status["state"], status["units_per_minute"], status["game"]) == ("paused", 6.0, "whist")
    assert remote.refused("admin", "ladder", "--resume", "--token", "wrong") == (
        "HTTP 403: the host's admin token is required"
    )
    # A refused request changes nothing, neither the state nor the pace.
    line = remote.refused("admin", "ladder", "--resume", "--rate", "5000", "--token", ADMIN)
    assert line.startswith("HTTP 400: units_per_minute: must be between 0 and 1000")
    assert host.store.ladder_state() == "paused"
    remote.ok("admin", "ladder", "--close", "--token", ADMIN)
    line = remote.refused("admin", "ladder", "--resume", "--rate", "3", "--token", ADMIN)
    assert line == "HTTP 409: the ladder is closed; it cannot become running"
    assert host.store.units_per_minute() == 6.0
    assert "ladder: closed" in remote.ok("status")


@dataclass
class Played:
    """Two authors' versions and the two rotations of one ladder unit between them."""

    alice: str
    bob: str
    unit: int
    record: bytes


def play_a_unit(host: Host, remote: Remote, tmp_path: Path, *, finish: bool = True) -> Played:
    """alpha@1 (alice) and beta@1 (bob), validated; unit 1's first rotation stored (alpha won,
    with a record and alpha's seat log), and with ``finish`` its second (alpha won again, beta
    charged a timeout)."""
    alice, bob = add_author(remote, "alice"), add_author(remote, "bob")
    remote.ok("submit", "alpha", str(bot_dir(tmp_path / "alpha")), "--token", alice)
    remote.ok("submit", "beta", str(bot_dir(tmp_path / "beta", "pass\n")), "--token", bob)
    store = host.store
    for v in (1, 2):
        store.set_status(v, "validating")
        store.set_status(v, "validated")
    unit = store.create_unit(
        "ladder", 1, [1, 2], [("u1-r0", 0, (1, 2, 1, 2)), ("u1-r1", 1, (2, 1, 2, 1))]
    )
    (host.directory / RECORDS_DIR).mkdir(exist_ok=True)
    (host.directory / LOGS_DIR).mkdir(exist_ok=True)
    record = b"\x1f\x8b a record"
    (host.directory / RECORDS_DIR / "u1-r0.jsonl.gz").write_bytes(record)
    (host.directory / LOGS_DIR / seat_log_name("u1-r0", 0)).write_text("alpha thinks\n")
    store.commit_match("u1-r0", WIN_FIRST, [], f"{RECORDS_DIR}/u1-r0.jsonl.gz")
    if finish:
        store.commit_match("u1-r1", WIN_SECOND, [FaultInfo(1, "timeout", "")], None)
        assert store.unit(unit).state == "done"
    return Played(alice, bob, unit, record)


def test_matches_records_and_seat_logs(host: Host, remote: Remote, tmp_path: Path) -> None:
    played = play_a_unit(host, remote, tmp_path, finish=False)
    alice, bob = played.alice, played.bob
    table = remote.ok("matches").splitlines()
    assert table[0].split() == ["match", "phase", "seats", "result", "record", "finished"]
    assert table[1].split()[:6] == ["u1-r0", "ladder", "alpha@1", "beta@1", "alpha@1", "beta@1"]
    assert "later" in table[1]
    line = remote.refused("record", "u1-r0", "-o", str(tmp_path))
    assert line == "HTTP 409: the record is published once every rotation of its deal is played"
    # The viewer's document (the match page's replay) on the same terms.
    with httpx.Client(base_url=host.url) as web:
        early = web.get("/api/v1/matches/u1-r0/viewer")
        assert early.status_code == 409 and "every rotation" in early.json()["detail"]
    assert remote.ok("logs", "u1-r0", "0", "--token", alice) == "alpha thinks\n"
    assert remote.refused("logs", "u1-r0", "0", "--token", bob) == (
        "HTTP 403: seat 0 of u1-r0 is not your bot's"
    )
    assert remote.refused("logs", "u1-r0", "7", "--token", bob) == (
        "HTTP 404: match u1-r0 has no seat 7"
    )

    host.store.commit_match("u1-r1", WIN_SECOND, [FaultInfo(1, "timeout", "")], None)
    assert host.store.unit(played.unit).state == "done"
    with httpx.Client(base_url=host.url) as web:
        # Published now, but not a real record: one line, no server error.
        broken = web.get("/api/v1/matches/u1-r0/viewer")
        assert broken.status_code == 404 and "cannot be shown" in broken.json()["detail"]
    out = remote.ok("record", "u1-r0", "-o", str(tmp_path))
    assert out.startswith(f"wrote {tmp_path / 'u1-r0.jsonl.gz'} (")
    assert (tmp_path / "u1-r0.jsonl.gz").read_bytes() == played.record
    found = remote.json("matches", "--version", "2", "--phase", "ladder", "--limit", "1")
    assert isinstance(found, list)
    assert [m["match_id"] for m in found] == ["u1-r1"]
    assert "fault: seat 1 timeout" in remote.ok("match", "u1-r1")
    line = remote.refused("match", "u9-r0")
    assert line.startswith("HTTP 404: ") and "'u9-r0'" in line
    assert remote.refused("matches", "--version", "99") == "HTTP 404: no version 99"


def test_the_leaderboard_and_head_to_head(host: Host, remote: Remote, tmp_path: Path) -> None:
    played = play_a_unit(host, remote, tmp_path)
    store = host.store
    assert remote.ok("leaderboard") == "no rated versions in the ladder yet\n"
    # Two matches of two versions each: two matches played, not four.
    status = remote.json("status")
    assert isinstance(status, dict) and status["matches_played"] == 2
    empty = fit_ratings([])
    host.standings = Standings(fit_ratings(store.rating_entries("ladder")), empty)
    rows = remote.ok("leaderboard").splitlines()
    assert rows[0].split() == ["rank", "bot", "author", "Elo", "matches", "score"]
    assert [r.split()[:3] for r in rows[1:]] == [["1", "alpha@1", "alice"], ["2", "beta@1", "bob"]]
    assert "±" in rows[1]
    # Two matches each: both provisional (the default rule wants 10), marked as such.
    assert all(r.endswith("provisional") for r in rows[1:])
    assert "fewer than 10 rated matches" in remote.ok("status")
    board = remote.json("leaderboard", "--phase", "final")
    assert board == []
    # A newer beta, validated: beta's line of the per-bot board is beta@2 (unrated yet), so
    # only alpha@1 stays; per version, beta@1 keeps its line.
    beta2 = str(bot_dir(tmp_path / "beta2", "pass  \n"))
    remote.ok("submit", "beta", beta2, "--token", played.bob)
    store.set_status(3, "validating")
    store.set_status(3, "validated")
    latest = remote.json("leaderboard", "--latest")
    assert isinstance(latest, list) and [r["ref"] for r in latest] == ["alpha@1"]
    assert [r["ref"] for r in remote.json("leaderboard")] == ["alpha@1", "beta@1"]  # type: ignore[union-attr]
    # Alpha won both rotations (north-south in the first, east-west in the second).
    assert remote.json("head-to-head", "1") == [
        {"opponent": "beta@1", "matches": 2, "wins": 2, "losses": 0, "draws": 0}
    ]
    assert remote.ok("head-to-head", "2").split()[:6] == [
        "alpha@1",
        "2",
        "matches:",
        "0",
        "won,",
        "2",
    ]
    # A retired version leaves the ranking; --all lists it again, marked.
    remote.ok("retire", "1", "--token", played.alice)
    assert [(r.rank, r.ref) for r in RemoteClient(host.url).leaderboard()] == [(1, "beta@1")]
    every = remote.ok("leaderboard", "--all").splitlines()[1:]
    assert [r.split()[:2] for r in every] == [["1", "alpha@1"], ["2", "beta@1"]]
    assert every[0].endswith("provisional  retired") and every[1].endswith("provisional")


def test_the_cross_table_and_the_rating_history(host: Host, remote: Remote, tmp_path: Path) -> None:
    play_a_unit(host, remote, tmp_path)
    store = host.store
    host.standings = Standings(fit_ratings(store.rating_entries("ladder")), fit_ratings([]))
    # The web pages' cross-table and superiority, and the rating history the ladder keeps.
    client = RemoteClient(host.url)
    cross = client.cross_table()
    assert cross.versions == ["alpha@1", "beta@1"]
    assert cross.cells == [
        CrossCell(row="alpha@1", column="beta@1", matches=2, wins=2, losses=0, draws=0),
        CrossCell(row="beta@1", column="alpha@1", matches=2, wins=0, losses=2, draws=0),
    ]
    los = {(c.row, c.column): c.p for c in cross.superiority}
    assert los[("alpha@1", "beta@1")] > 0.5 > los[("beta@1", "alpha@1")]
    assert client.rating_history() == []
    assert store.record_ratings("ladder", host.standings.ladder)
    (point,) = client.rating_history()
    assert point.matches == 2
    assert [r.ref for r in point.ratings] == ["alpha@1", "beta@1"]
    assert point.ratings[0].elo > point.ratings[1].elo


def test_closing_freezes_submissions_and_the_final_is_a_state(
    host: Host, remote: Remote, tmp_path: Path
) -> None:
    played = play_a_unit(host, remote, tmp_path)
    store = host.store
    host.standings = Standings(fit_ratings(store.rating_entries("ladder")), fit_ratings([]))
    # Closed: the versions are frozen for the final; nothing more comes in.
    remote.ok("admin", "ladder", "--close", "--token", ADMIN)
    gamma = str(bot_dir(tmp_path / "gamma"))
    line = remote.refused("submit", "gamma", gamma, "--token", played.alice)
    assert line == "HTTP 409: the competition is closed: no more submissions"
    # The final as a state: playing while a unit of it is pending, then finished, its winner
    # named (status, the page's source, and arena remote status).
    client = RemoteClient(host.url)
    assert client.status().final == "not started"
    store.create_unit("final", 3, [1, 2], [("f9-r0", 0, (2, 1, 2, 1))])
    assert (client.status().final, client.status().final_winners) == ("playing", [])
    store.commit_match("f9-r0", WIN_FIRST, [], None)
    host.standings = Standings(host.standings.ladder, fit_ratings(store.rating_entries("final")))
    assert (client.status().final, client.status().final_winners) == ("finished", ["beta@1"])
    assert "final: finished, won by beta@1" in remote.ok("status")


def test_errors_without_a_server(remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TOKEN_ENVS:
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    line = remote.refused("status", "--server", f"http://127.0.0.1:{port}")
    assert line == f"cannot reach http://127.0.0.1:{port}: connection refused"
    assert "http:// or https://" in remote.refused("status", "--server", "127.0.0.1:80")
    assert "--cafile is for an https:// server" in remote.refused(
        "status", "--server", "http://127.0.0.1:1", "--cafile", "x.pem"
    )


def test_an_http_error_without_the_api_s_json_still_reads_in_one_line(host: Host) -> None:
    client = RemoteClient(host.url + "/elsewhere")
    with pytest.raises(RemoteError, match=r"^HTTP 404: Not Found$"):
        client.status()
    # A trailing /api/v1 or / is accepted as the same server.
    assert RemoteClient(host.url + "/api/v1/").status().name == "cup"


def test_an_answer_that_is_not_the_api_s_model_is_refused_in_one_line(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client reads each answer as the server's own model (arena.host.apitypes).
    impostor = FastAPI()

    @impostor.get("/api/v1/status")
    def status() -> dict[str, object]:
        return {"name": "cup", "game": "whist", "players": "four"}

    @impostor.get("/api/v1/bots")
    def bots() -> PlainTextResponse:
        return PlainTextResponse("<html>a proxy's page</html>")

    with serving(impostor) as url:
        monkeypatch.setenv("ARENA_SERVER", url)
        assert remote.refused("status") == (
            f"{url} answered GET /status with a body this client does not understand (players: "
            "Input should be a valid integer, unable to parse string as an integer); is it a "
            "Card Arena host of this version?"
        )
        assert remote.refused("bots") == (
            f"{url} answered GET /bots with something other than the API's JSON: is it a Card "
            "Arena host?"
        )


# --- TLS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-keyout", str(key), "-out", str(cert)),
            *("-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture
def tls_host(tmp_path: Path, certificate: tuple[Path, Path]) -> Iterator[Host]:
    with hosting(tmp_path, tls=certificate) as h:
        assert h.url.startswith("https://127.0.0.1:")
        yield h


def test_tls_with_the_hosts_certificate(
    tls_host: Host, remote: Remote, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in TOKEN_ENVS:
        monkeypatch.delenv(name, raising=False)
    cert = str(certificate[0])
    out = remote.ok("status", "--server", tls_host.url, "--cafile", cert)
    assert out.startswith("cup: whist, 4 players")
    line = remote.refused("status", "--server", tls_host.url)
    assert line.startswith(f"cannot reach {tls_host.url}: its TLS certificate failed verification")
    assert "certificate" in line and "--cafile" in line
    # Plain HTTP to a TLS port, and a PEM that is no certificate.
    plain = tls_host.url.replace("https:", "http:")
    assert remote.refused("status", "--server", plain).startswith(f"cannot reach {plain}: ")
    key = str(certificate[1])
    assert "not a PEM certificate" in remote.refused(
        "status", "--server", tls_host.url, "--cafile", key
    )


def test_arena_resolve_connects_elsewhere_and_tls_still_checks_the_name(
    tls_host: Host, remote: Remote, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in TOKEN_ENVS:
        monkeypatch.delenv(name, raising=False)
    port = tls_host.url.rsplit(":", 1)[1]
    cert = str(certificate[0])
    # localhost:9 leads nowhere; mapped to the host, its certificate (naming localhost) fits.
    monkeypatch.setenv("ARENA_RESOLVE", f"localhost:9:127.0.0.1:{port}")
    out = remote.ok("status", "--server", "https://localhost:9", "--cafile", cert)
    assert out.startswith("cup: whist, 4 players")
    # A name the certificate does not carry is refused, wherever it is connected to.
    monkeypatch.setenv("ARENA_RESOLVE", f"other.example:443:127.0.0.1:{port}")
    line = remote.refused("status", "--server", "https://other.example", "--cafile", cert)
    assert "failed verification" in line and "other.example" in line
    monkeypatch.setenv("ARENA_RESOLVE", "other.example:443")
    assert remote.refused("status", "--server", "https://other.example") == (
        "ARENA_RESOLVE: 'other.example:443' is not NAME:PORT:ADDRESS[:PORT] "
        "(arena.example.org:8443:127.0.0.1:18443)"
    )


def test_arena_resolve_serves_a_plain_http_host_too(
    host: Host, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = host.url.rsplit(":", 1)[1]
    monkeypatch.setenv("ARENA_RESOLVE", f"arena.test:80:127.0.0.1:{port}")
    assert remote.ok("status", "--server", "http://arena.test").startswith("cup: whist")
    # Only the name it maps: any other still resolves as it would.
    monkeypatch.setenv("ARENA_RESOLVE", f"other.test:80:127.0.0.1:{port}")
    assert remote.refused("status", "--server", "http://arena.test").startswith(
        "cannot reach http://arena.test: "
    )


def test_a_certificate_named_in_the_environment_is_named_so_in_its_error(
    remote: Remote, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ARENA_CA_CERT", str(tmp_path / "missing.pem"))
    line = remote.refused("status", "--server", "https://127.0.0.1:1")
    assert line == f"$ARENA_CA_CERT {str(tmp_path / 'missing.pem')!r}: no such file"
    line = remote.refused("status", "--server", "https://127.0.0.1:1", "--cafile", "gone.pem")
    assert line == "--cafile 'gone.pem': no such file"


# --- as a user runs it: real processes -----------------------------------------------------------


@pytest.mark.slow
def test_a_session_in_processes(host: Host, tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    env = {"ARENA_SERVER": host.url, "ARENA_ADMIN_TOKEN": ADMIN}

    def arena(*args: str, extra: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            [ARENA, "remote", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, **env, **(extra or {})},
        )
        assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
        return proc.stdout

    added = json.loads(arena("admin", "add-author", "alice", "--json"))
    token = {"ARENA_API_TOKEN": added["token"]}
    out = arena("submit", "alpha", str(bot_dir(tmp_path / "alpha")), extra=token)
    assert out.startswith("submitted alpha@1 (version 1): pending")
    assert "alpha@1" in arena("me", extra=token)
    line = arena_error("remote", "status", "--server", f"http://127.0.0.1:{free_port()}")
    assert line.startswith("arena: error: cannot reach http://127.0.0.1:")
    (tmp_path / "tls").mkdir()
    with hosting(tmp_path / "tls", tls=certificate) as tls:
        line = arena_error("remote", "status", "--server", tls.url)
        assert "certificate" in line and "--cafile" in line

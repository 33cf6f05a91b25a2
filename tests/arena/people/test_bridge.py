"""A person's seat without a browser: ``arena play`` over its real arena and bots, its page's
feed read and its answers posted as the page does; the record verifies. And the command's
usage errors, each one line."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from arena.cli.main import main
from arena.records.format import read_record
from tests.arena.people.running import RULES, SHORT_WHIST, arena_play


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        ("--human", "0", "--bot", RULES): "with 1 --human, give 3 --bot; got 1",
        ("--human", "4", "--bot", RULES): "--human 4: whist with 4 players has seats 0 to 3",
        ("--human", "1", "--human", "1", "--bot", RULES, "--bot", RULES): "each seat once",
    }
    for args, message in cases.items():
        assert main(["play", "whist", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    with pytest.raises(SystemExit) as exit_:
        main(["play", "whist", "--human", "0", "--human-move-ms", "0"])
    assert exit_.value.code == 2
    assert "--move-ms" in capsys.readouterr().err


@pytest.mark.slow
def test_a_person_plays_a_whole_match_over_the_feed(tmp_path: Path) -> None:
    bots = ["--bot", RULES] * 3
    with arena_play("whist", ["--human", "1", *bots, *SHORT_WHIST, "--seed", "5"], tmp_path) as run:
        url = run.urls(1)[1]
        with httpx.Client(timeout=60) as client:
            page = client.get(url)
            assert (
                page.status_code == 200
                and "connect-src 'self'" in page.headers["content-security-policy"]
            )
            assert client.get(url.replace("/play/", "/play/x")).status_code == 404
            assert client.post(url + "answer", json={"request_id": 1}).status_code == 400
            decisions, stale = 0, None
            with client.stream("GET", url + "feed") as feed:
                for line in feed.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    message = json.loads(line[6:])
                    if message["type"] == "decision":
                        decisions += 1
                        step = message["step"]
                        # Only its own hand: the others' private parts are empty.
                        assert [bool(p) for p in step["private"]] == [False, True, False, False]
                        rid = message["request_id"]
                        answer = client.post(url + "answer", json={"request_id": rid, "index": 0})
                        assert answer.status_code == 204, answer.text
                        stale = rid
                    elif message["type"] == "end":
                        assert message["result"]["summary"]
                        break
            again = client.post(url + "answer", json={"request_id": stale, "index": 0})
            assert again.status_code == 409
        status, record = run.finish()
    assert status == 0, run.errors
    assert main(["replay", "verify", str(record)]) == 0
    entries = read_record(record).entries
    mine = [e for e in entries if e.get("type") == "decision" and e["seat"] == 1]
    assert len(mine) == decisions and not any(e["fallback"] for e in mine)

"""Results announced: once per subject (a restart does not announce again), in the log with the
winner, with a webhook delivery stored in the same transaction, POSTed signed to a real local
server and retried with backoff after a failure; ``[announce]``'s secret never in the config,
and its mistakes one line."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta
from pathlib import Path

import pytest
import trio

from arena.host.announce import AnnounceError, Announcer, read_secret, signature
from arena.host.config import CompetitionConfig, CompetitionConfigError, check_competition
from arena.host.seasons import Seasons, parse_time
from arena.host.store import CompetitionStore
from tests.arena.host.webhooks import Receiver
from tests.helpers import captured_logs, free_port
from tests.waiting import async_wait_until

SECRET = b"s3cret-s3cret"


def config(announce: dict[str, object] | None, **more: object) -> CompetitionConfig:
    raw: dict[str, object] = {"game": "whist", **more}
    if announce is not None:
        raw["announce"] = announce
    return check_competition(raw, "test", "cup")


def test_the_signature_is_github_style_hmac_sha256() -> None:
    body = b'{"kind": "season"}'
    expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    assert signature(SECRET, body) == f"sha256={expected}"


def test_a_result_is_announced_once_and_logged_with_its_winner(tmp_path: Path) -> None:
    cfg = config(None, seasons={"length_days": 1})
    with CompetitionStore(tmp_path / "cup", cfg) as store, captured_logs() as logs:
        announcer = Announcer(store, cfg)
        first = announcer.announce("final", "the final", ["a@1"], {"units": 3})
        assert first is not None
        assert announcer.announce("final", "the final", ["a@1"], {"units": 3}) is None
        assert store.deliveries() == []  # no webhook configured
        start = parse_time(store.current_season().starts)
        Seasons(store, cfg, announcer, lambda: start + timedelta(days=1, seconds=1)).check()
    events = [(e["event"], e.get("winner"), e.get("subject")) for e in logs]
    assert ("final finished", "a@1", "the final") in events
    assert ("season finished", None, "Season 1") in events


def test_a_delivery_is_retried_after_a_failure_and_signed(tmp_path: Path) -> None:
    receiver = Receiver(free_port(), SECRET, fail_first=1)
    cfg = config({"webhook_url": receiver.url, "secret_env": "CUP_WEBHOOK_SECRET"})
    secret = read_secret(cfg, tmp_path, {"CUP_WEBHOOK_SECRET": SECRET.decode()})
    receiver.start()
    try:
        with CompetitionStore(tmp_path / "cup", cfg) as store:
            announcer = Announcer(store, cfg, secret)
            announcer.announce("event", "spring knockout", ["a@1", "b@2"], {"rounds": 3})
            (pending,) = store.deliveries()
            assert pending.state == "pending"

            async def main() -> None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(announcer.deliver_forever)
                    # Until the store says sent: the receiver has the body before the sender
                    # hears its answer and writes that down.
                    await async_wait_until(
                        lambda: store.deliveries()[0].state == "sent", 30, what="a delivery"
                    )
                    nursery.cancel_scope.cancel()

            trio.run(main)
            (sent,) = store.deliveries()
            assert (sent.state, sent.attempts, sent.last_error) == ("sent", 2, "")
    finally:
        receiver.stop()
    (got,) = receiver.received
    assert got.valid and receiver.attempts == 2
    assert got.headers["X-Arena-Event"] == "event.finished"
    assert got.headers["X-Arena-Delivery"] == str(sent.id)
    assert got.body["winners"] == ["a@1", "b@2"] and got.body["detail"] == {"rounds": 3}
    assert json.dumps(got.body, sort_keys=True) == sent.body


def test_a_missing_secret_is_one_line(tmp_path: Path) -> None:
    cfg = config({"webhook_url": "https://example.org/hook", "secret_file": "hook.secret"})
    with pytest.raises(AnnounceError) as err:
        read_secret(cfg, tmp_path)
    assert "announce.secret_file: cannot read" in str(err.value) and "\n" not in str(err.value)
    env = config({"webhook_url": "https://example.org/hook", "secret_env": "NOT_SET_HERE"})
    with pytest.raises(AnnounceError, match=r"\$NOT_SET_HERE\) is empty"):
        read_secret(env, tmp_path, {})


@pytest.mark.parametrize(
    ("announce", "problem"),
    [
        ({"webhook_url": "ftp://x/y", "secret_env": "S"}, "announce.webhook_url: must be an http"),
        ({"webhook_url": "https://x/y"}, "give the webhook's secret as secret_file"),
        ({"webhook_url": "https://x/y", "secret_file": "../up"}, "announce.secret_file"),
        ({"webhook_url": "https://x/y", "secret": "hunter2"}, "announce.secret: unknown key"),
        ({"secret_env": "S"}, "announce.webhook_url: is needed"),
    ],
)
def test_a_wrong_announce_section_is_one_line(announce: dict[str, object], problem: str) -> None:
    with pytest.raises(CompetitionConfigError) as err:
        config(announce)
    assert problem in str(err.value) and "\n" not in str(err.value)

"""Results announced: the end of a season, of the final, of an event.

:meth:`Announcer.announce` keeps the result in the store once (``/status`` lists the latest, the
pages name the winner), says it in the log (``season finished``, ``winner=``), and with
``[announce] webhook_url`` stores a delivery of it in the same transaction. The host's delivery
task POSTs each pending delivery, its JSON body signed with HMAC-SHA256 in the
``X-Arena-Signature-256`` header (``sha256=`` and the hex digest, as GitHub's
``X-Hub-Signature-256``), retrying with backoff; a delivery pending when the host was killed is
sent after it starts again (at least once: a receiver tells repeats by ``X-Arena-Delivery``).
It runs on its own: a webhook that is down never holds the ladder up.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import structlog
import trio

from arena.errors import ArenaError
from arena.host.config import CompetitionConfig
from arena.host.store import Announced, CompetitionStore, Delivery
from arena.layout import PRIVATE_DIR
from arena.sqlite import now
from arena.version import arena_version

log = structlog.get_logger("arena.host.announce")

#: The headers of a delivery.
SIGNATURE_HEADER: Final = "X-Arena-Signature-256"
EVENT_HEADER: Final = "X-Arena-Event"
DELIVERY_HEADER: Final = "X-Arena-Delivery"
#: Seconds before a failed delivery is tried again, doubled after each failure up to an hour;
#: given up after :data:`DELIVERY_ATTEMPTS` (about a day).
RETRY_FIRST_S = 2.0
RETRY_MAX_S = 3600.0
DELIVERY_ATTEMPTS = 30
#: Seconds one POST may take; between looks for due deliveries.
POST_TIMEOUT_S = 10.0
DELIVERY_POLL_S = 1.0


class AnnounceError(ArenaError):
    """``[announce]`` cannot be used (its secret is missing); one line."""


def signature(secret: bytes, body: bytes) -> str:
    """The ``X-Arena-Signature-256`` header's value for ``body``: ``sha256=HEX``. A receiver
    computes the same over the raw body and compares with :func:`hmac.compare_digest`."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def read_secret(
    config: CompetitionConfig, directory: Path, environ: Mapping[str, str] = os.environ
) -> bytes | None:
    """The webhook's HMAC secret (``[announce]``'s file in ``DIR/private/``, or environment
    variable); ``None`` without a webhook. One line when it is missing or empty."""
    cfg = config.announce
    if cfg.webhook_url is None:
        return None
    if cfg.secret_file is not None:
        path = directory / PRIVATE_DIR / cfg.secret_file
        try:
            secret = path.read_text().strip()
        except OSError as err:
            raise AnnounceError(
                f"announce.secret_file: cannot read {path} ({err.strerror}): put the webhook's "
                "secret there (mode 0600)"
            ) from None
        where = str(path)
    else:
        assert cfg.secret_env is not None
        secret, where = environ.get(cfg.secret_env, "").strip(), f"${cfg.secret_env}"
    if not secret:
        raise AnnounceError(f"announce: the webhook's secret ({where}) is empty")
    return secret.encode()


class Announcer:
    """Announces results, and (with a webhook) delivers them."""

    def __init__(
        self, store: CompetitionStore, config: CompetitionConfig, secret: bytes | None = None
    ) -> None:
        self._store = store
        #: Where results are POSTed; ``None``: no webhook. ``secret`` (:func:`read_secret`) is
        #: needed only to deliver: an announcer without it stores deliveries for the host's.
        self.url = config.announce.webhook_url
        self._secret = secret or b""

    def announce(
        self, kind: str, subject: str, winners: Sequence[str], detail: Mapping[str, Any]
    ) -> Announced | None:
        """Announce that ``subject`` (a ``kind``: ``season``, ``final``, ``event``) ended, won by
        ``winners`` (``BOT@N``; several: tied; none: no winner); ``detail``: more, as JSON.
        Once per ``(kind, subject)``: ``None`` when it was announced before. Thread-safe."""
        result = self._store.add_result(kind, subject, winners, dict(detail), now(), self.url)
        if result is not None:
            scalars = {k: v for k, v in detail.items() if isinstance(v, int | float | str)}
            self.announced(kind, subject, winners, **scalars)
        return result

    def announced(self, kind: str, subject: str, winners: Sequence[str], **fields: Any) -> None:
        """Say in the log that a result was stored (by :meth:`announce`, or a roll-over)."""
        winner = " and ".join(winners) or None
        log.info(f"{kind} finished", subject=subject, winner=winner, **fields)

    async def deliver_forever(self) -> None:
        """Forever: POST each delivery as it falls due (those a previous run left first)."""
        while True:
            due = await trio.to_thread.run_sync(self._store.due_deliveries, now())
            for delivery in due:
                await self._attempt(delivery)
            await trio.sleep(DELIVERY_POLL_S)

    async def _attempt(self, delivery: Delivery) -> None:
        error = await trio.to_thread.run_sync(self._post, delivery)
        retry_at = None
        if error and delivery.attempts + 1 < DELIVERY_ATTEMPTS:
            pause = min(RETRY_FIRST_S * 2**delivery.attempts, RETRY_MAX_S)
            retry_at = (datetime.now(UTC) + timedelta(seconds=pause)).strftime(
                "%Y-%m-%dT%H:%M:%S.%f"
            )[:-3] + "Z"
        await trio.to_thread.run_sync(
            self._store.delivery_attempted, delivery.id, now(), error, retry_at
        )
        if not error:
            log.info("webhook delivered", delivery=delivery.id, url=delivery.url)
        elif retry_at is None:
            log.error("webhook given up", delivery=delivery.id, url=delivery.url, error=error)
        else:
            log.warning("webhook failed", delivery=delivery.id, error=error, retry_at=retry_at)

    def _post(self, delivery: Delivery) -> str:
        """One POST; ``""`` when the receiver answered 2xx, else why not (one line)."""
        body = delivery.body.encode()
        event = str(json.loads(body).get("event", ""))
        request = urllib.request.Request(
            delivery.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"card-arena/{arena_version()}",
                SIGNATURE_HEADER: signature(self._secret, body),
                EVENT_HEADER: event,
                DELIVERY_HEADER: str(delivery.id),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=POST_TIMEOUT_S) as response:
                response.read(65536)
            return ""
        except urllib.error.HTTPError as err:
            return f"HTTP {err.code}"
        except (OSError, ValueError) as err:
            return " ".join(str(getattr(err, "reason", err)).split())[:200] or type(err).__name__

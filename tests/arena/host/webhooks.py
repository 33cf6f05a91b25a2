"""A real local HTTP server that receives a host's webhook POSTs and checks their signatures as a
receiver would (docs/hosting.md, "Results and exports")."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: dict[str, Any]
    #: Whether ``X-Arena-Signature-256`` is the HMAC-SHA256 of the raw body with the secret.
    valid: bool


class Receiver:
    """Listens on ``port`` (127.0.0.1); answers 500 to its first ``fail_first`` POSTs, then 204."""

    def __init__(self, port: int, secret: bytes, fail_first: int = 0) -> None:
        self.port, self.secret, self.fail_left = port, secret, fail_first
        self.received: list[Received] = []
        self.attempts = 0
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                expected = "sha256=" + hmac.new(receiver.secret, raw, hashlib.sha256).hexdigest()
                given = self.headers.get("X-Arena-Signature-256", "")
                with receiver.lock:
                    receiver.attempts += 1
                    failing = receiver.fail_left > 0
                    receiver.fail_left -= 1 if failing else 0
                if failing:
                    self.send_response(500)
                    self.end_headers()
                    return
                receiver.received.append(
                    Received(
                        dict(self.headers.items()),
                        json.loads(raw),
                        hmac.compare_digest(expected, given),
                    )
                )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

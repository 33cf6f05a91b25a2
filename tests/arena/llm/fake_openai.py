"""A small OpenAI-compatible chat-completions server for the harness's tests: a real HTTP server
(the standard library's, in a thread, on a real socket) that answers from a script.

Each request takes the script's next mode, then ``default`` once the script is spent:

* ``legal``: a legal action, read from the prompt's list of legal actions (``N. text`` lines:
  the harness's ``--list-legal`` view), its number, chosen by the server's seeded generator;
* ``explain``: a sentence, then a legal action's number on the last line;
* ``nousage``: ``legal`` without ``usage`` (the harness estimates tokens);
* ``illegal``: an action no game offers (``play:ZZ``); ``unparsable``: a sentence naming none;
* ``slow``: ``legal`` after ``slow_s`` seconds;
* ``500``: HTTP 500; ``401``: HTTP 401 that echoes the Authorization header it was sent, after
  ``echo_pad`` dots (a careless server; the harness must not pass the key on);
* ``429``: HTTP 429 with ``Retry-After: retry_after`` (seconds; none when it is ``None``);
* ``malformed``: HTTP 200 with a body that is not JSON.

Every request is kept (``requests``: mode, headers, body) for the tests to read.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

#: A listed legal action in a view: ``3. play:QS``.
LISTED = re.compile(r"^\s*(\d+)[.)]\s+\S", re.M)


@dataclass(frozen=True)
class Seen:
    """One request: the mode it was answered in, its headers and its JSON body."""

    mode: str
    headers: dict[str, str]
    body: dict[str, Any]
    #: ``time.monotonic()`` when it came.
    at: float


class FakeOpenAI:
    """The server; use as a context manager (``url`` is its base URL, ``…/v1``)."""

    def __init__(
        self,
        script: Iterable[str] = (),
        default: str = "legal",
        *,
        seed: int = 0,
        slow_s: float = 2.0,
        retry_after: float | None = 1.0,
        echo_pad: int = 0,
    ) -> None:
        self.script = list(script)
        self.default = default
        self.slow_s = slow_s
        self.retry_after = retry_after
        self.echo_pad = echo_pad
        self.requests: list[Seen] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def modes(self) -> list[str]:
        with self._lock:
            return [seen.mode for seen in self.requests]

    def take(self, headers: dict[str, str], body: dict[str, Any]) -> tuple[str, str]:
        """The next mode, and a legal action's number for the ones that answer legally."""
        with self._lock:
            mode = self.script.pop(0) if self.script else self.default
            self.requests.append(Seen(mode, headers, body, time.monotonic()))
            view = next((m["content"] for m in body.get("messages", ()) if m["role"] == "user"), "")
            numbers = LISTED.findall(view)
            return mode, self._rng.choice(numbers) if numbers else "0"


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read ``requests``

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                body = {}
            mode, number = fake.take(dict(self.headers.items()), body)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(mode, number)  # (a client that gave up: ``slow``)

        def _answer(self, mode: str, number: str) -> None:
            if mode == "slow":
                time.sleep(fake.slow_s)
            if mode == "500":
                self._send(500, b'{"error": {"message": "internal error"}}')
            elif mode == "401":
                echo = self.headers.get("authorization", "")
                pad = "." * fake.echo_pad
                self._send(401, json.dumps({"error": f"bad key: {pad}{echo}"}).encode())
            elif mode == "429":
                wait = fake.retry_after
                extra = {} if wait is None else {"Retry-After": f"{wait:g}"}
                self._send(429, b'{"error": {"message": "slow down"}}', extra)
            elif mode == "malformed":
                self._send(200, b'{"choices": [{"message": ')
            else:
                self._send(200, json.dumps(_completion(mode, number)).encode())

        def _send(self, status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _completion(mode: str, number: str) -> dict[str, Any]:
    text = {
        "illegal": "play:ZZ",
        "unparsable": "I would rather not say what I play.",
        "explain": f"Let me think about the table.\n{number}",
    }.get(mode, number)
    out: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }
    if mode != "nousage":
        out["usage"] = {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}
    return out

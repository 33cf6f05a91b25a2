"""An OpenAI-compatible chat-completions client (httpx), with every failure one :class:`ChatError`.

The key is sent as a bearer token and nowhere else: it lives in the client's headers, and every
error's text is built here from what failed (never from a request, whose headers hold it) and
stripped of the key in case a server echoes it.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

#: Characters per token when a server reports no usage: the usual rule of thumb for English.

#: Kinds of :class:`ChatError`, as notes and counts name them.
FAULT_KINDS = ("timeout", "http", "rate_limit", "server_error", "refused", "malformed")


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer and what it cost."""

    text: str
    #: Tokens the server reported (``usage``), or ``None`` when it did not.
    prompt_tokens: int | None
    completion_tokens: int | None


class ChatError(Exception):
    """A request that gave no answer. ``kind`` is one of :data:`FAULT_KINDS`: ``timeout``,
    ``http`` (no response: refused connection, reset), ``rate_limit`` (429, with ``retry_after``
    in seconds when the server said), ``server_error`` (5xx), ``refused`` (any other status:
    a bad key, an unknown model; asking again would not help), ``malformed`` (no JSON, or no
    answer in it)."""

    def __init__(self, kind: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """Whether asking again may help."""
        return self.kind != "refused"


def completions_url(endpoint: str) -> str:
    """The chat-completions URL of ``endpoint``: a base URL (``…/v1``) gets
    ``/chat/completions``; a URL that already ends with it is used as it is."""
    url = endpoint.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` in seconds: a number of seconds or an HTTP date; ``None`` when absent
    or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ChatClient:
    """One endpoint and model; :meth:`complete` asks once."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        key: str | None,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.url = completions_url(endpoint)
        if httpx.URL(self.url).scheme not in ("http", "https") or not httpx.URL(self.url).host:
            raise ValueError(f"--endpoint must be an http:// or https:// URL; got {endpoint!r}")
        if key and not (key.isascii() and key.isprintable() and " " not in key):
            # Said without the key: a header error would quote it.
            raise ValueError("the API key has characters no HTTP header may carry")
        self.model = model
        self._key = key or ""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(headers=headers, follow_redirects=False)
        self._extra: dict[str, Any] = {}
        if temperature is not None:
            self._extra["temperature"] = temperature
        if max_tokens is not None:
            self._extra["max_tokens"] = max_tokens

    def close(self) -> None:
        self._http.close()

    def complete(self, messages: Sequence[Mapping[str, str]], timeout_s: float) -> Completion:
        """The model's answer to ``messages`` within ``timeout_s``; :class:`ChatError` else."""
        body = {"model": self.model, "messages": list(messages), **self._extra}
        try:
            response = self._http.post(self.url, json=body, timeout=httpx.Timeout(timeout_s))
        except httpx.TimeoutException:
            raise ChatError("timeout", f"no answer within {timeout_s:.1f} s") from None
        except httpx.HTTPError as err:
            raise ChatError("http", self._clean(f"{type(err).__name__}: {err}")) from None
        except Exception as err:  # anything else httpx raises: its name alone, nothing it quotes
            raise ChatError("http", type(err).__name__) from None
        status = response.status_code
        if status == 429:
            wait = retry_after_s(response.headers.get("retry-after"))
            raise ChatError("rate_limit", "HTTP 429", wait)
        if status >= 500:
            raise ChatError("server_error", f"HTTP {status}")
        if status != 200:
            # Cleaned whole, then cut: a cut through the key would leave part of it.
            raise ChatError("refused", f"HTTP {status}: {self._clean(response.text)[:120]}")
        return self._read(response.content)

    def _read(self, content: bytes) -> Completion:
        try:
            data = json.loads(content)
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            said = self._clean(repr(content))[:60]
            raise ChatError("malformed", f"not a chat completion: {said}") from None
        if not isinstance(text, str):
            raise ChatError("malformed", "the answer's content is not text")
        usage = data.get("usage") if isinstance(data, dict) else None
        return Completion(text, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))

    def _clean(self, text: str) -> str:
        """``text`` on one line without the key (a server may echo what it was sent)."""
        text = " ".join(text.split())
        return text.replace(self._key, "[key]") if self._key else text


def _count(usage: object, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else None

"""A client of the competition's HTTP API (:mod:`arena.host.api`), over the standard library's HTTP.

:class:`RemoteClient` has one method per endpoint; its answers are the API's JSON bodies as the
server's own models (:mod:`arena.host.apitypes`), checked as they are read. Every failure is a
:class:`RemoteError` of one line: ``HTTP 403: version alpha@1 is not yours`` (the API's
``detail``), ``cannot reach http://host:8080: connection refused``, or, for a certificate that
does not verify, the same with a hint to pass ``--cafile``. Redirects are not followed: the
token would go along to wherever they point.

:func:`pack_directory` makes the ``.tar.gz`` that :meth:`RemoteClient.submit_dir` uploads: a
bot's directory with its ``cardarena.toml``, without ``.git`` and ``__pycache__``.
"""

from __future__ import annotations

import functools
import gzip
import http.client
import io
import ipaddress
import json
import os
import socket
import ssl
import stat
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast

from cardarena.resolve import RESOLVE_ENV, Resolve, ResolveError, parse_resolve
from pydantic import TypeAdapter, ValidationError

from arena.errors import ArenaError
from arena.host.apitypes import (
    TOTAL_HEADER,
    AdminAuthor,
    AdminQueue,
    AnalysisOut,
    AuditOut,
    BotOut,
    ChallengeOut,
    CrossTable,
    EventDetail,
    EventOut,
    HeadToHead,
    HistoryPoint,
    LadderState,
    LeaderRow,
    LiveVersion,
    MatchOut,
    Me,
    NewToken,
    ParBoard,
    Phase,
    RotatedToken,
    SeasonDetail,
    SeasonEnd,
    SeasonOut,
    Status,
    Suspended,
    UnitOut,
    VersionOut,
)
from arena.snapshots.archive import MANIFEST_NAME, ArchiveError, read_manifest
from arena.version import arena_version

#: Where the API's routes start, below the server's URL.
API_PREFIX: Final = "/api/v1"
#: The server's URL and an author's API token, when not given as arguments.
SERVER_ENV: Final = "ARENA_SERVER"
TOKEN_ENV: Final = "ARENA_API_TOKEN"
#: The certificate to trust for a self-signed host, as a live bot reads it too (the SDK).
CA_ENV: Final = "ARENA_CA_CERT"
DEFAULT_TIMEOUT_S: Final = 30.0
#: Left out of a packed directory, at any depth: never part of a bot.
SKIPPED_NAMES: Final = frozenset({".git", "__pycache__"})
#: The largest archive packed or sent: the largest upload a host can allow
#: (``arena.host.config.MAX_UPLOAD_MIB``).
MAX_ARCHIVE_BYTES: Final = 4096 * 1024 * 1024
#: The longest ``detail`` quoted from an error body.
_MAX_DETAIL = 400

#: Each answer checked against its model, as the client reads it.
_STATUS: Final = TypeAdapter(Status)
_LEADER_ROWS: Final = TypeAdapter(list[LeaderRow])
_CROSS_TABLE: Final = TypeAdapter(CrossTable)
_HISTORY: Final = TypeAdapter(list[HistoryPoint])
_PAR: Final = TypeAdapter(ParBoard)
_BOTS: Final = TypeAdapter(list[BotOut])
_VERSION: Final = TypeAdapter(VersionOut)
_MATCHES: Final = TypeAdapter(list[MatchOut])
_MATCH: Final = TypeAdapter(MatchOut)
_NEW_TOKEN: Final = TypeAdapter(NewToken)
_ME: Final = TypeAdapter(Me)
_SEASONS: Final = TypeAdapter(list[SeasonOut])
_SEASON: Final = TypeAdapter(SeasonDetail)
_SEASON_END: Final = TypeAdapter(SeasonEnd)
_ROTATED: Final = TypeAdapter(RotatedToken)
_LIVE: Final = TypeAdapter(LiveVersion)
_HEAD_TO_HEAD: Final = TypeAdapter(list[HeadToHead])
_IDS: Final = TypeAdapter(list[str])


class RemoteError(ArenaError):
    """A request failed; one line saying why (the server's words for an HTTP error)."""


# --- the client ---------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is, not followed with the token."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _MappedHTTPConnection(http.client.HTTPConnection):
    """A connection to ``to`` instead of where its host's name resolves."""

    def __init__(self, host: str, *, to: tuple[str, int], **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self.to = to

    def connect(self) -> None:
        self.sock = socket.create_connection(self.to, self.timeout)


class _MappedHTTPSConnection(http.client.HTTPSConnection):
    """A TLS connection to ``to`` that checks the certificate against its host's name."""

    def __init__(
        self, host: str, *, to: tuple[str, int], context: ssl.SSLContext, **kwargs: Any
    ) -> None:
        super().__init__(host, context=context, **kwargs)
        self.to, self.tls = to, context

    def connect(self) -> None:
        sock = socket.create_connection(self.to, self.timeout)
        try:
            self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


class _ConnectTo(urllib.request.HTTPSHandler):
    """Every request's connection made to ``to`` (``$ARENA_RESOLVE``), as curl's
    ``--connect-to``: the URL, its ``Host`` header and TLS's name stay the URL's."""

    handler_order = 400  # before the default HTTP handler

    def __init__(self, to: tuple[str, int], context: ssl.SSLContext | None) -> None:
        super().__init__(context=context)
        self.to, self.tls = to, context

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_MappedHTTPConnection, to=self.to), req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        assert self.tls is not None  # an https:// server's client has its context
        connection = functools.partial(_MappedHTTPSConnection, to=self.to, context=self.tls)
        return self.do_open(connection, req)


def resolve_from_env() -> Resolve:
    """``$ARENA_RESOLVE``'s entries (:mod:`cardarena.resolve`); a mistake is one line."""
    try:
        return parse_resolve(os.environ.get(RESOLVE_ENV, ""))
    except ResolveError as err:
        raise RemoteError(str(err)) from None


Auth = Literal["none", "optional", "required"]
T = TypeVar("T")


class RemoteClient:
    """The API of the host at ``server_url`` (``https://host:port``, maybe with a path
    prefix), as the author (or, for the ``admin_*`` methods, the host) whose ``token`` it is."""

    def __init__(
        self,
        server_url: str,
        token: str | None = None,
        cafile: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        *,
        pinned: bool = False,
        resolve: Resolve | None = None,
        cafile_from: str = "--cafile",
    ) -> None:
        """``pinned``: the server must present the very certificate in ``cafile``, whatever
        name it carries (the host's own tools, reaching it at the address it listens on).
        ``resolve``: where to connect instead of where the URL's name resolves to
        (``$ARENA_RESOLVE``, :func:`resolve_from_env`); TLS still checks that name.
        ``cafile_from``: where ``cafile`` was given (``$ARENA_CA_CERT``), as its errors say."""
        self.cafile_from = cafile_from
        self.base_url = _base_url(server_url)
        self.pinned = pinned
        self.token = _check_token(token)
        self.cafile = None if cafile is None else Path(cafile)
        self.timeout = timeout
        #: What the last ``matches`` call's ``X-Total-Count`` said: the matches its filters
        #: select, of which it returned one page (None when the host did not say).
        self.last_total: int | None = None
        https = self.base_url.startswith("https:")
        if self.cafile is not None and not https:
            raise RemoteError(f"{self.cafile_from} is for an https:// server; got {self.base_url}")
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        context = self._tls_context() if https else None
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        parts = urllib.parse.urlsplit(self.base_url)
        name = (parts.hostname or "").lower()
        to = (resolve or {}).get((name, parts.port or (443 if https else 80)))
        if to is not None:
            # Redirects are not followed, so every request goes to this one host.
            handlers.append(_ConnectTo(to, context))
        if to is not None or is_loopback(name):
            handlers.append(urllib.request.ProxyHandler({}))  # a local host is never proxied
        self._opener = urllib.request.build_opener(*handlers)

    def _tls_context(self) -> ssl.SSLContext:
        try:
            context = ssl.create_default_context(cafile=self.cafile)
            if self.pinned and self.cafile is not None:
                # Trusted as itself, not through an authority, and so whatever its name.
                context.check_hostname = False
                context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
            return context
        except FileNotFoundError:
            raise RemoteError(f"{self.cafile_from} {str(self.cafile)!r}: no such file") from None
        except ssl.SSLError as err:  # before OSError, its base
            raise RemoteError(
                f"{self.cafile_from} {str(self.cafile)!r}: not a PEM certificate ({err.reason})"
            ) from None
        except OSError as err:
            raise RemoteError(f"{self.cafile_from} {str(self.cafile)!r}: {err.strerror}") from None

    # --- public -------------------------------------------------------------------------------

    def status(self) -> Status:
        return self._json(_STATUS, "GET", "/status", auth="none")

    def leaderboard(
        self, phase: Phase = "ladder", latest: bool = False, retired: bool = False
    ) -> list[LeaderRow]:
        """The rated versions (``latest``: each bot's latest validated version only;
        ``retired``: retired versions too, marked)."""
        query: dict[str, str | int] = {"phase": phase}
        if latest:
            query["latest"] = "true"
        if retired:
            query["all"] = "true"
        return self._json(_LEADER_ROWS, "GET", "/leaderboard", query=query, auth="none")

    def cross_table(self, phase: Phase = "ladder") -> CrossTable:
        """The phase's cross-table and likelihood of superiority (``/leaderboard/cross-table``)."""
        return self._json(_CROSS_TABLE, "GET", "/leaderboard/cross-table", query={"phase": phase})

    def par(self) -> ParBoard:
        """Each version's par in the ladder (``/leaderboard/par``; ``[ladder] par``): its
        reference ``""`` and no rows on a competition without par."""
        return self._json(_PAR, "GET", "/leaderboard/par")

    def rating_history(self, phase: Phase = "ladder") -> list[HistoryPoint]:
        """The phase's leaderboard after each refit (``/leaderboard/history``)."""
        return self._json(_HISTORY, "GET", "/leaderboard/history", query={"phase": phase})

    def bots(self) -> list[BotOut]:
        return self._json(_BOTS, "GET", "/bots", auth="none")

    def version(self, version_id: int) -> VersionOut:
        """A version; with the author's token, also why it failed or was retired."""
        return self._json(_VERSION, "GET", f"/versions/{int(version_id)}")

    def matches(
        self,
        version: int | None = None,
        phase: Phase | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        bot: str | None = None,
        faults: bool | None = None,
    ) -> list[MatchOut]:
        """The latest finished matches, newest first (``limit`` after the ``offset`` newest)."""
        query: dict[str, str | int] = {"limit": limit}
        for key, value in (("version", version), ("phase", phase), ("bot", bot)):
            if value is not None:
                query[key] = value
        if faults is not None:
            query["faults"] = "true" if faults else "false"
        if offset:
            query["offset"] = offset
        headers: dict[str, str] = {}
        found = self._json(_MATCHES, "GET", "/matches", query=query, auth="none", seen=headers)
        total = headers.get(TOTAL_HEADER.lower(), "")
        self.last_total = int(total) if total.isdigit() else None
        return found

    def match(self, match_id: str) -> MatchOut:
        return self._json(_MATCH, "GET", f"/matches/{_segment(match_id)}", auth="none")

    def record(self, match_id: str) -> bytes:
        """The match's record (``.jsonl.gz``), once every rotation of its deal is played; with
        the client's token, the notes of its author's seats stay in it."""
        return self._request("GET", f"/matches/{_segment(match_id)}/record", auth="optional")

    def register(self, name: str, invite_code: str) -> NewToken:
        """A new author, with the competition's invite code; the token is shown this once."""
        body = {"name": name, "invite_code": invite_code}
        return self._json(_NEW_TOKEN, "POST", "/authors", body=body, auth="none")

    # --- an author's ----------------------------------------------------------------------------

    def me(self) -> Me:
        return self._json(_ME, "GET", "/me", auth="required")

    def rotate_token(self) -> RotatedToken:
        """A new API token; the one this client holds stops working (it keeps the new one)."""
        rotated = self._json(_ROTATED, "POST", "/me/token", auth="required")
        self.token = _check_token(rotated.token)
        return rotated

    def submit(self, name: str, archive: bytes) -> VersionOut:
        """Upload a ``.tar``, ``.tar.gz`` or ``.zip`` (or a ``docker save`` tarball, where the
        host takes images) as the next version of bot ``name``."""
        if len(archive) > MAX_ARCHIVE_BYTES:
            raise RemoteError(f"the archive is larger than {MAX_ARCHIVE_BYTES >> 20} MiB")
        # Checked here against what the host publishes: sent, an upload over its limit is cut
        # off mid-stream (a broken pipe) before its 413 can be read.
        limits = self.status().upload_limits
        if limits is not None and len(archive) > limits.max_upload_mib << 20:
            raise RemoteError(
                f"the archive is {len(archive) / (1 << 20):.1f} MiB; this host takes uploads of "
                f"at most {limits.max_upload_mib} MiB"
            )
        return self._json(
            _VERSION,
            "PUT",
            f"/bots/{_segment(name)}/versions",
            data=archive,
            content_type="application/octet-stream",
            auth="required",
        )

    def submit_dir(self, name: str, directory: Path) -> VersionOut:
        """Pack ``directory`` (:func:`pack_directory`) and submit it."""
        return self.submit(name, pack_directory(directory))

    def live(self, name: str) -> LiveVersion:
        """A version of ``name`` played by a bot that connects itself, and its token."""
        return self._json(_LIVE, "POST", f"/bots/{_segment(name)}/live", auth="required")

    def retire(self, version_id: int) -> VersionOut:
        return self._json(_VERSION, "POST", f"/versions/{int(version_id)}/retire", auth="required")

    def head_to_head(self, version_id: int) -> list[HeadToHead]:
        """A version's record against each opponent version it met."""
        return self._json(_HEAD_TO_HEAD, "GET", f"/versions/{int(version_id)}/head-to-head")

    def version_log(self, version_id: int) -> str:
        """The validation log of one's own version."""
        data = self._request("GET", f"/versions/{int(version_id)}/log", auth="required")
        return data.decode("utf-8", "replace")

    def validation_matches(self, version_id: int) -> list[str]:
        """The ids of one's own version's validation matches whose records are kept."""
        return self._json(_IDS, "GET", f"/versions/{int(version_id)}/validation", auth="required")

    def validation_record(self, version_id: int, match_id: str) -> bytes:
        """The record (``.jsonl.gz``) of one of one's own version's validation matches."""
        path = f"/versions/{int(version_id)}/validation/{_segment(match_id)}/record"
        return self._request("GET", path, auth="required")

    def archive(self, version_id: int) -> bytes:
        """One's own version's files, as a ``.tar.gz`` (an image version's tarball: a ``.tar``)."""
        return self._request("GET", f"/versions/{int(version_id)}/archive", auth="required")

    def request_analysis(self, match_id: str) -> AnalysisOut:
        """Ask for the analysis of one's own seats in a finished match (queued)."""
        path = f"/matches/{_segment(match_id)}/analysis"
        return self._json(TypeAdapter(AnalysisOut), "POST", path, auth="required")

    def analysis(self, match_id: str) -> AnalysisOut:
        """One's analysis of a match: its state, and once done its data."""
        path = f"/matches/{_segment(match_id)}/analysis"
        return self._json(TypeAdapter(AnalysisOut), "GET", path, auth="required")

    def challenge(self, opponents: Sequence[str], seat: int = 0) -> ChallengeOut:
        """Start a challenge: the author at ``seat`` against ``opponents`` (one bot for every
        other seat, or one a seat); its ``play_url`` is the author's page."""
        body = {"opponents": list(opponents), "seat": int(seat)}
        return self._json(
            TypeAdapter(ChallengeOut), "POST", "/challenges", body=body, auth="required"
        )

    def challenges(self, limit: int = 20, offset: int = 0) -> list[ChallengeOut]:
        """The challenges (human matches), newest first."""
        query = {"limit": int(limit), "offset": int(offset)}
        return self._json(TypeAdapter(list[ChallengeOut]), "GET", "/challenges", query=query)

    def seat_log(self, match_id: str, seat: int) -> str:
        """What one's own bot wrote to stderr in one seat of a match."""
        path = f"/matches/{_segment(match_id)}/logs/{int(seat)}"
        return self._request("GET", path, auth="required").decode("utf-8", "replace")

    # --- the host's (the token is the admin token) ----------------------------------------------

    def admin_add_author(self, name: str) -> NewToken:
        body = {"name": name}
        return self._json(_NEW_TOKEN, "POST", "/admin/authors", body=body, auth="required")

    def admin_ladder(
        self, state: LadderState | None = None, units_per_minute: float | None = None
    ) -> Status:
        """Pause, resume or close the ladder, or set its pace; the status after."""
        body: dict[str, Any] = {}
        if state is not None:
            body["state"] = state
        if units_per_minute is not None:
            body["units_per_minute"] = units_per_minute
        return self._json(_STATUS, "POST", "/admin/ladder", body=body, auth="required")

    # --- seasons and exports ----------------------------------------------------------------

    def seasons(self) -> list[SeasonOut]:
        return self._json(_SEASONS, "GET", "/seasons", auth="none")

    def season(self, number: int) -> SeasonDetail:
        return self._json(_SEASON, "GET", f"/seasons/{int(number)}", auth="none")

    def admin_end_season(self, name: str | None = None) -> SeasonEnd:
        """End the current season now and start the next (named ``name``)."""
        body = {} if name is None else {"name": name}
        return self._json(_SEASON_END, "POST", "/admin/seasons/end", body=body, auth="required")

    def export(self, what: str, fmt: str, query: Mapping[str, str | int]) -> bytes:
        """``/export/{what}.{fmt}`` (standings or matches, csv or json) as the host sent it."""
        return self._request("GET", f"/export/{_segment(what)}.{_segment(fmt)}", query=query)

    # --- events (arena/host/events) -------------------------------------------------------------

    def events(self) -> list[EventOut]:
        """Every started event, then the configured ones still to start."""
        return self._json(TypeAdapter(list[EventOut]), "GET", "/events", auth="none")

    def event(self, name: str) -> EventDetail:
        """One event: its rounds, ties, deals and match ids; Swiss standings; its winner."""
        return self._json(TypeAdapter(EventDetail), "GET", f"/events/{_segment(name)}", auth="none")

    def admin_event_start(self, name: str) -> EventDetail:
        """Start a configured event now (the host's)."""
        path = f"/admin/events/{_segment(name)}/start"
        return self._json(TypeAdapter(EventDetail), "POST", path, auth="required")

    def admin_authors(self) -> list[AdminAuthor]:
        return self._json(TypeAdapter(list[AdminAuthor]), "GET", "/admin/authors", auth="required")

    def admin_suspend(self, name: str, reason: str = "") -> Suspended:
        path, body = f"/admin/authors/{_segment(name)}/suspend", {"reason": reason}
        return self._json(TypeAdapter(Suspended), "POST", path, body=body, auth="required")

    def admin_reinstate(self, name: str) -> NewToken:
        path = f"/admin/authors/{_segment(name)}/reinstate"
        return self._json(_NEW_TOKEN, "POST", path, auth="required")

    def admin_retire(self, version_id: int, reason: str = "") -> VersionOut:
        path, body = f"/admin/versions/{int(version_id)}/retire", {"reason": reason}
        return self._json(_VERSION, "POST", path, body=body, auth="required")

    def admin_rerun(self, unit_id: int) -> UnitOut:
        path = f"/admin/units/{int(unit_id)}/rerun"
        return self._json(TypeAdapter(UnitOut), "POST", path, auth="required")

    def admin_failed_units(self) -> list[UnitOut]:
        return self._json(TypeAdapter(list[UnitOut]), "GET", "/admin/units", auth="required")

    def admin_queue(self) -> AdminQueue:
        return self._json(TypeAdapter(AdminQueue), "GET", "/admin/queue", auth="required")

    def admin_reopen(self) -> Status:
        return self._json(_STATUS, "POST", "/admin/reopen", auth="required")

    def admin_audit(self, limit: int = 200) -> list[AuditOut]:
        query = {"limit": int(limit)}
        shape = TypeAdapter(list[AuditOut])
        return self._json(shape, "GET", "/admin/audit", query=query, auth="required")

    # --- HTTP ---------------------------------------------------------------------------------

    def _json(
        self,
        shape: TypeAdapter[T],
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
        data: bytes | None = None,
        content_type: str | None = None,
        auth: Auth = "optional",
        seen: dict[str, str] | None = None,
    ) -> T:
        """The answer's JSON as ``shape``: the API's model of it (its headers into ``seen``,
        lower-cased, when given)."""
        if body is not None:
            data, content_type = json.dumps(body).encode(), "application/json"
        raw = self._request(
            method, path, query=query, data=data, content_type=content_type, auth=auth, seen=seen
        )
        try:
            return shape.validate_json(raw)
        except ValidationError as err:
            raise self._not_the_api(method, path, err) from None

    def _not_the_api(self, method: str, path: str, err: ValidationError) -> RemoteError:
        problem = err.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        if problem["type"] == "json_invalid" or not where:
            return RemoteError(
                f"{self.base_url} answered {method} {path} with something other than the API's "
                "JSON: is it a Card Arena host?"
            )
        return RemoteError(
            f"{self.base_url} answered {method} {path} with a body this client does not "
            f"understand ({where}: {_one_line(problem['msg'])}); is it a Card Arena host of "
            "this version?"
        )

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        data: bytes | None = None,
        content_type: str | None = None,
        auth: Auth = "optional",
        seen: dict[str, str] | None = None,
    ) -> bytes:
        url = self.base_url + API_PREFIX + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"User-Agent": f"card-arena/{arena_version()}", "Accept": "*/*"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        if auth != "none" and self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        elif auth == "required":
            raise RemoteError(f"an API token is needed for this (--token T or ${TOKEN_ENV})")
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                if seen is not None:
                    seen.update((k.lower(), v) for k, v in response.headers.items())
                return cast(bytes, response.read())
        except urllib.error.HTTPError as err:
            raise self._http_error(err, "Authorization" in headers) from None
        except urllib.error.URLError as err:
            raise self._unreachable(err.reason) from None
        except (OSError, http.client.HTTPException) as err:
            raise self._unreachable(err) from None

    def _http_error(self, err: urllib.error.HTTPError, sent_token: bool) -> RemoteError:
        try:
            body = err.read()
        except (OSError, http.client.HTTPException):
            body = b""
        finally:
            err.close()
        if 300 <= err.code < 400:
            where = err.headers.get("Location", "elsewhere")
            return RemoteError(
                f"HTTP {err.code}: {self.base_url} redirects to {_one_line(where)}; give that "
                "server URL instead (redirects are not followed, the token would go along)"
            )
        # A body not the API's (a page, a proxy's): the status's reason, else its usual phrase.
        reason = _one_line(str(err.reason)) or _phrase(err.code)
        detail = _detail(body) or reason or "no detail"
        if err.code == 429:
            detail = _too_many(_detail(body), err.headers.get("Retry-After"))
        line = f"HTTP {err.code}: {detail}"
        if err.code == 401 and sent_token:
            line += " (the token given was refused: mistyped, or replaced by a newer one?)"
        return RemoteError(line)

    def _unreachable(self, reason: object) -> RemoteError:
        where = f"cannot reach {self.base_url}"
        if isinstance(reason, ssl.SSLCertVerificationError):
            problem = reason.verify_message or _one_line(str(reason))
            if self.cafile is None:
                hint = "pass --cafile PEM with the certificate the host serves, or its authority"
            else:
                hint = f"is {str(self.cafile)!r} the certificate the host serves, or its authority?"
            return RemoteError(
                f"{where}: its TLS certificate failed verification ({problem}); {hint}"
            )
        if isinstance(reason, ssl.SSLError):
            return RemoteError(
                f"{where}: TLS failed ({reason.reason or _one_line(str(reason))}); is it an "
                "https:// server?"
            )
        if isinstance(reason, TimeoutError):
            return RemoteError(f"{where}: no answer within {self.timeout:g} s")
        if isinstance(reason, socket.gaierror):
            return RemoteError(f"{where}: unknown host ({reason.strerror})")
        if isinstance(reason, http.client.RemoteDisconnected):
            return RemoteError(
                f"{where}: the server closed the connection without answering (an https:// "
                "server given as http://?)"
            )
        if isinstance(reason, OSError) and reason.strerror:
            return RemoteError(f"{where}: {reason.strerror.lower()}")
        return RemoteError(f"{where}: {_one_line(str(reason)) or type(reason).__name__}")


# --- packing a bot's directory ------------------------------------------------------------------


def pack_directory(directory: Path) -> bytes:
    """``directory`` as a ``.tar.gz`` in memory: its files and directories (``.git`` and
    ``__pycache__`` left out), each file's executable bit kept, owners and times dropped, so the
    same files always pack to the same bytes. A link or special file is refused, as the server
    would refuse it; so is a directory without a readable ``cardarena.toml``."""
    try:
        if not directory.is_dir():
            raise RemoteError(f"{str(directory)!r}: not a directory")
    except OSError as err:
        raise RemoteError(f"{str(directory)!r}: {err.strerror}") from None
    if not os.path.lexists(directory / MANIFEST_NAME):
        raise RemoteError(
            f"{str(directory)!r} has no {MANIFEST_NAME} (a line such as "
            'command = "python3 bot.py" says how the bot starts)'
        )
    try:
        # Its form only: the server checks the program against the snapshot and its own PATH.
        read_manifest(directory, check=False)
    except ArchiveError as err:
        raise RemoteError(f"{directory}: {err}") from None
    out = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        _pack(tar, directory, "", out)
    return out.getvalue()


def _pack(tar: tarfile.TarFile, directory: Path, prefix: str, out: io.BytesIO) -> None:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as err:
        raise RemoteError(f"cannot read {str(directory)!r}: {err.strerror}") from None
    for entry in entries:
        if entry.name in SKIPPED_NAMES:
            continue
        path = Path(entry.path)
        name = prefix + entry.name
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise RemoteError(f"{str(path)!r}: a file name that is not UTF-8") from None
        if entry.is_symlink():
            raise RemoteError(
                f"{str(path)!r}: a symbolic link (the server refuses links in a bot's archive: "
                "copy the file in instead)"
            )
        if entry.is_dir(follow_symlinks=False):
            tar.addfile(_info(name, tarfile.DIRTYPE, 0o755))
            _pack(tar, path, name + "/", out)
        elif entry.is_file(follow_symlinks=False):
            _pack_file(tar, path, name)
            if out.tell() > MAX_ARCHIVE_BYTES:
                raise RemoteError(
                    f"{str(directory)!r} packs to more than {MAX_ARCHIVE_BYTES >> 20} MiB"
                )
        else:
            raise RemoteError(
                f"{str(path)!r}: a special file (FIFO, socket or device); the server refuses it"
            )


def _pack_file(tar: tarfile.TarFile, path: Path, name: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        raise RemoteError(f"cannot read {str(path)!r}: {err.strerror}") from None
    with open(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RemoteError(f"{str(path)!r}: changed while being packed")
        member = _info(name, tarfile.REGTYPE, 0o755 if info.st_mode & 0o111 else 0o644)
        member.size = info.st_size
        try:
            tar.addfile(member, f)
        except OSError as err:
            raise RemoteError(
                f"cannot read {str(path)!r}: {err.strerror or 'it changed while being packed'}"
            ) from None


def _info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    """A member without owner or time: only its type and executable bit reach the server."""
    member = tarfile.TarInfo(name)
    member.type = kind
    member.mode = mode
    member.mtime = 0
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return member


# --- helpers ------------------------------------------------------------------------------------


def _base_url(server_url: str) -> str:
    """``server_url`` checked: http or https, a host, no query; without a trailing ``/`` or
    ``/api/v1`` (both are accepted)."""
    text = server_url.strip()
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as err:
        raise RemoteError(f"server URL {text!r}: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteError(
            f"the server must be an http:// or https:// URL (https://host:port); got {text!r}"
        )
    if parts.query or parts.fragment or parts.username is not None:
        raise RemoteError(f"server URL {text!r}: give only scheme, host, port and path")
    path = parts.path.rstrip("/")
    if path.endswith(API_PREFIX):
        path = path[: -len(API_PREFIX)]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _check_token(token: str | None) -> str | None:
    if token is None or not token.strip():
        return None
    token = token.strip()
    if any(not 0x21 <= ord(c) <= 0x7E for c in token):
        raise RemoteError("the API token holds spaces or characters no token has")
    return token


def _segment(text: str) -> str:
    """``text`` as one path segment of a URL."""
    if not text or text in (".", ".."):
        raise RemoteError(f"{text!r} cannot name a bot or a match")
    return urllib.parse.quote(text, safe="")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _one_line(text: str) -> str:
    """``text`` on one line, shortened: control characters and runs of spaces become one space."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= _MAX_DETAIL else flat[: _MAX_DETAIL - 1] + "…"


def _too_many(detail: str, retry_after: str | None) -> str:
    """A 429's line: the host's own words (they say when to try again), else the generic line
    with the ``Retry-After`` a proxy may have sent alone."""
    if "try again" in detail:
        return detail
    wait = retry_after.strip() if retry_after else ""
    if wait.isdigit():
        return f"{detail or 'too many requests'}; try again in {int(wait)} s"
    return f"{detail or 'too many requests'}; try again later"


def _detail(body: bytes) -> str:
    """The API's ``{"detail": ...}`` of an error body, on one line; ``""`` when it has none."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    detail = data.get("detail") if isinstance(data, dict) else None
    if detail is None:
        return ""
    return _one_line(detail if isinstance(detail, str) else json.dumps(detail))


def _phrase(code: int) -> str:
    """HTTP's phrase for status ``code`` ("Not Found"), ``""`` for an unknown one."""
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return ""

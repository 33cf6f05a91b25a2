"""The store's rows as the API's bodies (:mod:`arena.host.apitypes`), and the lookups several
routes share: a finished match, one's own version, whether a record is public yet."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cardarena.messages import PROTOCOL_VERSION
from fastapi import HTTPException

from arena.host.api.deps import HostState
from arena.host.apitypes import (
    AuthorOut,
    BotOut,
    MatchOut,
    ResultOut,
    SeasonOut,
    Status,
    UploadLimits,
    VersionOut,
)
from arena.host.events.views import event_states
from arena.host.leaderboard import ProvisionalRule, final_state, final_winners
from arena.host.store import Author, CompetitionStore, Season, StoredMatch, Version
from arena.version import arena_version


def author_out(a: Author) -> AuthorOut:
    return AuthorOut(id=a.id, name=a.name, created=a.created)


def version_out(v: Version, viewer: Author | None = None) -> VersionOut:
    """``v`` as ``viewer`` sees it: why it failed or was retired only if it is theirs."""
    mine = viewer is not None and viewer.id == v.author_id
    return VersionOut(
        id=v.id,
        bot=v.bot,
        number=v.number,
        ref=v.ref,
        kind=v.kind,
        sha256=v.sha256,
        runtime=str(v.manifest.get("runtime", "")),
        status=v.status,
        reason=v.reason if mine else None,
        created=v.created,
        updated=v.updated,
    )


def bots_out(store: CompetitionStore, author_id: int | None, viewer: Author | None) -> list[BotOut]:
    """Every bot (of ``author_id``) with its versions."""
    names = {a.id: a.name for a in store.authors()}
    versions = store.versions(author_id=author_id)
    out = []
    for bot in store.bots(author_id):
        mine = [version_out(v, viewer) for v in versions if v.bot_id == bot.id]
        out.append(BotOut(name=bot.name, author=names.get(bot.author_id, ""), versions=mine))
    return out


def match_out(m: StoredMatch, refs: dict[int, str], record_available: bool) -> MatchOut:
    result = m.result or {}
    return MatchOut(
        match_id=m.match_id,
        unit=m.unit_id,
        phase=m.phase,
        rotation=m.rotation,
        seats=[refs.get(v, str(v)) for v in m.seats],
        state=m.state,
        summary=result.get("summary"),
        reason=result.get("reason"),
        ranks=result.get("ranks"),
        faults=m.faults,
        finished=m.finished,
        record_available=record_available,
    )


def host_status(host: HostState, request_host: str | None = None) -> Status:
    """The status; its gRPC address on ``request_host`` (the name the client used) where the
    host advertises none of its own."""
    store, subs = host.store, host.config.submissions
    counts: dict[str, int] = {}
    for v in store.versions():
        counts[v.status] = counts.get(v.status, 0) + 1
    final = final_state(store.units(phase="final"))
    # Reopened while it played: not over until its failed units are played again.
    interrupted = final == "finished" and store.final_interrupted()
    return Status(
        name=host.config.name,
        game=host.config.rules.game_id,
        players=host.config.rules.config.players,
        server_version=arena_version(),
        state=store.ladder_state(),
        units_per_minute=store.units_per_minute(),
        versions=counts,
        matches_played=store.matches_done(),
        grpc_port=host.grpc_port,
        grpc_address=host.grpc_address or _on(request_host, host.grpc_port),
        tls=host.tls,
        protocol_version=PROTOCOL_VERSION,
        upload_limits=UploadLimits(
            max_upload_mib=subs.max_upload_mib,
            max_files=subs.max_files,
            max_unpacked_mib=subs.max_unpacked_mib,
            allow_images=subs.allow_images,
        ),
        provisional_rule=ProvisionalRule.of(host.config.ladder).sentence(),
        challenge_seats=(
            sum(map(len, host.config.places)) if host.config.challenges.enabled else 0
        ),
        final="interrupted" if interrupted else final,
        final_winners=[] if interrupted else final_winners(final, host.standings().final),
        season=season_out(store.current_season()),
        results=[
            ResultOut(kind=r.kind, subject=r.subject, winners=r.winners, at=r.at)
            for r in store.results()
        ],
        events=event_states(store, host.config),
    )


def season_out(s: Season) -> SeasonOut:
    return SeasonOut(
        number=s.number,
        name=s.name,
        title=s.title,
        starts=s.starts,
        ends=s.ends,
        state=s.state,
        matches=s.matches,
        winners=s.winners,
    )


def _on(name: str | None, port: int) -> str | None:
    if not name or not port:
        return None
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


def all_refs(store: CompetitionStore) -> dict[int, str]:
    """``BOT@N`` of every version, by id."""
    return {v.id: v.ref for v in store.versions()}


def owned(store: CompetitionStore, version_id: int, author: Author) -> Version:
    """Version ``version_id``; 403 unless it is ``author``'s."""
    v = store.version(version_id)
    if v.author_id != author.id:
        raise HTTPException(403, f"version {v.ref} is not yours")
    return v


def finished_match(store: CompetitionStore, match_id: str) -> StoredMatch:
    """Match ``match_id``; 404 until it is finished, 410 when it never will be (void)."""
    m = store.match(match_id)
    if m.state == "void":
        why = store.unit(m.unit_id).reason
        raise HTTPException(410, f"match {match_id!r} will not be played: its unit failed: {why}")
    if m.state != "done":
        raise HTTPException(404, f"match {match_id!r} is not finished")
    return m


def record_public(store: CompetitionStore, m: StoredMatch) -> bool:
    """Published once its unit (every rotation of its deal) is over: a bot that may still
    play the deal must not be able to read it."""
    if m.state != "done":
        return False
    return store.unit(m.unit_id).state != "pending"


def pairwise(matches: Iterable[StoredMatch]) -> dict[tuple[int, int], list[int]]:
    """``(a, b) → [wins, losses, draws]`` of version ``a`` against ``b`` over ``matches``: in
    each match, every version against every other version at its table, by their best ranks
    (partners of one version count once)."""
    tally: dict[tuple[int, int], list[int]] = {}
    for m in matches:
        ranks = (m.result or {}).get("ranks") or []
        if len(ranks) != len(m.seats):
            continue
        best: dict[int, int] = {}
        for v, r in zip(m.seats, ranks, strict=True):
            best[v] = min(best.get(v, r), r)
        for a, ra in best.items():
            for b, rb in best.items():
                if a != b:
                    row = tally.setdefault((a, b), [0, 0, 0])
                    row[0 if ra < rb else 1 if ra > rb else 2] += 1
    return tally


def read_text(path: Path) -> str:
    """A log's text (bytes that are not UTF-8 replaced); 404 when it cannot be read."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as err:
        raise HTTPException(404, f"cannot read the log: {err.strerror}") from None

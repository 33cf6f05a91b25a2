"""What a seat or a spectator is sent must not reveal that an event it may not see happened
(issue 21, item 3).

``Event.seq`` used to be the event's index in the match's full log, so the gap before a seat's
play told everyone else that the seat had just been told something alone: in spoil five and
forty-five, that it held the ace of trumps and kept it silent. Now each audience (a connection's
seats, or the public that spectators see) numbers the events it may see on its own: 0, 1, 2, …

Everything runs on the virtual clock with :class:`~tests.arena.server.fakes.FakeBot` seats (no
gRPC under the real servicer and hub); the spectator's stream is read from the hub's
:class:`~arena.server.board.Board`, as WatchMatch replays it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from cardarena import codec as bot_codec
from cardarena.messages import Decision, EventInfo, ServerMessage, Welcome

from arena.policy import FaultPolicy
from arena.protocol import codec
from arena.server.board import Board
from arena.server.outbox import Outbox, Outgoing
from arena.server.spec import MatchOutcome, MatchSpec, SeatSpec
from engine import MatchState, OptionValue, get_game
from engine.cards import parse_card
from engine.games.spoil_rules import SpoilTableState
from tests.arena.server.fakes import (
    FakeBot,
    FakeServer,
    Move,
    answer,
    answer_text,
    disconnect,
    garbage,
    run_virtual,
)

#: Short matches of every game.
SHORT: dict[str, dict[str, OptionValue]] = {
    "whist": {"points_to_win": 1, "games_per_rubber": 1},
    "tennis_whist": {"sets_to_win": 1},
    "spoil_five": {"rounds": 1},
    "forty_five": {"points_to_win": 5},
    "tennis": {"sets_to_win": 1},
}
SEEDS = (1, 2, 3)


def _spec(game: str, seed: int, policy: FaultPolicy = FaultPolicy.LENIENT) -> MatchSpec:
    config = get_game(game).configure(None, SHORT[game])
    seats = get_game(game).num_seats(config)
    return MatchSpec(
        match_id=f"{game}-{seed}",
        game=game,
        seats=tuple(SeatSpec(f"token-{game}-{seed}-{s}", f"bot{s}") for s in range(seats)),
        seed=seed,
        options=SHORT[game],
        fault_policy=policy,
    )


def _bot(
    spec: MatchSpec,
    seat: int,
    script: Any = (),
    *,
    default: Move | None = None,
    batch: bool = False,
) -> FakeBot:
    token = spec.seats[seat].token
    return FakeBot(f"bot{seat}", script, default=default, token=token, batch_events=batch)


def _watch(board: Board, match_id: str) -> list[ServerMessage]:
    """What a spectator watching ``match_id`` is sent (WatchMatch's replay of the board)."""
    q: Outbox[Outgoing] = Outbox()
    assert board.watch(match_id, q)
    out: list[ServerMessage] = []
    for msg in q.items:
        if msg is None:
            break
        decoded = bot_codec.proto_to_plain(
            codec.bytes_to_proto(msg) if isinstance(msg, bytes) else msg
        )
        assert decoded is not None
        out.append(decoded)
    return out


async def _referee(
    spec: MatchSpec,
    bots: Sequence[FakeBot],
    resume: Sequence[tuple[FakeBot, FakeBot]] = (),
) -> tuple[MatchOutcome, Board]:
    """Referee ``spec`` through the hub with ``bots`` (each plays the seats of its token); for
    each ``(leaver, newcomer)`` of ``resume``, the newcomer (the same token) says Hello 250
    virtual ms after the leaver's stream ended; the outcome, and the hub's board."""
    server = FakeServer()
    loop = asyncio.get_running_loop()
    for leaver, newcomer in resume:

        def drop(leaver: FakeBot = leaver, newcomer: FakeBot = newcomer) -> None:
            FakeBot.disconnect(leaver)
            loop.call_later(0.25, newcomer.connect, server)

        leaver.disconnect = drop  # type: ignore[method-assign]
    match = server.hub.register(spec)
    for bot in bots:
        bot.connect(server)
    outcome = await server.hub.run_match(spec)
    assert match.finished
    return outcome, server.hub.board


def _play(
    spec: MatchSpec,
    seating: Sequence[tuple[FakeBot, Sequence[int]]],
    resume: Sequence[tuple[FakeBot, FakeBot]] = (),
) -> tuple[MatchOutcome, list[ServerMessage]]:
    """Play the match, each bot on its seats (they are given its token); its outcome and what
    a spectator is sent."""
    seats = list(spec.seats)
    for bot, mine in seating:
        for seat in mine:
            seats[seat] = dataclasses.replace(seats[seat], token=bot.token)
    spec = dataclasses.replace(spec, seats=tuple(seats))
    outcome, board = run_virtual(_referee(spec, [b for b, _ in seating], resume))
    for bot in [b for b, _ in seating] + [b for _, b in resume]:
        if bot.problems:
            raise bot.problems[0]
    return outcome, _watch(board, spec.match_id)


def _events(received: Sequence[ServerMessage]) -> list[EventInfo]:
    """The events in ``received`` in the order the receiver learns them (those riding in a
    request came just before it)."""
    out: list[EventInfo] = []
    for m in received:
        if isinstance(m, EventInfo):
            out.append(m)
        elif isinstance(m, Decision):
            out.extend(m.events)
    return out


def _seqs(received: Sequence[ServerMessage]) -> list[int]:
    return [e.seq for e in _events(received)]


def _messages(bot: FakeBot) -> list[ServerMessage]:
    """What the bot was sent about the match (its Welcome names its session: not the match)."""
    return [r.message for r in bot.received if not isinstance(r.message, Welcome)]


# --- consecutive numbering, in every game -----------------------------------------------------


@pytest.mark.parametrize("game", sorted(SHORT))
@pytest.mark.parametrize("seed", SEEDS)
def test_every_audience_numbers_its_events_0_1_2_without_gaps(game: str, seed: int) -> None:
    spec = _spec(game, seed)
    n = len(spec.seats)
    # Every other seat batches its events into its requests.
    bots = [_bot(spec, s, batch=s % 2 == 1) for s in range(n)]
    outcome, spectator = _play(spec, [(b, [s]) for s, b in enumerate(bots)])
    assert outcome.result.reason == "normal"
    log = [e for e in outcome.entries if e["type"] == "event"]
    for seat, bot in enumerate(bots):
        events = _events(_messages(bot))
        assert [e.seq for e in events] == list(range(len(events))), (game, seed, seat)
        # Exactly the events the seat may see, in order (the record keeps the full log).
        visible = [e for e in log if e["to"] is None or seat in e["to"]]  # type: ignore[operator]
        assert [(e.kind, e.private) for e in events] == [
            (e["kind"], e["to"] is not None) for e in visible
        ]
    public = _events(spectator)
    assert [e.seq for e in public] == list(range(len(public)))
    assert [e.kind for e in public] == [e["kind"] for e in log if e["to"] is None]
    assert not any(e.private for e in public)


@pytest.mark.parametrize("game", ["whist", "spoil_five", "forty_five"])
def test_a_connection_playing_two_seats_numbers_what_either_may_see(game: str) -> None:
    spec = _spec(game, 7)
    n = len(spec.seats)
    pair = _bot(spec, 0, batch=True)
    others = [_bot(spec, s) for s in range(2, n)]
    outcome, _ = _play(spec, [(pair, [0, 1]), *((b, [s + 2]) for s, b in enumerate(others))])
    assert outcome.result.reason == "normal"
    events = _events(_messages(pair))
    assert [e.seq for e in events] == list(range(len(events)))
    log = [e for e in outcome.entries if e["type"] == "event"]
    both = [e for e in log if e["to"] is None or {0, 1} & set(e["to"])]  # type: ignore[arg-type]
    assert len(events) == len(both)


@pytest.mark.parametrize("game", sorted(SHORT))
@pytest.mark.parametrize("batch", [False, True])
def test_a_resumed_seat_is_replayed_its_events_with_the_same_numbers(
    game: str, batch: bool
) -> None:
    spec = _spec(game, 4)
    n = len(spec.seats)
    # Everyone answers after 125 virtual ms; seat 1 drops out at its third decision, and a new
    # stream resumes the seat 250 ms later.
    slow = answer(after_ms=125)
    first = _bot(spec, 1, [slow, slow, disconnect(after_ms=125)], default=slow, batch=batch)
    again = _bot(spec, 1, default=slow, batch=batch)
    bots = [first if s == 1 else _bot(spec, s, default=slow) for s in range(n)]
    outcome, _ = _play(spec, [(b, [s]) for s, b in enumerate(bots)], resume=[(first, again)])
    assert first.disconnected and again.starts, "the seat must drop out and resume mid-match"
    assert outcome.result.reason == "normal"
    before = _events(_messages(first))
    after = _events(_messages(again))
    assert [e.seq for e in after] == list(range(len(after)))
    # The replay repeats what the first stream learnt, numbered alike.
    assert after[: len(before)] == before
    log = [e for e in outcome.entries if e["type"] == "event"]
    assert len(after) == sum(1 for e in log if e["to"] is None or 1 in e["to"])  # type: ignore[operator]


# --- two deals that differ only in what one seat alone knows ---------------------------------

#: The ace holder (not the leader: the seats before it see its silence, or its absence, only as
#: the seq numbers around its play).
HOLDER = 1


def _deals(game: str) -> tuple[list[str], list[str]]:
    """Hands for ``game`` (seat 0 leads, the last seat deals, the turn-up is 2S): in the first,
    the holder has the ace of trumps (AS); in the second, a card of the stock (TD) instead,
    the ace being in the stock. Every other hand is the same in both."""
    others = ["KC 3D 4D 6D 7D", "JC 2C 8D 9D JD", "3C 4C QD KD AD", "6C 7C 2H 3H 4H"]
    n = 5 if game == "spoil_five" else 4
    hands = others[: n - 1]
    with_ace = [*hands[:HOLDER], "AS QC 7H 8H 9H", *hands[HOLDER:]]
    without = [*hands[:HOLDER], "TD QC 7H 8H 9H", *hands[HOLDER:]]
    return with_ace, without


def _arranged(
    monkeypatch: pytest.MonkeyPatch, game: str, hands: Sequence[str]
) -> Callable[[], None]:
    """Make the next match of ``game`` start with ``hands`` (after the seed's own deal, which
    is the same for both matches)."""
    cls = type(get_game(game))
    real = cls.new_match

    def new_match(self: Any, config: Any, seed: int) -> MatchState:
        state = real(self, config, seed)
        assert isinstance(state, SpoilTableState)
        masks = [sum(1 << parse_card(c) for c in h.split()) for h in hands]
        state.arrange_deal(len(hands) - 1, masks, parse_card("2S"))
        return state

    monkeypatch.setattr(cls, "new_match", new_match)
    return lambda: monkeypatch.setattr(cls, "new_match", real)


def _holder_script(decision: Decision, n: int) -> Move:
    """Keep the ace silent when asked, follow seat 0's KC with QC, then send garbage at the
    next turn (the strict policy forfeits the match there: to everyone but the holder, both
    matches are the same up to then, the forfeit included)."""
    legal = [a.text for a in decision.legal]
    if "silent" in legal:
        return answer_text("silent")
    if "play:QC" in legal:
        return answer_text("play:QC")
    return garbage()


def _normalized(received: Sequence[ServerMessage]) -> list[ServerMessage]:
    """``received`` with request ids left out (random: see
    test_request_ids_do_not_count_other_seats_decisions)."""
    return [
        dataclasses.replace(m, request_id=0) if isinstance(m, Decision) else m for m in received
    ]


def _two_matches(
    monkeypatch: pytest.MonkeyPatch, game: str, batch: bool
) -> list[tuple[list[FakeBot], list[ServerMessage], MatchOutcome]]:
    out = []
    for hands in _deals(game):
        restore = _arranged(monkeypatch, game, hands)
        spec = dataclasses.replace(_spec(game, 11, FaultPolicy.STRICT), match_id="twin")
        n = len(spec.seats)
        bots = [_bot(spec, s, _holder_script if s == HOLDER else (), batch=batch) for s in range(n)]
        outcome, spectator = _play(spec, [(b, [s]) for s, b in enumerate(bots)])
        restore()
        out.append((bots, spectator, outcome))
    return out


@pytest.mark.parametrize("game", ["spoil_five", "forty_five"])
@pytest.mark.parametrize("batch", [False, True])
def test_other_seats_and_spectators_cannot_tell_a_silent_ace_from_no_ace(
    monkeypatch: pytest.MonkeyPatch, game: str, batch: bool
) -> None:
    (silent_bots, silent_watch, silent_out), (plain_bots, plain_watch, plain_out) = _two_matches(
        monkeypatch, game, batch
    )
    # The deals really differ in what the holder alone is told ...
    holder_kinds = [e.kind for e in _events(_messages(silent_bots[HOLDER]))]
    assert "silent" in holder_kinds
    assert "silent" not in [e.kind for e in _events(_messages(plain_bots[HOLDER]))]
    assert any(e.get("kind") == "silent" for e in silent_out.entries)
    # ... and the match ran on to the holder's forfeit, past its play and the others' turns.
    for out in (silent_out, plain_out):
        assert out.result.reason == "forfeit", out.result
        assert [f.seat for f in out.faults] == [HOLDER]
    # Everything any other seat and a spectator is sent is the same, seq numbers included.
    for seat, (a, b) in enumerate(zip(silent_bots, plain_bots, strict=True)):
        if seat == HOLDER:
            continue
        got_a, got_b = _normalized(_messages(a)), _normalized(_messages(b))
        assert any(isinstance(m, Decision) for m in got_a), seat
        assert got_a == got_b, f"seat {seat} can tell the deals apart"
    assert silent_watch == plain_watch


def test_request_ids_do_not_count_other_seats_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids are drawn at random, so their gaps say nothing of the decisions between them (a
    counter's gap told the next seat that the holder was asked whether to rob). Two random
    53-bit ids lie within 2**24 of each other with odds of about one in 2**28."""
    (silent_bots, _, _), (plain_bots, _, _) = _two_matches(monkeypatch, "spoil_five", False)
    for seat, bot in enumerate(silent_bots + plain_bots):
        ids = [d.request_id for d in bot.decisions]
        assert ids, seat
        assert all(0 < i < 2**53 for i in ids), ids
        assert all(abs(a - b) > 2**24 for a, b in itertools.pairwise(ids)), ids

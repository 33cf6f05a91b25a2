"""``arena mcp``'s tools: an MCP server (the ``mcp`` SDK's ``MCPServer``) over one
:class:`~arena.agents.seat.AgentSeat` (docs/llm.md, "An MCP seat").

Four tools: ``wait_for_turn`` (a long-poll bounded well below a client's usual tool timeout),
``get_state`` (the text view, ``engine.text.render``, and the JSON observation), ``play`` (an
action by its text or number, read by ``engine.text.parse_action``) and ``rules`` (the game's
rules pages). Whatever an agent sends that cannot be done is a tool error with the reason in
one line (``ToolError``); the seat keeps its turn and its connection.

The seat and the tools share one asyncio loop (``anyio.run``'s default backend): over stdio
the SDK's ``stdio_server``, over HTTP hypercorn on a socket bound beforehand, so a bad address is
the caller's one-line error before anything starts.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from hypercorn.asyncio import serve
from hypercorn.config import Config
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from arena.agents.seat import AgentSeat, SeatError, Turn, settle_config
from arena.web.assets import rules_texts
from engine import Action, game_ids
from engine.text import TEXT_VERSION, describe_action, parse_action, render

#: ``wait_for_turn``'s wait when none is given, and its cap (seconds): below the 60 s many MCP
#: clients allow a tool call.
WAIT_DEFAULT_S = 25.0
WAIT_CAP_S = 50.0
#: How long the server stays up after the seat is done, for the agent to read the result.
LINGER_S = 30.0

INSTRUCTIONS = """You hold one seat of a card game match in Card Arena.
Loop: call wait_for_turn; when your_turn is true, call get_state ({view}), then play {how}.
An action that is not legal is refused with the reason, and you may try again. Answer before
time_left_ms runs out: when it does, the referee plays for you and charges a fault. Stop when
status is "over" or "closed". The rules tool gives the game's rules."""
LISTED = ("the table in words and the legal actions, numbered", "one action's text or number")
UNLISTED = ("the table in words", "one action named as the view says, e.g. play:QS")


def _actions(game: str, legal: Sequence[Action]) -> list[dict[str, Any]]:
    return [{"index": i, "text": describe_action(game, a)} for i, a in enumerate(legal)]


def _clock(turn: Turn | None) -> dict[str, Any]:
    if turn is None:
        return {}
    return {
        "time_left_ms": turn.total_ms_left(),
        "move_ms_left": turn.move_ms_left(),
        "bank_ms": turn.bank_ms_left(),
    }


class SeatTools:
    """The tools, over one seat."""

    def __init__(self, seat: AgentSeat, *, list_legal: bool = True) -> None:
        self.seat = seat
        self.list_legal = list_legal

    def status(self) -> dict[str, Any]:
        """Where the seat stands: turn, clock, match, result, what the referee said."""
        seat, match = self.seat, self.seat.match
        out: dict[str, Any] = {"your_turn": seat.turn is not None, "status": seat.status}
        out.update(_clock(seat.turn))
        if match is not None:
            tc = match.time_control
            out["match"] = {
                "match_id": match.match_id,
                "game": match.game.id,
                "seat": match.seat,
                "seats": match.seats,
                "fault_policy": match.fault_policy,
                "time_control": {"move_ms": tc.move_ms, "bank_ms": tc.bank_ms},
            }
        if seat.ended is not None:
            out["result"] = _result(seat)
        if seat.why_closed:
            out["closed"] = seat.why_closed
        out["news"] = seat.take_news()
        return out

    async def wait_for_turn(self, timeout_s: float = WAIT_DEFAULT_S) -> dict[str, Any]:
        """Wait until it is your turn or the match ended (at most timeout_s seconds, default
        25, capped at 50; call again when your_turn is false and status is not over). Says
        whether it is your turn, the time left for this move (time_left_ms, the bank
        included), the match status and what the referee said (news: faults, the end)."""
        if not math.isfinite(timeout_s) or timeout_s < 0:
            raise ToolError("timeout_s must be a number of seconds from 0 to 50")
        await self.seat.wait_for_turn(min(timeout_s, WAIT_CAP_S))
        return self.status()

    def get_state(self) -> dict[str, Any]:
        """Your view of the match: the table in words (text), the legal actions with their
        numbers when it is your turn, the observation as JSON, and the result once over."""
        seat, match = self.seat, self.seat.match
        if match is None:
            raise ToolError(f"no match has started yet (status {seat.status}): wait_for_turn")
        turn = seat.turn
        legal = turn.legal if turn else ()
        observation = turn.decision.observation if turn else match.observation
        out = self.status()
        if observation:
            try:
                config = settle_config(match, observation)
            except SeatError as err:
                raise ToolError(str(err)) from None
            view = render(match.game.id, config, observation, legal, list_legal=self.list_legal)
            out["text"] = view.text
            out["text_version"] = view.version
        out["observation"] = observation
        out["legal"] = _actions(match.game.id, legal) if self.list_legal or not legal else []
        return out

    async def play(self, action: str | int) -> dict[str, Any]:
        """Play one legal action: its text (as get_state lists it, e.g. "play:QS") or its
        number. An action that is not legal, or not understood, is refused with the reason,
        and it is still your turn."""
        seat, match, turn = self.seat, self.seat.match, self.seat.turn
        if turn is None or match is None:
            raise ToolError(seat.describe_no_turn())
        answer = str(action)[:200]
        parsed = parse_action(match.game.id, answer, turn.legal)
        if parsed.index is None:
            raise ToolError(f"not played: {parsed.reason}; it is still your turn")
        try:
            played = await seat.answer(parsed.index)
        except SeatError as err:
            raise ToolError(str(err)) from None
        return {
            "played": describe_action(match.game.id, played),
            "index": parsed.index,
            "read_as": parsed.how,
        }

    def rules(self, game: str = "") -> dict[str, Any]:
        """The game's rules: the law, and the referee's decisions where the law is silent. The
        match's game, or (before the match starts) the game id given."""
        match = self.seat.match
        game_id = match.game.id if match is not None else game
        if not game_id:
            raise ToolError("no match has started yet: name the game, or wait_for_turn first")
        if game_id not in game_ids():
            raise ToolError(f"unknown game {game_id[:40]!r} (games: {', '.join(game_ids())})")
        pages = rules_texts(game_id)
        if not pages:
            raise ToolError(f"this installation has no rules pages for {game_id}")
        return {"game": game_id, "pages": [{"name": p.name, "text": p.text} for p in pages]}


def _result(seat: AgentSeat) -> dict[str, Any]:
    end = seat.ended
    assert end is not None
    r = end.result
    return {
        "summary": r.summary,
        "scores": list(r.scores),
        "ranks": list(r.ranks),
        "reason": r.reason,
        "forfeited_by": r.forfeited_by,
        "faults": [{"seat": f.seat, "kind": f.kind, "detail": f.detail} for f in end.faults],
    }


def build_server(tools: SeatTools) -> MCPServer[Any]:
    """The MCP server offering ``tools``."""
    view, how = LISTED if tools.list_legal else UNLISTED
    server: MCPServer[Any] = MCPServer(
        "card-arena-seat",
        instructions=INSTRUCTIONS.format(view=view, how=how),
        version=TEXT_VERSION,
        log_level="WARNING",
    )
    server.add_tool(tools.wait_for_turn, name="wait_for_turn")
    server.add_tool(tools.get_state, name="get_state")
    server.add_tool(tools.play, name="play")
    server.add_tool(tools.rules, name="rules")
    return server


async def _hold(seat: AgentSeat, stop: Callable[[], None], linger_s: float) -> None:
    """Hold the seat, then (its matches played, or the connection gone) serve on a while for
    the agent to read how it ended, and ``stop``."""
    await seat.run()
    await anyio.sleep(linger_s)
    stop()


async def serve_stdio(seat: AgentSeat, tools: SeatTools, linger_s: float = LINGER_S) -> None:
    """Serve the tools on stdin/stdout while holding the seat; returns when the agent closes
    stdin (the seat's connection then ends: the referee's disconnection rules apply), or
    ``linger_s`` after the seat is done."""
    server = build_server(tools)
    async with anyio.create_task_group() as group:
        group.start_soon(_hold, seat, group.cancel_scope.cancel, linger_s)
        await server.run_stdio_async()
        group.cancel_scope.cancel()


async def serve_http(
    seat: AgentSeat,
    tools: SeatTools,
    listener: socket.socket,
    linger_s: float = LINGER_S,
) -> None:
    """Serve the tools over streamable HTTP (path ``/mcp``) on ``listener`` while holding the
    seat; returns ``linger_s`` after the seat is done."""
    server = build_server(tools)
    # Starlette's app is an ASGI app; hypercorn's annotation names its own scope types.
    app: Any = server.streamable_http_app(host=listener.getsockname()[0])
    config = Config()
    # hypercorn closes what it serves on: a copy, so the caller's socket stays its own.
    config.bind = [f"fd://{os.dup(listener.fileno())}"]
    config.graceful_timeout = 0.5
    config.accesslog = None
    config.errorlog = None
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_hold, seat, stop.set, linger_s)
        await serve(app, config, shutdown_trigger=stop.wait)
        group.cancel_scope.cancel()

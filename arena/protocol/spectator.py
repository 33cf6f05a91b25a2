"""The spectator service's messages (Spectator.ListMatches, WatchMatch, Standings): plain
values to protobuf and back, for the server and for clients such as ``arena health``.
"""

from __future__ import annotations

from collections.abc import Iterable

from cardarena._pb import arena_pb2 as pb
from cardarena.codec import proto_to_player, proto_to_result
from cardarena.messages import MatchStatus, MatchSummary, Standing

from arena.protocol.codec import player_to_proto, result_to_proto


def list_matches_request(running_only: bool = False) -> pb.ListMatchesRequest:
    """Encode a ListMatches request (client side)."""
    return pb.ListMatchesRequest(running_only=running_only)


def read_list_matches_request(msg: pb.ListMatchesRequest) -> bool:
    """Whether only running matches are asked for."""
    return msg.running_only


def list_matches_response(matches: Iterable[MatchSummary]) -> pb.ListMatchesResponse:
    """Encode the match list."""
    out = pb.ListMatchesResponse()
    for m in matches:
        item = out.matches.add(match_id=m.match_id, game=m.game, status=m.status)
        item.players.extend(player_to_proto(p) for p in m.players)
        if m.result is not None:
            item.result.CopyFrom(result_to_proto(m.result))
    return out


def read_list_matches_response(msg: pb.ListMatchesResponse) -> list[MatchSummary]:
    """Decode the match list (client side)."""
    return [
        MatchSummary(
            m.match_id,
            m.game,
            tuple(proto_to_player(p) for p in m.players),
            MatchStatus(m.status),
            proto_to_result(m.result) if m.HasField("result") else None,
        )
        for m in msg.matches
    ]


def watch_request(match_id: str) -> pb.WatchMatchRequest:
    """Encode a WatchMatch request (client side)."""
    return pb.WatchMatchRequest(match_id=match_id)


def read_watch_request(msg: pb.WatchMatchRequest) -> str:
    """The match a spectator wants to watch."""
    return msg.match_id


def standings_request(game: str = "") -> pb.StandingsRequest:
    """Encode a Standings request (client side)."""
    return pb.StandingsRequest(game=game)


def read_standings_request(msg: pb.StandingsRequest) -> str:
    """The game asked for, or ``""`` for all."""
    return msg.game


def standings_response(rows: Iterable[Standing]) -> pb.StandingsResponse:
    """Encode standings."""
    return pb.StandingsResponse(
        standings=[
            pb.Standing(
                bot_name=r.bot_name,
                game=r.game,
                matches=r.matches,
                wins=r.wins,
                mean_score=r.mean_score,
                faults=r.faults,
            )
            for r in rows
        ]
    )


def read_standings_response(msg: pb.StandingsResponse) -> list[Standing]:
    """Decode standings (client side)."""
    return [
        Standing(r.bot_name, r.game, r.matches, r.wins, r.mean_score, r.faults)
        for r in msg.standings
    ]

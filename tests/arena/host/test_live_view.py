"""``/api/v1/live``: the matches in progress, who plays them and nothing of their play (one
rotation's public cards are another rotation's hidden hands). Over the real app and store with
the arena's running list given, and over a real ``arena host`` whose ladder real bots play."""

from __future__ import annotations

from pathlib import Path

import grpc
import httpx
import pytest
from cardarena._pb import arena_pb2_grpc as pb_grpc

from arena.protocol import spectator
from engine import Result
from tests.arena.host.processes import GOOD_BOT, host_in
from tests.arena.host.serving import hosting, validated_versions
from tests.waiting import wait_until

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")
#: Everything a live match may say.
LIVE_KEYS = {"match_id", "unit", "phase", "rotation", "seats"}


@pytest.mark.parametrize("dask", [None, "tcp://127.0.0.1:8786"])
def test_only_the_competitions_unfinished_matches_and_who_plays_them(
    tmp_path: Path, dask: str | None
) -> None:
    # The arena's board: a finished match still listed, a validation match, one playing.
    board = ["u1-r0", "validate-7-0", "u1-r1"]
    with hosting(tmp_path, dask=dask, running=lambda: board) as host:
        a, b = validated_versions(host.store, ("a", "b"))
        rotations = [(f"u1-r{r}", r, (a, b) * 2) for r in (0, 1)]
        host.store.create_unit("ladder", 1, (a, b), rotations)
        host.store.commit_match("u1-r0", WIN, [], None)
        live = httpx.get(f"{host.url}/api/v1/live").json()
        page = httpx.get(f"{host.url}/live")
    assert live == {
        "matches": [
            {"match_id": "u1-r1", "unit": 1, "phase": "ladder", "rotation": 1,
             "seats": ["a@1", "b@1", "a@1", "b@1"]}
        ],
        "on_workers": dask is not None,
    }  # fmt: skip
    assert page.status_code == 200 and 'data-page="live"' in page.text


@pytest.mark.slow
def test_a_real_hosts_ladder_shows_its_matches_as_they_play(tmp_path: Path) -> None:
    with host_in(tmp_path, "live-cup").running() as host:
        token = host.add_author("alice")
        for bot in ("alpha", "beta"):
            host.submit(token, bot, GOOD_BOT)
        seen: list[dict[str, object]] = []
        with host.client() as c:

            def playing() -> bool:
                seen.extend(c.get("/api/v1/live").json()["matches"])
                return bool(seen)

            wait_until(playing, 180, what="a ladder match in progress")
            match = seen[0]
            assert set(match) == LIVE_KEYS
            # Its gRPC port shows no match to spectators: a bot at one rotation of a deal could
            # watch the other.
            with grpc.insecure_channel(host.grpc) as channel:
                stub = pb_grpc.SpectatorStub(channel)
                with pytest.raises(grpc.RpcError) as info:
                    list(stub.WatchMatch(spectator.watch_request(str(match["match_id"]))))
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
                listed = stub.ListMatches(spectator.list_matches_request())
                assert spectator.read_list_matches_response(listed) == []
            assert sorted(set(match["seats"])) == ["alpha@1", "beta@1"]  # type: ignore[arg-type]
            # It is the ladder's, and it finishes among the matches like any other.
            finished = f"/api/v1/matches/{match['match_id']}"
            wait_until(lambda: c.get(finished).status_code == 200, 120, what="its end")

"""``$ARENA_RESOLVE`` read as curl's ``--connect-to``: the address to connect to, the name kept
for TLS and ``:authority`` (the connection itself: tests/arena/host/test_hosting_page.py)."""

from __future__ import annotations

import pytest
from cardarena import BotError, RandomBot, run_bot
from cardarena.resolve import ResolveError, grpc_target, parse_resolve


def test_entries_map_a_name_and_port_to_an_address() -> None:
    mapping = parse_resolve("Arena.Example.org:8443:127.0.0.1:18443, arena.example.org:50051:[::1]")
    assert mapping == {
        ("arena.example.org", 8443): ("127.0.0.1", 18443),
        ("arena.example.org", 50051): ("::1", 50051),
    }
    assert parse_resolve("") == {}


@pytest.mark.parametrize(
    "entry", ["arena.example.org:8443", "a:0:127.0.0.1", "a:1:b:70000", "a:b:c"]
)
def test_a_malformed_entry_is_one_line(entry: str) -> None:
    with pytest.raises(ResolveError, match=rf"^ARENA_RESOLVE: '{entry}' is not NAME:PORT"):
        parse_resolve(entry)


def test_a_mapped_grpc_target_keeps_its_name() -> None:
    mapping = parse_resolve("arena.example.org:50051:[::1]:4000")
    assert grpc_target("arena.example.org:50051", mapping) == (
        "[::1]:4000",
        [
            ("grpc.ssl_target_name_override", "arena.example.org"),
            ("grpc.default_authority", "arena.example.org:50051"),
        ],
    )
    assert grpc_target("arena.example.org:50052", mapping) == ("arena.example.org:50052", [])
    assert grpc_target("unix:/tmp/arena.sock", mapping) == ("unix:/tmp/arena.sock", [])


def test_a_missing_certificate_named_in_the_environment_is_named_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_CA_CERT", "/nonexistent/cert.pem")
    with pytest.raises(BotError) as err:
        run_bot(RandomBot(), "127.0.0.1:1", token="t")
    assert str(err.value) == (
        "cannot read the CA certificate '/nonexistent/cert.pem' ($ARENA_CA_CERT): "
        "No such file or directory"
    )


def test_a_malformed_resolve_stops_the_bot_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_RESOLVE", "arena.example.org")
    with pytest.raises(BotError, match=r"^ARENA_RESOLVE: 'arena.example.org' is not NAME:PORT"):
        run_bot(RandomBot(), "arena.example.org:50051", token="t")

"""A bot the arena starts finds the arena's own address in its environment, and nothing of how
the arena's operator reaches other hosts (a certificate, an address override)."""

from __future__ import annotations

from arena.bots.process import bot_environment


def test_the_arena_s_own_bots_do_not_inherit_how_their_operator_reaches_hosts() -> None:
    operator = {"ARENA_RESOLVE": "x:1:y", "ARENA_CA_CERT": "cert.pem", "ARENA_OTHER": "kept"}
    env = bot_environment("127.0.0.1:5000", "t", 1, operator)
    assert "ARENA_RESOLVE" not in env and "ARENA_CA_CERT" not in env
    assert (env["ARENA_ADDRESS"], env["ARENA_OTHER"]) == ("127.0.0.1:5000", "kept")

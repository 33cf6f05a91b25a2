"""Competition submissions that speak stdio: ``protocol = "stdio"`` in their cardarena.toml, a
Python script and a Go binary. A real ``arena host`` process, real uploads, real bot processes
(sandboxed as the host runs them), rated beside a gRPC bot."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.arena.host.processes import (
    GOOD_BOT,
    Host,
    archive,
    bot_archive,
    competition_config,
)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
OCTET = {"Content-Type": "application/octet-stream"}


def stdio_archive(manifest_extra: str = 'protocol = "stdio"\n') -> bytes:
    manifest = f'command = "python3 random_bot.py"\nruntime = "python3"\n{manifest_extra}'
    code = (ROOT / "reference_bots/stdio/random_bot.py").read_bytes()
    return archive({"cardarena.toml": manifest.encode(), "random_bot.py": code})


def go_archive(tmp_path: Path, binary: Path) -> bytes:
    """What a Go author uploads: ``tar czf`` of a manifest and the static binary ``go build``
    made (its executable bit kept), which the host runs as is."""
    manifest = tmp_path / "cardarena.toml"
    manifest.write_text('command = "./random_bot_go"\nruntime = "native"\nprotocol = "stdio"\n')
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        tar.add(manifest, arcname="cardarena.toml")
        tar.add(binary, arcname="random_bot_go")
    return out.getvalue()


@pytest.mark.slow
def test_a_stdio_submission_plays_rated_matches_without_faults(
    tmp_path: Path, go_stdio_bot: Path
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    host = Host(config, tmp_path / "cup", None)
    with host.running():
        alice, bob = host.add_author("alice"), host.add_author("bob")
        with host.client(alice) as a, host.client(bob) as b:
            put = a.put("/api/v1/bots/piped/versions", content=stdio_archive(), headers=OCTET)
            assert put.status_code == 201, put.text
            put = b.put("/api/v1/bots/grpc/versions", content=bot_archive(GOOD_BOT), headers=OCTET)
            assert put.status_code == 201, put.text
            go_tgz = go_archive(tmp_path, go_stdio_bot)
            put = b.put("/api/v1/bots/gopher/versions", content=go_tgz, headers=OCTET)
            assert put.status_code == 201, put.text
            bad = a.put(
                "/api/v1/bots/bad/versions",
                content=stdio_archive('protocol = "smoke"\n'),
                headers=OCTET,
            )
            assert bad.status_code == 400, bad.text
            assert '"protocol" "smoke": must be one of grpc, stdio' in bad.json()["detail"]

            def rated() -> set[str]:
                rows: list[dict[str, Any]] = a.get("/api/v1/leaderboard").json()
                return {r["ref"] for r in rows if r["matches"] > 0}

            everyone = {"piped@1", "gopher@1", "grpc@1"}
            wait_until(lambda: rated() >= everyone, 240, what="all three to be rated")
            for bot in ("piped", "gopher"):
                matches = a.get("/api/v1/matches", params={"bot": bot}).json()
                rows = matches if isinstance(matches, list) else matches["matches"]
                assert rows, matches
                assert all("faults" in m and not m["faults"] for m in rows), rows

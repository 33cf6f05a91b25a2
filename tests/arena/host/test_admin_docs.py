"""docs/hosting.md's "Admin" block run as written, in the host's shell, against the page's own host
(tests/arena/host/test_hosting_page.py's ``hosted``): placeholders filled in, nothing else."""

from __future__ import annotations

import re

import pytest
from cardarena.resolve import parse_resolve

from arena.host.client import RemoteClient
from tests.arena.host.test_hosting_page import NAME, Shell, commands
from tests.arena.host.test_hosting_page import hosted as hosted  # the fixture
from tests.waiting import wait_until


@pytest.mark.slow
def test_the_admin_commands_run_as_printed(hosted: tuple[Shell, Shell, RemoteClient]) -> None:
    host, _, watcher = hosted
    (add_author,) = commands("arena host add-author")
    token = re.search(r"API token (cau_\S+)", host.run(add_author))
    assert token is not None
    export, *admin = commands(f"export ARENA_SERVER=https://{NAME}:8443 ARENA_ADMIN_TOKEN")
    host.run(export)
    resolve = parse_resolve(host.env["ARENA_RESOLVE"])
    alice = RemoteClient(watcher.base_url, token.group(1), watcher.cafile, resolve=resolve)
    version = alice.live("mybot-live").version.id
    wait_until(lambda: watcher.version(version).status == "validated", 60, what="validated")
    said = {}
    for command in admin:
        if command.startswith("arena remote admin reopen"):
            host.run("arena remote admin ladder --close")
        said[command.split()[3]] = host.run(command.replace("VERSION_ID", str(version)))
    assert "alice (author 1" in said["authors"]
    assert said["queue"].startswith("validation queue: empty")
    assert said["retire"].startswith("retired mybot-live@1")
    assert "suspended alice" in said["suspend"] and "new API token" in said["reinstate"]
    assert said["rerun"] == "no failed unit played again\n"
    assert said["reopen"].startswith("ladder: running")
    actions = [line.split()[4] for line in said["audit"].splitlines()]
    assert actions == [
        "reopen",
        "ladder",
        "reinstate",
        "suspend",
        "retire",
        "add-author",
    ], said["audit"]

"""The C++ reference bot (reference_bots/cpp), built once per test session: ``make`` in its
directory, which rebuilds only what its sources or the .proto changed. A fixture, so that any
test needing the bot gets it whatever order the tests run in. The build needs Debian's gRPC C++
toolchain, which ``make cpp-bot`` (run by ``make test``) installs as root; without it the tests
fail saying so: the protocol's claim that any language can play is tested, not skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPP_DIR = ROOT / "reference_bots" / "cpp"
CPP_BOT = CPP_DIR / "build" / "cpp-bot"
#: What the build needs: the compiler, pkg-config, and Debian's packages of gRPC for C++.
TOOLS = ("g++", "make", "pkg-config", "protoc", "grpc_cpp_plugin")
DEBS = "g++ make pkg-config libgrpc++-dev protobuf-compiler-grpc"


def _missing() -> list[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if "pkg-config" not in missing:
        found = subprocess.run(
            ["pkg-config", "--exists", "grpc++", "protobuf"], capture_output=True, check=False
        )
        if found.returncode != 0:
            missing.append("the pkg-config modules grpc++ and protobuf")
    return missing


@pytest.fixture(scope="session")
def cpp_bot() -> list[str]:
    """The command that starts the C++ bot, after making sure its build is current."""
    missing = _missing()
    if missing:
        pytest.fail(
            f"the C++ reference bot cannot be built: missing {', '.join(missing)}; "
            f"run `make cpp-bot` as root (it installs {DEBS} with apt-get)"
        )
    done = subprocess.run(
        ["make", "-s", "-C", str(CPP_DIR)], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        pytest.fail(f"building {CPP_BOT} failed:\n{done.stdout}\n{done.stderr}")
    assert CPP_BOT.is_file(), f"make did not build {CPP_BOT}"
    return [str(CPP_BOT)]

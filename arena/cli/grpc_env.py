"""Imported first by the command line: keeps gRPC's C core from writing its own log lines.

The C core logs to stderr on its own (a failed bind, say, comes out as an ``E1129 …
add_port.cc`` line before our one-line error); a user of ``arena`` should see our messages only.
It reads ``GRPC_VERBOSITY`` once, when grpc is first imported, hence a module of its own that the
CLI imports before anything that may import grpc. ``GRPC_VERBOSITY=debug arena …`` still shows
everything.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRPC_VERBOSITY", "NONE")

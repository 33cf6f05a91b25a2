"""``make bench``: speed figures for the engine and the arena, each beside a reference measured in
the same run (OpenSpiel's C++ engines, a raw grpc.aio ping-pong, a baseline rating fit), because
absolute times on a shared machine drift from run to run while same-run ratios hold.

``python -m benchmarks`` runs every section, prints one table and writes ``out/bench/latest.json``
(docs/performance.md explains the figures and what limits each).
"""

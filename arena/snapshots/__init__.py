"""Bots as content-addressed snapshots: an uploaded archive checked and unpacked
(:mod:`~arena.snapshots.archive`), and the immutable tree it becomes, named by the SHA-256 of its
files (:mod:`~arena.snapshots.tree`). The competition service stores its versions this way, and a
cluster's workers receive bots this way (arena/cluster/), each checking the address before a bot
runs.
"""

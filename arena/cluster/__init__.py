"""Matches on more than one machine: a match as a task of Dask distributed.

A match is already a pure job (a plan in, a result and a record out), so a cluster only moves it:

- :mod:`~arena.cluster.task`: the plain values that cross the wire, a :class:`ClusterMatch` out
  and a :class:`ClusterResult` back (no Dask in it: the tournament and the host import it).
- :mod:`~arena.cluster.bundles`: a bot as a content-addressed snapshot (arena/snapshots/), packed
  by the coordinator, fetched by a worker on first use, checked against its SHA-256 and cached.
- :mod:`~arena.cluster.service`: a worker's match service: a trio thread with its own arena
  server, sandbox and pools of long-lived bot processes, that the Dask tasks hand matches to.
- :mod:`~arena.cluster.worker`: ``arena worker``: a Dask worker carrying that service.
- :mod:`~arena.cluster.coordinator`: the coordinator's side: connect, keep no more matches in
  flight than the workers have slots, map the cluster's failures to one-line errors.

The coordinator alone writes the store; a worker writes nothing the coordinator reads.
"""

"""Card Arena: the referee server, bots' processes, tournaments, ratings, records and the
``arena`` command line. The arena knows games only through :mod:`engine`'s interface.

The layers, each using only those above it (tests/test_architecture.py enforces the edges):

- ``errors``, ``checks`` (a config's table read key by key), ``policy`` (fault kinds, policies,
  the forfeit rule), ``rules`` (the rules of a match, and a played match), ``seeds``, ``layout``
  (home, output directories, record and seat-log names), ``logging``, ``version``: plain values.
- ``protocol``: the server's side of the protocol; the messages, a bot's side and the generated
  code are the SDK's (``cardarena``, sdk/python), a distribution of its own.
- ``records``: hash-chained match records; replay, verify, view, html (``ask`` also uses
  ``protocol`` and ``bots``).
- ``bots``: starting a seat's bot as a sandboxed process or a container; knows no server.
- ``server``: the gRPC referee server (hub, referee, spectators, lobby).
- ``match`` (one match with launched bots), ``registry`` (submitted bots), ``ratings``,
  ``selfplay``.
- ``tournament``: config, schedule, store, one match as a job, the runner, reports, the demo.
- ``cli``: the ``arena`` command; nothing imports it.

``engine`` never imports ``arena``; ``reference_bots`` (strategies built on ``cardarena.Bot``)
is imported only by ``arena.cli``, for ``arena bot``.
"""

"""The server's side of the protocol, ``cardarena.v1`` (proto/cardarena/v1/arena.proto). The
messages as plain values, a bot's side of the wire and the generated code are the SDK's
(``cardarena``, sdk/python): the arena depends on it.

Modules:
- ``codec``: what a bot sends, read; what the server sends, written; engine results become the
  protocol's.
- ``observations``: a game's observation written along the SDK's mirror plan.
- ``spectator``: the spectator service's messages.
- ``wireformat``: the protobuf wire format written by hand for the hot path, JSON for message
  fields, and the switch to the C encoder ``_wire.c`` where it was built.

May use: ``engine`` and the SDK's protocol modules; nothing else of the arena.
"""

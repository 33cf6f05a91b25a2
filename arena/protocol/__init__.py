"""The protocol, ``cardarena.v1`` (proto/cardarena/v1/arena.proto): the only code that knows
protobuf.

Modules:
- ``messages``: the messages as plain frozen dataclasses; imports no protobuf, so a module that
  needs a ``TimeControl`` or a ``FaultInfo`` loads nothing heavy.
- ``codec``: plain values to protobuf and back, both directions, for bot streams.
- ``observations``: a game's typed observation message mirrored from its engine dataclass.
- ``spectator``: the spectator service's messages.
- ``rpc``: the gRPC services' base classes, stubs and channel options.
- ``wireformat``: the protobuf wire format written by hand for the hot path, JSON for message
  fields, and the switch to the C encoder ``_wire.c`` where it was built.
- ``_pb``: generated code, reached through the four translators above only.

May use: ``engine``; nothing else of the arena.
"""

"""The protocol, ``cardarena.v1`` (proto/cardarena/v1/arena.proto): the only code that knows
protobuf.

Modules: ``messages`` (the messages as plain frozen dataclasses; imports no protobuf, so a
module that needs a ``TimeControl`` loads nothing heavy), ``codec`` (plain values to wire bytes
and back, both directions, and the generic observation mirror), ``rpc`` (the gRPC services' base
classes and stubs), ``_wire.c`` (the C encoder ``codec`` uses where it was built), ``_pb``
(generated code: reached through ``codec`` and ``rpc`` only). May use: ``engine``,
``arena.errors``; nothing else of the arena.
"""

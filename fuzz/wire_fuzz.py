"""The fuzz target: a bot's bytes, read by the C reader (arena/protocol/_wire.c, ``answer``) and
by the pure Python path (protobuf), which must agree (docs/fuzzing.md).

Run by fuzz/run.py (``make fuzz``), under the sanitizer runtime: it loads the instrumented
build of the C module (fuzz/build.py) in place of the normal one, so ``wireformat.ACCEL`` is
that build. For each input:

- ``codec.bot_bytes_to_plain`` with the C reader on and with it off must return the same value
  (the same Answer, Hello, Ping or Garbage), and neither may raise: the server reads every
  bot's bytes with it, and undecodable bytes are a Garbage, never an exception;
- what ``answer()`` returns is ``None`` or a pair of integers in range (uint64, uint32), and
  protobuf reads the same bytes as exactly that answer.

A failed check raises, which atheris reports as a finding and saves as a crash file; an
AddressSanitizer or UBSan report aborts the process, which libFuzzer saves the same way.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import atheris

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _load_instrumented() -> ModuleType:
    path = os.environ.get("FUZZ_WIRE_MODULE")
    if not path:
        sys.exit("wire_fuzz.py: set FUZZ_WIRE_MODULE to the instrumented build (fuzz/run.py does)")
    spec = importlib.util.spec_from_file_location("arena.protocol._wire", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # arena.protocol.wireformat imports arena.protocol._wire: it finds this one.
    sys.modules["arena.protocol._wire"] = module
    return module


INSTRUMENTED = _load_instrumented()

with atheris.instrument_imports(include=["arena.protocol"]):
    from cardarena._pb import arena_pb2 as pb
    from cardarena.messages import Answer

    from arena.protocol import codec, wireformat

if wireformat.BUILT is not INSTRUMENTED:
    sys.exit("wire_fuzz.py: arena.protocol did not pick up the instrumented module")
WIRE: ModuleType = INSTRUMENTED


class Disagreement(AssertionError):
    """The C reader and the Python path read the same bytes differently."""


def check(data: bytes) -> None:
    """Raise when the two readers disagree on ``data``."""
    wireformat.ACCEL = WIRE
    with_c = codec.bot_bytes_to_plain(data)
    wireformat.ACCEL = None
    with_python = codec.bot_bytes_to_plain(data)
    if with_c != with_python:
        raise Disagreement(f"{data!r}: C path {with_c!r}, Python path {with_python!r}")
    got = WIRE.answer(data)
    if got is None:
        return
    if not (
        isinstance(got, tuple)
        and len(got) == 2
        and all(type(x) is int for x in got)
        and 0 <= got[0] < 2**64
        and 0 <= got[1] < 2**32
    ):
        raise Disagreement(f"{data!r}: answer() returned {got!r}")
    msg = pb.BotMessage.FromString(data)  # the C reader accepted it: protobuf must too
    if (msg.WhichOneof("kind"), msg.action.WhichOneof("choice")) != ("action", "index"):
        raise Disagreement(f"{data!r}: C read an answer, protobuf a {msg!r}")
    if Answer(msg.action.request_id, index=msg.action.index) != Answer(*got):
        raise Disagreement(f"{data!r}: C read {got!r}, protobuf {msg.action!r}")


def main() -> None:
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

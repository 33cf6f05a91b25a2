"""Write the fuzzer's seed corpus: real BotMessage bytes from the codec's own encoders
(``answer_to_proto``, ``hello_to_proto``, ``ping_to_proto``), and variants of them that a broken
bot could send (cut short, overlong varints, unknown fields, groups, junk appended).

    .venv/bin/python fuzz/make_seeds.py [DIR]     # default out/fuzz/seeds

One file per input, named by its SHA-1, so that running it again rewrites the same files.
Prints how many seeds the folder holds.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cardarena import codec as bot_codec  # noqa: E402
from cardarena import messages  # noqa: E402

from arena.protocol.wireformat import varint_of  # noqa: E402

NUMBERS = (0, 1, 127, 128, 300, 2**31 - 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1)


def real_messages() -> Iterator[bytes]:
    """What bots really send, as the SDK encodes it."""
    for rid in NUMBERS:
        for index in (0, 1, 7, 127, 128, 2**32 - 1):
            yield bot_codec.answer_to_proto(rid, index=index).SerializeToString()
        yield bot_codec.answer_to_proto(rid, text="play:AS").SerializeToString()
        yield bot_codec.answer_to_proto(rid).SerializeToString()  # neither: garbage
        yield bot_codec.ping_to_proto(rid).SerializeToString()
    yield bot_codec.answer_to_proto(5, text="é" * 200).SerializeToString()  # a two-byte length
    yield bot_codec.hello_to_proto(messages.Hello("greedy-whist")).SerializeToString()
    yield bot_codec.hello_to_proto(
        messages.Hello(
            "random-bot", "1.2.0", "tok-123", 1, ("whist", "tennis_whist"), 3, True, True, True
        )
    ).SerializeToString()
    yield bot_codec.hello_to_proto(messages.Hello("", protocol_version=0)).SerializeToString()


def key(field: int, wire_type: int) -> bytes:
    return varint_of((field << 3) | wire_type)


def overlong(n: int, width: int) -> bytes:
    """``n`` as a varint padded with continuation bytes to ``width`` bytes (valid protobuf)."""
    out = bytearray(varint_of(n))
    out[-1] |= 0x80
    out.extend(b"\x80" * (width - len(out) - 1))
    out.append(0)
    return bytes(out)


def act(body: bytes) -> bytes:
    """A BotMessage whose action field holds ``body``, its length right."""
    return b"\x12" + varint_of(len(body)) + body


def crafted() -> Iterator[bytes]:
    """Shapes a hand-written or broken bot could send: each one near a branch of the reader."""
    action = b"\x08\x05\x10\x02"  # request_id 5, index 2
    yield b"\x12" + overlong(len(action), 3) + action  # overlong length
    yield act(b"\x08" + overlong(5, 3) + b"\x10\x02")  # overlong request_id
    yield act(b"\x08\x05\x10" + overlong(2, 10))  # a ten-byte index
    yield act(b"\x08\x05\x10" + b"\xff" * 9 + b"\x7f")  # ten bytes, bits past 64
    yield act(b"\x08" + b"\xff" * 9 + b"\x7f" + b"\x10\x02")  # the same in request_id
    yield act(b"\x08\x05\x10" + b"\xff" * 10 + b"\x01")  # eleven bytes: too long
    yield act(b"\x08\x05\x10" + b"\xff" * 10)  # a varint that never ends
    yield act(b"\x08\x05\x10\x80\x80\x80\x80\x10")  # index 2**32: past uint32
    yield act(b"\x10\x02\x08\x05")  # fields out of order
    yield act(action + b"\x10\x03")  # index twice: protobuf keeps the last
    yield act(b"\x08\x05" + action)  # request_id twice
    yield act(action) + act(action)  # action twice: merged
    yield act(action) + b"\x1a\x02\x08\x09"  # then a ping: the oneof switches
    yield act(action + b"\x20\x01")  # an unknown field inside the action
    yield act(action) + key(99, 0) + b"\x01"  # an unknown field after it
    yield key(2**29 - 1, 0) + b"\x01" + act(action)  # the largest field number
    yield varint_of(2**32 << 3) + b"\x01" + act(action)  # a field number past 32 bits
    yield key(0, 0) + b"\x01"  # field number 0: invalid
    yield b"\x12\x05" + action  # length past the end
    yield b"\x12\x03" + action  # length short of the end
    yield b"\x12" + b"\xff" * 9 + b"\x01" + action  # a length that overflows
    yield b"\x13\x14"  # an empty group in place of the action (wire types 3, 4)
    yield b"\x0b" + act(action) + b"\x0c"  # a group wrapping an action
    yield b"\x0b" * 120 + b"\x0c" * 120  # nested groups past protobuf's depth limit
    yield b"\x1b" * 50 + b"\x1c" * 49  # a group never closed
    yield b"\x1b\x24"  # a group closed by another field's end
    yield b"\x0c"  # an end of group with no start
    yield act(b"\x0d\x05\x00\x00\x00\x10\x02")  # request_id as fixed32 (wire type 5)
    yield act(b"\x09\x05" + b"\x00" * 7 + b"\x10\x02")  # request_id as fixed64 (wire type 1)
    yield act(b"\x12\x01\x02")  # index as a packed field
    yield b"\x0e\x00" + b"\x0f\x00"  # wire types 6 and 7 do not exist
    yield act(b"\x1a\x03\xff\xfe\xfd")  # text that is not UTF-8
    yield b"\x0a\x03\x0a\x01\xc3"  # a Hello whose name is cut inside a character
    yield b""


def variants(data: bytes) -> Iterator[bytes]:
    yield data
    for cut in range(len(data)):  # every prefix
        yield data[:cut]
    yield data + b"\x00"
    yield data + b"\x10\x01"
    if data:
        yield data[:-1] + bytes([data[-1] | 0x80])  # the last varint left open


def seeds() -> list[bytes]:
    found = {v for m in real_messages() for v in variants(m)}
    found.update(v for m in crafted() for v in variants(m))
    return sorted(found)


def write(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {hashlib.sha1(data).hexdigest(): data for data in seeds()}
    for old in folder.iterdir():  # the seeds of an older copy of this script
        if old.name not in wanted:
            old.unlink()
    for name, data in wanted.items():
        (folder / name).write_bytes(data)
    return len(wanted)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "out" / "fuzz" / "seeds"
    print(f"{write(folder)} seeds in {folder}")


if __name__ == "__main__":
    main()

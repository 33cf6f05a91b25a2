"""The stdio link's fast paths give what json_format gives: an answer line read without it is the
same Answer (or the same refusal), and every line the arena writes is json_format's mapping
(tests/arena/protocol/test_jsonmap.py checks the encoder on every message type and game)."""

from __future__ import annotations

import pytest
from cardarena import rpc
from cardarena.messages import BotMessage, Garbage
from google.protobuf import json_format

from arena.protocol import codec
from arena.server.stdio import decode_line


def reference(line: bytes) -> BotMessage:
    """decode_line as it was: json_format for every line."""
    try:
        msg = json_format.Parse(line, rpc.BotMessage())
    except Exception:
        return Garbage("")
    return codec.bot_proto_to_plain(msg)


LINES = [
    b'{"action":{"requestId":"7","index":2}}',
    b'{"action":{"requestId":"0","index":0}}',
    b'{"action":{"requestId":"18446744073709551615","index":2147483647}}',
    b'{"action":{"requestId":"18446744073709551616","index":1}}',  # over uint64
    b'{"action":{"requestId":"99999999999999999999","index":1}}',
    b'{"action":{"requestId":"3","index":2147483648}}',  # over int32
    b'{"action":{"requestId":"3","index":9999999999}}',
    b'{"action":{"requestId":"007","index":1}}',
    b'{"action":{"requestId":"7","index":01}}',
    b'{"action":{"requestId":7,"index":2}}',
    b'{"action":{"index":2,"requestId":"7"}}',
    b'{"action":{"requestId":"7","index":2,"note":"why"}}',
    b'{"action":{"requestId":"7","index":-1}}',
    b'{"action":{"requestId":"7","index":2}} ',
    b'{"action":{"requestId":"7","index":2}}\r',
    b' {"action":{"requestId":"7","index":2}}',
    b'{"action":{"requestId":"7","index":2}}{}',
    b'{"action":{"requestId":"7","requestId":"8","index":2}}',
    b'{"action":{"requestId":"7","index":"2"}}',
    b'{"action":{"requestId":"+7","index":2}}',
    b'{"action":{"requestId":"7","text":"play:AS"}}',
]


@pytest.mark.parametrize("line", LINES)
def test_an_answer_line_reads_as_json_format_reads_it(line: bytes) -> None:
    got, want = decode_line(line), reference(line)
    if isinstance(want, Garbage):
        assert isinstance(got, Garbage)
    else:
        assert got == want


def test_every_request_id_and_index_a_bot_may_send() -> None:
    for request_id in (1, 9, 10, 123456789, 2**32, 2**63, 2**64 - 1):
        for index in (0, 1, 9, 10, 51, 2**31 - 1):
            line = b'{"action":{"requestId":"%d","index":%d}}' % (request_id, index)
            assert decode_line(line) == reference(line)

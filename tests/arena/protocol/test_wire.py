"""The C encoder (arena/protocol/_wire.c) against the codec's Python encoders, which stay its
reference."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass

import pytest
from cardarena import codec as bot_codec
from cardarena import messages
from cardarena._pb import arena_pb2 as pb
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.protocol import codec, observations, wireformat
from engine import game_ids, get_game

GAMES = list(game_ids())
PURE = os.environ.get("ARENA_PURE_PYTHON") == "1"
wire = wireformat.BUILT


def test_the_c_encoder_is_built_and_used() -> None:
    # `pip install -e .` builds it wherever a C compiler is at hand, as on every machine that
    # runs this suite; ARENA_PURE_PYTHON=1 turns it off.
    assert wire is not None, (
        "arena/protocol/_wire.c was not built: reinstall with a C compiler at hand"
    )
    assert wireformat.accelerated() is not PURE


def test_the_switch_turns_the_c_encoder_off() -> None:
    code = "from arena.protocol import wireformat; print(wireformat.accelerated())"
    env = {**os.environ, "ARENA_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("game_id", GAMES)
def test_c_and_python_write_the_same_bytes_on_every_game(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert wire is not None

    def both(*args: object, **kwargs: object) -> tuple[bytes, bytes]:
        monkeypatch.setattr(wireformat, "ACCEL", wire)
        c = codec.decision_to_bytes(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(wireformat, "ACCEL", None)
        return c, codec.decision_to_bytes(*args, **kwargs)  # type: ignore[arg-type]

    game = get_game(game_id)
    plan = observations.observation_plan(game_id)
    assert plan is not None
    c_plan, py_encode = observations.wire_plan(plan), observations.encoder(plan)
    rng = random.Random(game_id)
    compared = 0
    for match in range(6):
        state = game.new_match(game.configure(), match)
        sent = 0
        while (seat := state.to_move) is not None:
            for s in range(game.num_seats(state.config)):  # every seat, not only the mover
                obs = state.observation(s)
                assert wire.encode(obs, c_plan) == py_encode(obs)
            legal = state.legal_actions()
            bodies = [
                codec.event_to_body("m-é", seq, state.events[seq])
                for seq in range(sent, len(state.events))
            ]
            sent = len(state.events)
            args = (
                rng.choice([1, 300, 2**40]),  # one-, two- and six-byte varints
                "m-é",
                seat,
                game_id,
                state.observation(seat),
                legal,
                rng.choice([0, 1000]),
                rng.choice([0, 5, 120_000]),
            )
            text, as_json = rng.random() < 0.2, rng.random() < 0.2
            got, want = both(*args, events=bodies, text=text, json=as_json)
            assert got == want
            compared += 1
            state.apply(rng.choice(legal))
    assert compared > 100


# --- edge values, on a plan made by hand ----------------------------------------------------


@dataclass
class Inner:
    name: str
    values: tuple[int, ...]


@dataclass
class Outer:
    label: str
    maybe: str | None
    count: int
    flag: bool
    maybe_count: int | None
    words: tuple[str, ...]
    numbers: tuple[int, ...]
    inner: Inner | None
    inners: tuple[Inner, ...]


def _key(number: int, wire_type: int) -> bytes:
    return wireformat.varint((number << 3) | wire_type)


LEN, VARINT = 2, 0
INNER_PLAN = (("name", 0, _key(1, LEN), None), ("values", 5, _key(2, LEN), None))
OUTER_PLAN = (
    ("label", 0, _key(1, LEN), None),
    ("maybe", 1, _key(2, LEN), None),
    ("count", 3, _key(3, VARINT), None),
    ("flag", 3, _key(4, VARINT), None),
    ("maybe_count", 4, _key(5, VARINT), None),
    ("words", 2, _key(6, LEN), None),
    ("numbers", 5, _key(7, LEN), None),
    ("inner", 6, _key(8, LEN), INNER_PLAN),
    ("inners", 7, _key(9, LEN), INNER_PLAN),
)


def _expected(o: Outer) -> bytes:
    """The proto3 encoding of ``o``, written out with the codec's primitives."""
    d, v = wireformat.delimited, wireformat.varint

    def inner(i: Inner) -> bytes:
        body = d(_key(1, LEN), i.name.encode()) if i.name else b""
        if i.values:
            body += d(_key(2, LEN), b"".join(v(x) for x in i.values))
        return body

    out = d(_key(1, LEN), o.label.encode()) if o.label else b""
    out += d(_key(2, LEN), o.maybe.encode()) if o.maybe is not None else b""
    out += _key(3, VARINT) + v(o.count) if o.count else b""
    out += _key(4, VARINT) + v(int(o.flag)) if o.flag else b""
    out += _key(5, VARINT) + v(o.maybe_count) if o.maybe_count is not None else b""
    out += b"".join(d(_key(6, LEN), w.encode()) for w in o.words)
    out += d(_key(7, LEN), b"".join(v(x) for x in o.numbers)) if o.numbers else b""
    out += d(_key(8, LEN), inner(o.inner)) if o.inner is not None else b""
    out += b"".join(d(_key(9, LEN), inner(i)) for i in o.inners)
    return out


@pytest.mark.parametrize(
    "value",
    [
        Outer("", None, 0, False, None, (), (), None, ()),  # everything left out
        Outer("", "", 0, False, 0, ("",), (0,), Inner("", ()), (Inner("", ()),)),  # set, empty
        Outer("♠" * 100, "x", -1, True, -(2**63), ("a", "é"), (-5, 2**40), None, ()),
        # Nested bodies past 127 bytes take a two-byte length: the body moves.
        Outer("a", None, 7, False, None, (), (), Inner("z" * 300, (1,) * 200), ()),
        Outer("b", None, 1, True, 3, (), (), None, tuple(Inner("y" * 130, ()) for _ in range(3))),
        Outer("c" * 20_000, None, 0, False, None, ("w",) * 500, tuple(range(3000)), None, ()),
    ],
)
def test_edge_values_encode_as_proto3_does(value: Outer) -> None:
    assert wire is not None
    assert wire.encode(value, OUTER_PLAN) == _expected(value)


@pytest.mark.parametrize(
    ("obj", "plan", "error"),
    [
        (Inner("a", ()), "not a tuple", TypeError),
        (Inner("a", ()), (("name", 0, b"\n"),), TypeError),  # three items, not four
        (Inner("a", ()), (("name", 0, "key", None),), TypeError),  # key not bytes
        (Inner("a", ()), (("missing", 0, b"\n", None),), AttributeError),
        (Inner(7, ()), INNER_PLAN, TypeError),  # type: ignore[arg-type]
        (Inner("a", 5), INNER_PLAN, TypeError),  # type: ignore[arg-type]
        (Inner("a", ("x",)), INNER_PLAN, TypeError),  # type: ignore[arg-type]
        (Inner("a", ()), (("name", 99, b"\n", None),), ValueError),  # unknown kind
    ],
)
def test_bad_input_raises_instead_of_crashing(obj: object, plan: object, error: type) -> None:
    assert wire is not None
    with pytest.raises(error):
        wire.encode(obj, plan)  # type: ignore[arg-type]


def test_nesting_is_bounded() -> None:
    assert wire is not None

    @dataclass
    class Node:
        child: Node | None

    chain: Node | None = None
    deep: tuple[object, ...] = ()
    for _ in range(40):
        chain = Node(chain)
        deep = (("child", 6, _key(1, LEN), deep),)
    with pytest.raises(ValueError, match="nested"):
        wire.encode(chain, deep)  # type: ignore[arg-type]


def test_a_decision_refuses_events_that_are_not_bytes() -> None:
    assert wire is not None
    plan = observations.observation_plan("whist")
    assert plan is not None
    game = get_game("whist")
    state = game.new_match(game.configure(), 1)
    seat = state.to_move
    assert seat is not None
    wplan = observations.wire_plan(plan)
    with pytest.raises(TypeError, match="event"):
        wire.decision(
            1, b"", seat, b"", state.observation(seat), wplan, b"", b"", b"", 0,
            ["not bytes"],  # type: ignore[list-item]
        )  # fmt: skip


# --- answers: the one place the C module reads a bot's bytes ---------------------------------


@settings(max_examples=300, deadline=None)
@given(request_id=st.integers(0, 2**64 - 1), index=st.integers(0, 2**32 - 1))
def test_the_usual_answer_is_read_as_protobuf_reads_it(request_id: int, index: int) -> None:
    assert wire is not None
    data = bot_codec.answer_to_proto(request_id, index=index).SerializeToString()
    assert wire.answer(data) == (request_id, index)
    assert codec.bot_bytes_to_plain(data) == messages.Answer(request_id, index=index)


@settings(max_examples=1000, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=40),
        # Mutations of a real answer: the shapes a broken bot is likeliest to send.
        st.builds(
            lambda rid, idx, cut, junk: (
                bot_codec.answer_to_proto(rid, index=idx).SerializeToString()[:cut] + junk
            ),
            st.integers(0, 2**64 - 1),
            st.integers(0, 2**32 - 1),
            st.integers(0, 20),
            st.binary(max_size=6),
        ),
    )
)
def test_any_bytes_read_in_c_agree_with_protobuf(data: bytes) -> None:
    assert wire is not None
    got = wire.answer(data)
    if got is None:
        return  # left to protobuf (bot_bytes_to_plain parses it, or calls it garbage)
    msg = pb.BotMessage.FromString(data)
    assert msg.WhichOneof("kind") == "action"
    assert msg.action.WhichOneof("choice") == "index"
    assert got == (msg.action.request_id, msg.action.index)


def test_answers_that_are_not_the_usual_shape_go_to_protobuf() -> None:
    assert wire is not None
    for msg in (
        bot_codec.answer_to_proto(3, text="play:AS"),
        bot_codec.answer_to_proto(3),  # neither index nor text: garbage
        bot_codec.ping_to_proto(1),
        bot_codec.hello_to_proto(messages.Hello("b", "1", "t", 1)),
    ):
        data = msg.SerializeToString()
        assert wire.answer(data) is None
        assert codec.bot_bytes_to_plain(data) == codec.bot_proto_to_plain(msg)
    assert isinstance(codec.bot_bytes_to_plain(b"\x12\x7f\x08"), messages.Garbage)


def test_the_encoder_in_use_is_named() -> None:
    # The server logs it at start and the bench prints it: a slower build must not go unnoticed.
    name = wireformat.encoder_name()
    assert name.startswith("Python (ARENA_PURE_PYTHON=1)" if PURE else "C (")


def test_a_list_changed_by_code_the_encoder_runs_is_read_as_it_was() -> None:
    # The encoder walks a copy: a getter that empties the list it is walking cannot make it
    # read freed memory.
    assert wire is not None
    inners = [Inner("a", ()), Inner("b", ())]

    class Mutating:
        @property
        def name(self) -> str:
            inners.clear()
            return "m"

        values: tuple[int, ...] = ()

    inners.insert(1, Mutating())  # type: ignore[arg-type]
    outer = Outer("", None, 0, False, None, (), (), None, inners)  # type: ignore[arg-type]
    got = wire.encode(outer, OUTER_PLAN)
    names = (Inner("a", ()), Inner("m", ()), Inner("b", ()))  # all three, as they were
    assert got == _expected(Outer("", None, 0, False, None, (), (), None, names))

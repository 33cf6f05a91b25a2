"""tests/waiting.py: the one way the tests wait for something to happen."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
import trio

from tests.waiting import async_wait_until, asyncio_wait_until, wait_until


def test_returns_the_predicates_value_once_it_is_true() -> None:
    looks = itertools.count(1)
    assert wait_until(lambda: [n] if (n := next(looks)) >= 3 else [], 5, 0.001, what="x") == [3]
    assert next(looks) == 4  # no look after the first true one


def test_fails_naming_what_it_waited_for() -> None:
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"^timed out after 0.05 s waiting for the sky$"):
        wait_until(lambda: False, 0.05, 0.01, what="the sky")
    assert 0.05 <= time.monotonic() - start < 1.0


def test_a_predicate_that_raises_fails_at_once() -> None:
    def gone() -> bool:
        raise AssertionError("the process exited")

    start = time.monotonic()
    with pytest.raises(AssertionError, match="the process exited"):
        wait_until(gone, 10, what="a line")
    assert time.monotonic() - start < 1.0


def test_the_trio_and_asyncio_variants_wait_and_fail_alike() -> None:
    looks: list[bool] = []

    async def trio_main() -> None:
        done = trio.Event()

        def is_set() -> bool:
            looks.append(done.is_set())
            return looks[-1]

        async def set_it() -> None:  # runs only once the waiter yields, between two looks
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(set_it)
            assert await async_wait_until(is_set, 5, what="done") is True
        with pytest.raises(AssertionError, match="waiting for never"):
            await async_wait_until(lambda: 0, 0.05, what="never")

    async def asyncio_main() -> None:
        done = asyncio.Event()

        def is_set() -> bool:
            looks.append(done.is_set())
            return looks[-1]

        asyncio.get_running_loop().call_soon(done.set)  # runs once the waiter yields
        assert await asyncio_wait_until(is_set, 5, what="done") is True
        with pytest.raises(AssertionError, match="waiting for never"):
            await asyncio_wait_until(lambda: None, 0.05, what="never")

    trio.run(trio_main)
    assert looks == [False, True]
    asyncio.run(asyncio_main())
    assert looks == [False, True, False, True]

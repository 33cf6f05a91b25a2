"""engine/solver/_native.c: the whist and tennis whist search in C."""

from collections.abc import Sequence

def solve(
    hands: Sequence[int],
    nxt: Sequence[int],
    maxside: Sequence[int],
    trump: int,
    trick_cards: Sequence[int],
    trick_seats: Sequence[int],
    leader: int,
    max_nodes: int,
) -> tuple[list[tuple[int, int]], int] | None: ...

"""The engine's speed machinery: the tricks behind the hot path, kept out of the interface.

:mod:`engine.core` is the game interface (actions, events, observations, results, games, match
states) and reads as such; this private module holds what makes that interface fast enough for
self-play and search bots, which make events and observations at every decision and clones at
every simulation:

* :func:`quick_init`, an ``__init__`` for frozen, slotted dataclasses that fills each slot
  through its descriptor's setter instead of calling ``object.__setattr__`` per field as the
  generated frozen ``__init__`` does. ``Event`` and the games' observations use it.
* The share table behind ``MatchState.clone()`` (:data:`CLONE_KINDS`, :func:`copied`,
  :func:`cloned_attrs`): which values a clone shares because they never change and how it copies
  the rest, so that a clone neither deep-copies the event log nor any frozen value in the state;
  lists a game declares flat are copied without looking inside, and a generator given to
  ``clone(rng)`` replaces the state's instead of being copied.

The dependency goes one way, core → here: nothing here imports :mod:`engine.core`, and core
hands in the game base class whose instances clones share (:func:`share_instances_of`). What
each trick buys, in figures: docs/performance.md, "The engine's speed machinery".
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any, TypeVar

# --- quick_init: a faster __init__ for frozen, slotted dataclasses -------------------------------

_Frozen = TypeVar("_Frozen")


def quick_init(cls: type[_Frozen]) -> type[_Frozen]:
    """Give a frozen, slotted dataclass an ``__init__`` that fills each slot through its
    descriptor's setter instead of ``object.__setattr__`` per field, which is much cheaper (events
    and observations are made at every decision, so it counts). Same parameters and defaults as
    the generated one; apply it above ``@dataclass``."""
    params: list[str] = []
    lines: list[str] = []
    env: dict[str, Any] = {}
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    for i, f in enumerate(fields):
        if not f.init or f.default_factory is not dataclasses.MISSING or f.kw_only:
            raise TypeError(f"quick_init does not handle field {cls.__name__}.{f.name}")
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            env[f"default{i}"] = f.default
            params.append(f"{f.name}=default{i}")
        env[f"set{i}"] = getattr(cls, f.name).__set__
        lines.append(f"    set{i}(self, {f.name})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines or ["    pass"])
    exec(source, env)  # built above from the dataclass's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": "None"}
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


# --- what MatchState.clone() shares and what it copies ------------------------------------------

SHARE, _LIST, _DICT, _SET, _RANDOM, _DEEP = range(6)
#: How clone() treats a value, by its exact type (filled as types occur).
CLONE_KINDS: dict[type, int] = {
    **dict.fromkeys((int, float, str, bool, type(None), tuple, frozenset, bytes), SHARE),
    list: _LIST,
    dict: _DICT,
    set: _SET,
    random.Random: _RANDOM,
}


#: The types clone() shares, as a set: a list whose element types are a subset is copied in C.
_SHARED_TYPES = {t for t, kind in CLONE_KINDS.items() if kind == SHARE}

#: Classes whose instances clone() shares though they are not frozen dataclasses (core registers
#: ``Game``: a match state refers to its game, which is never copied).
_SHARED_BASES: tuple[type, ...] = ()


def share_instances_of(base: type) -> None:
    """Make clone() share instances of ``base`` and its subclasses instead of copying them."""
    global _SHARED_BASES
    _SHARED_BASES = (*_SHARED_BASES, base)


def _classify(kind_of: type) -> int:
    """How clone() treats a type it meets for the first time: frozen dataclasses and instances of
    the classes given to :func:`share_instances_of` (games) are shared, anything else is
    deep-copied."""
    params = getattr(kind_of, "__dataclass_params__", None)
    frozen = params is not None and params.frozen
    kind = SHARE if frozen or issubclass(kind_of, _SHARED_BASES) else _DEEP
    CLONE_KINDS[kind_of] = kind
    if kind == SHARE:
        _SHARED_TYPES.add(kind_of)
    return kind


def cloned_attrs(
    attrs: dict[str, Any], flat: frozenset[str], rng: random.Random | None
) -> dict[str, Any]:
    """A clone's ``__dict__`` from its original's (MatchState.clone).

    ``flat`` names the lists the game declares to hold only values that never change (cards,
    seats, events): they are copied with one ``list.copy()`` without looking inside, which is
    most of what makes a clone cheap. With ``rng`` given, every generator becomes ``rng`` itself:
    copying a Mersenne Twister's 625 words was the largest part of a clone's work.
    """
    new = attrs.copy()
    shared = _SHARED_TYPES
    for name, value in attrs.items():
        kind = type(value)
        if kind in shared:
            continue
        if kind is list and name in flat:
            new[name] = value.copy()
        elif kind is random.Random and rng is not None:
            new[name] = rng
        else:
            new[name] = copied(value)
    return new


def copied(value: Any) -> Any:
    """``value`` for a clone: itself when it never changes, else a copy (MatchState.clone)."""
    kind = CLONE_KINDS.get(type(value))
    if kind is None:
        kind = _classify(type(value))
    if kind == SHARE:
        return value
    if kind == _LIST:
        # A list of values that never change (the event log, a hand) is copied in C.
        if set(map(type, value)) <= _SHARED_TYPES:
            return value.copy()
        return [copied(v) for v in value]
    if kind == _DICT:
        return {k: copied(v) for k, v in value.items()}
    if kind == _SET:
        return set(value)  # a set holds hashable values, which clone() shares
    if kind == _RANDOM:
        # A clone must draw what its original would: its generator's state (625 words of
        # Mersenne Twister) is copied, the largest part of a clone's work.
        rng = random.Random.__new__(random.Random)
        rng.setstate(value.getstate())
        return rng
    return copy.deepcopy(value)

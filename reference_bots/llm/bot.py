"""The harness bot: a language model asked for each decision, through its text view.

For each decision the model gets the system prompt (:mod:`reference_bots.llm.prompt`) and the
seat's view (:func:`engine.text.render`, with the public events seen, for its summary of earlier
deals); its answer is read by :func:`engine.text.parse_action`. A refused answer is followed, in
the same conversation, by the reason and a request to answer again; a failed request (timeout, no
connection, 429, 5xx, no JSON) is asked again as it was, after a 429's ``Retry-After`` (1 s
without one) when the decision's time allows it. Every attempt of either kind counts against
``1 + retries``; when they are spent, when time runs short or when the server refuses the
request outright, ``choose`` raises :class:`NoAnswer` and the SDK plays its fallback (the first
legal action), marking the decision ``sdk_fallback`` in the record as for any strategy failure.

Each decision's note (``Turn.note``, kept in the record) says what it cost; the match's running
totals follow, so the seat's last note is the match's summary, then the decision's figures as
telemetry words, which ``arena match``, ``arena replay show`` and a tournament's report sum
(docs/llm.md).
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardarena.bot import Bot, Turn
from cardarena.log import get_logger
from cardarena.messages import Action, Result

from engine import MatchConfig, get_game
from engine.core import Action as EngineAction
from engine.text import Parsed, parse_action, render
from reference_bots.llm.client import ChatClient, ChatError, Completion
from reference_bots.llm.options import Settings
from reference_bots.llm.prompt import HARNESS, estimate_tokens, reask, summarized, system_prompt
from reference_bots.search.belief import table_configs

log = get_logger("reference_bots.llm")

#: Of the match's bank, the share one decision may use after its own move time.
BANK_SHARE = 0.25
#: Time kept back from the deadline for the answer to reach the referee, ms.
MARGIN_MS = 150.0
#: No request is started with less time than this left, s.
MIN_ATTEMPT_S = 0.2
#: The wait after a 429 that gives no ``Retry-After``, s.
RATE_LIMIT_WAIT_S = 1.0

#: An answer shaped like an action (``play:QS``, ``pass``, ``7``): refused as illegal, not as
#: unparsable.
ACTION_LIKE = re.compile(r"[A-Za-z_]+(:\S+)?|\d+")


class NoAnswer(Exception):
    """The model gave no legal action in time: the SDK plays its fallback."""


@dataclass(slots=True)
class Tally:
    """What decisions cost: one decision's, or a match's sum."""

    decisions: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Whether any count above is estimated (the server reported no ``usage``).
    estimated: bool = False
    fallbacks: int = 0
    faults: Counter[str] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.decisions += other.decisions
        self.attempts += other.attempts
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.estimated = self.estimated or other.estimated
        self.fallbacks += other.fallbacks
        self.faults.update(other.faults)

    def tokens(self) -> str:
        """``1234+5`` (prompt + completion), ``~`` first when estimated."""
        mark = "~" if self.estimated else ""
        return f"{mark}{self.prompt_tokens}+{self.completion_tokens}"

    def count(self, completion: Completion, sent: Sequence[Mapping[str, str]]) -> None:
        """One answered request's tokens: the server's ``usage``, else estimated."""
        prompt, answer = completion.prompt_tokens, completion.completion_tokens
        if prompt is None or answer is None:
            self.estimated = True
            prompt = sum(estimate_tokens(m["content"]) for m in sent)
            answer = estimate_tokens(completion.text)
        self.prompt_tokens += prompt
        self.completion_tokens += answer

    def to_dict(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "attempts": self.attempts,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated": self.estimated,
            "fallbacks": self.fallbacks,
            "faults": dict(sorted(self.faults.items())),
        }


class Clock:
    """A decision's time: its move time and :data:`BANK_SHARE` of the bank, less
    :data:`MARGIN_MS`; none without a deadline (in-process play)."""

    def __init__(self, turn: Turn | None, now: float | None = None) -> None:
        self.start = time.monotonic() if now is None else now
        if turn is None or turn.deadline_ms <= 0:
            self.end = float("inf")
        else:
            allowed = turn.deadline_ms + BANK_SHARE * turn.bank_ms - MARGIN_MS
            self.start = turn.received
            self.end = turn.received + allowed / 1000.0

    def left_s(self) -> float:
        return self.end - time.monotonic()

    def elapsed_ms(self) -> int:
        return round((time.monotonic() - self.start) * 1000.0)


def read_answer(
    game: str,
    answer: str,
    legal: Sequence[EngineAction],
    observation: Mapping[str, Any] | None = None,
) -> Parsed:
    """The legal action ``answer`` names, by :func:`engine.text.parse_action` (the observation
    lets a refusal say why an action is not legal)."""
    return parse_action(game, answer, legal, observation=observation)


def refusal(answer: str) -> str:
    """``illegal`` for an answer shaped like an action, else ``unparsable``."""
    return "illegal" if ACTION_LIKE.fullmatch(answer.strip()) else "unparsable"


class LLMBot(Bot):
    """A language model at the table, through an OpenAI-compatible chat-completions API."""

    name = "llm"
    version = HARNESS

    def __init__(self, settings: Settings, key: str | None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.settings = settings
        self.client = ChatClient(
            settings.endpoint,
            settings.model,
            key,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )
        self._configs: dict[str, MatchConfig] = {}
        self._matches: dict[str, Tally] = {}
        # Per match, the public events seen: the view's summary of earlier deals.
        self._events: dict[str, list[dict[str, Any]]] = {}

    def on_event(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        if summarized(kind, private):
            self._events.setdefault(match_id, []).append({"kind": kind, "to": None, **data})

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        turn = self.turn
        match_id = turn.match_id if turn is not None else ""
        actions = [EngineAction(a.kind, a.arg) for a in legal]
        config = self._config(game, match_id, turn, observation)
        view = render(
            game,
            config,
            observation,
            actions,
            list_legal=self.settings.list_legal,
            events=self._events.get(match_id, ()),
        )
        sent = [
            {"role": "system", "content": system_prompt(game)},
            {"role": "user", "content": view.text},
        ]
        clock = Clock(turn)
        tally = Tally(decisions=1)
        index, how, why = self._ask(game, sent, (actions, observation), clock, tally)
        if index is None:
            tally.fallbacks = 1
        match = self._matches.setdefault(match_id, Tally())
        match.add(tally)
        if turn is not None:
            turn.note(decision_note(tally, how, clock.elapsed_ms(), match))
        if index is None:
            raise NoAnswer(f"no legal answer after {tally.attempts} attempt(s): {why}")
        return index

    def _ask(
        self,
        game: str,
        sent: list[dict[str, str]],
        seen: tuple[Sequence[EngineAction], Mapping[str, Any]],
        clock: Clock,
        tally: Tally,
    ) -> tuple[int | None, str, str]:
        """Ask until an answer names a legal action: ``(index, how it was read, "")``, or
        ``(None, "none", why not)`` once the attempts or the time are spent."""
        why = "no attempt"
        while tally.attempts <= self.settings.retries:
            left = clock.left_s()
            if left < MIN_ATTEMPT_S:
                return None, "none", f"out of time ({why})"
            tally.attempts += 1
            try:
                completion = self.client.complete(sent, min(self.settings.timeout_s, left))
            except ChatError as err:
                tally.faults[err.kind] += 1
                why = str(err)
                if not err.retryable:
                    return None, "none", why
                wait = err.retry_after
                if wait is None and err.kind == "rate_limit":
                    wait = RATE_LIMIT_WAIT_S
                if wait is not None:
                    if wait > clock.left_s() - MIN_ATTEMPT_S:
                        return None, "none", f"{why}, a wait of {wait:g} s past the deadline"
                    time.sleep(wait)
                continue
            tally.count(completion, sent)
            parsed = read_answer(game, completion.text, *seen)
            if parsed.index is not None:
                return parsed.index, parsed.how, ""
            kind = refusal(completion.text)
            tally.faults[kind] += 1
            why = f"{kind}: {parsed.reason}"
            sent.append({"role": "assistant", "content": completion.text})
            sent.append({"role": "user", "content": reask(parsed.reason)})
        return None, "none", why

    def _config(
        self, game: str, match_id: str, turn: Turn | None, observation: Mapping[str, Any]
    ) -> MatchConfig:
        """The match's configuration (the view names seats and options by it): the first
        table that fits the observation, found once per match."""
        known = self._configs.get(match_id)
        if known is not None:
            return known
        rules = get_game(game)
        options = turn.options if turn is not None else {}
        seats = turn.seats if turn is not None else 0
        candidates = table_configs(rules, seats, options) or [rules.configure(None, options)]
        chosen = candidates[0]
        for config in candidates:
            try:
                rules.restore(config, observation, [], random.Random(0))
            except Exception:  # any failure: this table is not the match's
                continue
            chosen = config
            break
        self._configs[match_id] = chosen
        return chosen

    def end_match(self, match_id: str, result: Result) -> None:
        self._configs.pop(match_id, None)
        self._events.pop(match_id, None)
        tally = self._matches.pop(match_id, None)
        if tally is not None:
            log.info("llm match totals", match_id=match_id, harness=HARNESS, **tally.to_dict())


def decision_note(tally: Tally, how: str, ms: int, match: Tally) -> str:
    """One decision's note, then the match's totals so far, then the decision's figures as
    telemetry words, which the arena sums per seat and match (``t.KEY=N``, docs/sdk.md); well
    under the 500-byte cap."""
    faults = ",".join(f"{k}x{n}" for k, n in sorted(tally.faults.items()))
    figures = {
        "tok_in": tally.prompt_tokens,
        "tok_out": tally.completion_tokens,
        "ms": ms,
        "retries": max(0, tally.attempts - 1),
        "fallbacks": tally.fallbacks,
        "faults": sum(tally.faults.values()),
    }
    if tally.estimated:
        figures["tok_est"] = 1
    return (
        f"llm {HARNESS} {ms}ms tries={tally.attempts} tok={tally.tokens()} parse={how}"
        + (f" faults={faults}" if faults else "")
        + f" | match d={match.decisions} tries={match.attempts} tok={match.tokens()}"
        f" fallbacks={match.fallbacks} faults={sum(match.faults.values())} | "
        + " ".join(f"t.{key}={value}" for key, value in figures.items())
    )

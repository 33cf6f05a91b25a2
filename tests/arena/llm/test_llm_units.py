"""The harness's parts on their own: the client against the scripted server and a closed port,
``Retry-After``, the flags read back from a bot's command, the estimate's hook, the command's
one-line refusals, and a whole match in process (``engine.local``, no deadline)."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest
from cardarena.messages import Action

from arena.cli.tournament import cost_lines
from arena.tournament.config import load_config
from engine import get_game
from engine.local import play
from reference_bots.catalog import cost_estimate
from reference_bots.llm.bot import LLMBot, read_answer, refusal
from reference_bots.llm.client import ChatClient, ChatError, completions_url, retry_after_s
from reference_bots.llm.options import Settings, command_settings
from tests.arena.llm.fake_openai import FakeOpenAI
from tests.arena.run_arena import arena_error

KEY = "sk-unit-DISTINCTIVE-51b2"


def test_the_completions_url() -> None:
    assert completions_url("http://h/v1") == "http://h/v1/chat/completions"
    assert completions_url("http://h/v1/") == "http://h/v1/chat/completions"
    assert completions_url("http://h/x/chat/completions") == "http://h/x/chat/completions"


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after_s("2") == 2.0 and retry_after_s("0.5") == 0.5
    assert retry_after_s(None) is None and retry_after_s("soon") is None
    now = time.time()
    later = email.utils.formatdate(now + 30, usegmt=True)
    wait = retry_after_s(later, now=now)
    assert wait is not None and 28 <= wait <= 31
    assert retry_after_s(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_the_client_names_each_failure() -> None:
    script = ["500", "429", "malformed", "401", "nousage", "legal"]
    with FakeOpenAI(script, retry_after=3) as fake:
        client = ChatClient(fake.url, "m", KEY, temperature=0.0, max_tokens=5)
        kinds = []
        for _ in range(4):
            with pytest.raises(ChatError) as caught:
                client.complete([{"role": "user", "content": "1. pass"}], 5.0)
            kinds.append((caught.value.kind, caught.value.retry_after))
            assert KEY not in str(caught.value)
        assert kinds == [("server_error", None), ("rate_limit", 3.0), ("malformed", None),
                         ("refused", None)]  # fmt: skip
        bare = client.complete([{"role": "user", "content": "0. pass"}], 5.0)
        assert (bare.text, bare.prompt_tokens, bare.completion_tokens) == ("0", None, None)
        full = client.complete([{"role": "user", "content": "0. pass"}], 5.0)
        assert (full.prompt_tokens, full.completion_tokens) == (100, 2)
        body = fake.requests[0].body
        assert (body["model"], body["temperature"], body["max_tokens"]) == ("m", 0.0, 5)
        client.close()


@pytest.mark.parametrize("pad", [0, 80, 85, 100])
def test_an_echoed_key_is_taken_out_even_where_the_detail_is_cut(pad: int) -> None:
    with FakeOpenAI(["401"], echo_pad=pad) as fake:
        client = ChatClient(fake.url, "m", KEY)
        with pytest.raises(ChatError) as caught:
            client.complete([{"role": "user", "content": "x"}], 5.0)
    assert caught.value.kind == "refused"
    assert KEY[:6] not in str(caught.value), str(caught.value)


def test_no_server_is_an_http_fault_without_the_key() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "m", KEY)
    with pytest.raises(ChatError) as caught:
        client.complete([{"role": "user", "content": "x"}], 2.0)
    assert caught.value.kind == "http" and KEY not in str(caught.value)


def test_answers_are_read_by_the_text_views_rules() -> None:
    state = get_game("whist").new_match(get_game("whist").configure(), 1)
    legal = state.legal_actions()
    assert read_answer("whist", legal[1].text, legal).index == 1
    assert read_answer("whist", f"I lead.\n\n{legal[2].text}\n", legal).index == 2
    assert read_answer("whist", "no idea", legal).index is None
    # With the observation, a refusal says why the action is not legal.
    seat = state.to_move
    assert seat is not None
    observation = state.observation(seat).to_dict()
    held = set(observation["hand"])
    absent = next(f"play:{c}" for c in ("AS", "KS", "QS", "AH", "KH") if c not in held)
    refused = read_answer("whist", absent, legal, observation)
    assert refused.index is None and refused.reason
    assert refusal("play:ZZ") == "illegal" and refusal("I would rather not") == "unparsable"


def test_the_flags_are_read_back_from_a_bot_command() -> None:
    settings = command_settings(
        "OPENAI_API_KEY=x /venv/bin/arena bot llm --endpoint http://h/v1 --model m "
        "--list-legal --retries 4 --max-tokens 9"
    )
    assert settings == Settings(
        "http://h/v1", "m", list_legal=True, retries=4, max_tokens=9, key_env="OPENAI_API_KEY"
    )
    assert command_settings("arena bot llm") == Settings("", "")
    for other in ("arena bot rules", "python bot.py", "arena bot llm 'unclosed", "arena"):
        assert command_settings(other) is None


def test_only_the_harness_has_an_estimate() -> None:
    config = get_game("tennis").configure(2, {"sets_to_win": 1})
    assert cost_estimate("arena bot rules", config) is None
    estimate = cost_estimate("arena bot llm --endpoint http://h --model m", config)
    assert estimate is not None and estimate.decisions > 1 and estimate.prompt_tokens > 100
    listed = cost_estimate("arena bot llm --list-legal", config)
    assert listed is not None and listed.prompt_tokens > estimate.prompt_tokens
    assert "legal actions listed" in listed.basis


def test_a_tournament_without_the_harness_prints_no_estimate() -> None:
    config = load_config(None, {"game": "tennis", "bots": [{"name": "random"}, {"name": "rules"}]})
    assert cost_lines(config) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["bot", "llm"], "arena bot llm needs --endpoint URL and --model NAME"),
        (["bot", "rules", "--endpoint", "http://h"], "only the llm bot takes --endpoint"),
        (["bot", "llm", "--estimate"], "--estimate and --show-prompt need --game G"),
        (["bot", "llm", "--estimate", "--game", "bridge"], "unknown game 'bridge'"),
        (["bot", "llm", "--retries", "-1"], "expected a whole number of at least 0"),
        (["bot", "llm", "--endpoint", "h", "--model", "m", "--iterations", "3"], "search bot"),
        (["bot", "llm", "--endpoint", "ftp://h", "--model", "m"], "must be an http:// or"),
        (["bot", "llm", "--endpoint", "h/v1", "--model", "m"], "must be an http:// or"),
    ],
)
def test_the_command_refuses_in_one_line(args: list[str], says: str) -> None:
    assert says in arena_error(*args)


def test_a_key_no_header_may_carry_is_refused_without_showing_it() -> None:
    env = {"LLM_UNIT_KEY": "sk-bad\nkey-DISTINCT"}
    line = arena_error(
        "bot", "llm", "--endpoint", "http://h/v1", "--model", "m", "--key-env", "LLM_UNIT_KEY",
        env=env,
    )  # fmt: skip
    assert "no HTTP header may carry" in line and "DISTINCT" not in line


def test_a_whole_match_in_process() -> None:
    """engine.local gives no deadline: only the attempts bound a decision."""
    with FakeOpenAI(["illegal", "unparsable", "unparsable", "unparsable"], seed=1) as fake:
        bot = LLMBot(Settings(fake.url, "m", list_legal=True, retries=2), KEY)
        (match,) = play("tennis", [bot, "random"], seed=3, options={"sets_to_win": 1})
        modes = fake.modes()
    assert match.result.reason == "normal"
    assert modes[:4] == ["illegal", "unparsable", "unparsable", "unparsable"]
    # The first decision: three refusals (1 + --retries 2), the fallback; the second: one
    # refusal in a fresh conversation, then a legal answer.
    assert match.failures == (1, 0)
    assert fake.requests[1].body["messages"][2] == {"role": "assistant", "content": "play:ZZ"}
    assert len(fake.requests[3].body["messages"]) == 2


@pytest.mark.parametrize(("retry_after", "waited"), [(None, 1.0), (0.5, 0.5)])
def test_a_rate_limit_is_waited_out(retry_after: float | None, waited: float) -> None:
    """No deadline (a bot driven without ``run_bot``): the wait is ``Retry-After``, or 1 s."""
    state = get_game("whist").new_match(get_game("whist").configure(), 2)
    seat = state.to_move
    assert seat is not None
    legal = [Action(a.kind, a.arg) for a in state.legal_actions()]
    with FakeOpenAI(["429", "legal"], retry_after=retry_after) as fake:
        bot = LLMBot(Settings(fake.url, "m", list_legal=True), None)
        index = bot.choose("whist", state.observation(seat).to_dict(), legal)
        first, second = fake.requests
    assert 0 <= index < len(legal)
    assert second.at - first.at >= waited

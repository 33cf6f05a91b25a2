"""engine.text: the golden text views (tests/engine/text/, ``make text-views``) and their
version, the re-deal leak check, the legal actions listed or not, and how answers are read."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import time
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core import Action, MatchState
from engine.registry import make
from engine.text import TEXT_VERSION, Parsed, describe_action, parse_action, render
from engine.text import words as text_words
from engine.text.trick_view import hand_lines

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "tests" / "engine" / "text"


def _script(name: str) -> ModuleType:
    # Scripts hold the one list of positions (and of tables); no package, so loaded by path.
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script("text_views")
CASES = SCRIPT.CASES


# --- the golden texts and TEXT_VERSION ----------------------------------------------------------


def test_the_files_are_the_scripts_cases() -> None:
    assert {p.name for p in DIR.glob("*.txt")} == {f"{c[0]}.txt" for c in CASES}, (
        "run `make text-views`"
    )


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_rendering_matches_its_golden_text(case: tuple[object, ...]) -> None:
    version, body = SCRIPT.recorded(DIR / f"{case[0]}.txt")
    now = SCRIPT.golden_body(case)
    assert version == TEXT_VERSION, (
        f"{case[0]} was written by rendering {version}, not {TEXT_VERSION}: `make text-views`"
    )
    assert now == body, (
        "the rendering changed: bump REVISION in engine/text/words.py, then `make text-views`"
    )


def test_the_version_is_a_hash_of_the_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    assert text_words.text_version() == TEXT_VERSION
    assert len(TEXT_VERSION) == 12 and int(TEXT_VERSION, 16) >= 0
    changed = dict(text_words.WORDS, your_turn="Your move.")
    monkeypatch.setattr(text_words, "WORDS", changed)
    assert text_words.text_version() != TEXT_VERSION
    monkeypatch.setattr(text_words, "REVISION", text_words.REVISION + 1)
    assert text_words.text_version() != TEXT_VERSION


def test_the_script_refuses_a_changed_rendering_under_the_same_version(tmp_path: Path) -> None:
    assert SCRIPT.main(["--out", str(tmp_path)]) == 0
    path = tmp_path / f"{CASES[0][0]}.txt"
    path.write_text(path.read_text(encoding="utf-8") + "tampered\n", encoding="utf-8")
    assert SCRIPT.main(["--out", str(tmp_path)]) == 1
    assert path.read_text(encoding="utf-8").endswith("tampered\n")


def test_a_view_names_the_seat_its_hand_and_the_trick() -> None:
    state = SCRIPT.position("whist", 4, {}, 1, 6, "play")
    seat = state.to_move
    obs = state.observation(seat).to_dict()
    view = render("whist", state.config, obs, state.legal_actions())
    names = "NESW"
    assert f"You are {names[seat]} (seat {seat + 1} of 4)." in view.text
    assert f"Your partner is {names[(seat + 2) % 4]};" in view.text
    for card in obs["hand"]:
        assert card in view.text
    assert "in progress" in view.text and "Trumps: " in view.text
    assert view.actions == tuple(describe_action("whist", a) for a in state.legal_actions())
    assert view.version == TEXT_VERSION


# --- nothing the seat may not know: the re-deal check ------------------------------------------


#: Every game and table (doubles in both control modes): the golden playthroughs' list.
TABLES: list[tuple[str, int, dict[str, object]]] = list(_script("playthroughs").CONFIGS)


def _random_position(table: tuple[str, int, dict[str, object]], seed: int) -> MatchState:
    game, players, options = table
    state = make(game, players=players, seed=seed, **options)  # type: ignore[arg-type]
    rng = random.Random(seed)
    for _ in range(rng.randrange(0, 160)):
        if state.is_over():
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


def _views(state: MatchState, seat: int) -> tuple[str, str]:
    game = state.game.id
    obs = state.observation(seat).to_dict()
    legal = state.legal_actions() if state.to_move == seat else ()
    events = state.visible_events(seat)
    return (
        render(game, state.config, obs, legal, events=events).text,
        render(game, state.config, obs, legal, list_legal=False, events=events).text,
    )


@pytest.mark.parametrize("table", TABLES, ids=[f"{t[0]}-{t[1]}-{len(t[2])}" for t in TABLES])
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_redealing_what_a_seat_cannot_see_leaves_its_text_unchanged(
    table: tuple[str, int, dict[str, object]], seed: int
) -> None:
    state = _random_position(table, seed)
    if state.is_over():
        return
    rng = random.Random(seed)
    for seat in range(state.num_seats):  # the seat to move and every seat not to move
        before = _views(state, seat)
        redealt = state.determinize(seat, random.Random(rng.getrandbits(32)))
        assert _views(redealt, seat) == before, f"seat {seat}'s text shows what it may not know"


TRICK_TABLES = [t for t in TABLES if t[0] != "tennis"]
EVERY_CARD = ("Answer with one action in its code form", "Trumps rank", "Other suits rank")


def _cards(hand: object) -> list[str]:
    assert isinstance(hand, list)
    return [str(c) for c in hand]


@pytest.mark.parametrize("table", TRICK_TABLES, ids=[f"{t[0]}-{t[1]}" for t in TRICK_TABLES])
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_no_text_names_a_card_another_seat_holds_unseen(
    table: tuple[str, int, dict[str, object]], seed: int
) -> None:
    state = _random_position(table, seed)
    if state.is_over():
        return
    views = [state.observation(s).to_dict() for s in range(state.num_seats)]
    for seat in range(state.num_seats):
        # What the seat was shown: its observation and the events it saw (a card drawn in a
        # public tie-break earlier may be in another hand now).
        seen = [views[seat], *(e.to_dict() for e in state.visible_events(seat))]
        known = set(re.findall(r"\b[2-9TJQKA][CDHS]\b", json.dumps(seen)))
        held = [c for s, v in enumerate(views) if s != seat for c in _cards(v["hand"])]
        hidden = set(held) - known
        for text in _views(state, seat):
            # Lines naming every card, not one seen: the unlisted view's format line (fixed
            # examples: QS, TD, 4C) and spoil five's card order.
            kept = [line for line in text.splitlines() if not line.startswith(EVERY_CARD)]
            shown = set(re.findall(r"\b[2-9TJQKA][CDHS]\b", "\n".join(kept))) & hidden
            assert not shown, f"seat {seat}'s text names {sorted(shown)}, held unseen by others"


@pytest.mark.parametrize("table", TABLES, ids=[f"{t[0]}-{t[1]}-{len(t[2])}" for t in TABLES])
def test_every_moment_of_a_match_renders(table: tuple[str, int, dict[str, object]]) -> None:
    game, players, options = table
    state = make(game, players=players, seed=5, **options)  # type: ignore[arg-type]
    rng = random.Random(5)
    for _ in range(300):
        if state.is_over():
            break
        seat = state.to_move
        assert seat is not None
        assert "It is your turn." in _views(state, seat)[0]
        other = _views(state, (seat + 1) % state.num_seats)[0]
        assert "It is not your turn" in other or state.num_seats == 1
        state.apply(rng.choice(state.legal_actions()))
    while not state.is_over():
        state.apply(rng.choice(state.legal_actions()))
    final = _views(state, 0)[0]
    assert "not your turn" in final


# --- the legal actions listed, or not ------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_unlisted_views_say_nothing_of_which_actions_are_legal(case: tuple[object, ...]) -> None:
    _stem, game_id, players, options, seed, after, kind = case
    state = SCRIPT.position(game_id, players, options, seed, after, kind)
    game = str(game_id)
    obs = state.observation(state.to_move).to_dict()
    legal = state.legal_actions()
    listed = render(game, state.config, obs, legal).text
    unlisted = render(game, state.config, obs, legal, list_legal=False).text
    other = render(game, state.config, obs, legal[-1:], list_legal=False).text
    assert unlisted == other, "the unlisted view depends on which actions are legal"
    assert "Your legal actions" in listed and "Your legal actions" not in unlisted
    assert "Answer with one action in its code form" in unlisted
    for action in legal:
        assert f"{action.text} - " in listed
        assert f"{action.text} - " not in unlisted


# --- reading answers ------------------------------------------------------------------------------


def _parse(game: str, answer: str, legal: list[Action], **kw: object) -> Parsed:
    return parse_action(game, answer, legal, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_legal_action_is_read_exactly_and_softly(case: tuple[object, ...]) -> None:
    _stem, game, players, options, seed, after, kind = case
    state = SCRIPT.position(game, players, options, seed, after, kind)
    legal = list(state.legal_actions())
    for i, action in enumerate(legal):
        words = describe_action(str(game), action)
        for exact in (action.text, f"  {action.text}\n", str(i), words):
            assert _parse(str(game), exact, legal) == Parsed(i, "exact"), exact
        for soft in (
            action.text.upper().replace(":", " : "),
            f"I weigh it up.\nAction: {action.text.lower()}",
            f"Thinking...\n{action.text}.",
            f"I will answer `{action.text}` now, as planned",
            f'my choice is "{action.text}", final',
            f"So I go with {action.text} here",
            words.upper() + "!",
        ):
            assert _parse(str(game), soft, legal) == Parsed(i, "soft"), soft


PLAYS = [Action("play", c) for c in ("4S", "8S", "TS", "QS")]


@pytest.mark.parametrize(
    "answer",
    ["QS", "qs", "Q♠", "q♠", "queen of spades", "the Queen of Spades.", "play queen of spades"],
)
def test_a_bare_card_names_its_play(answer: str) -> None:
    assert _parse("whist", answer, PLAYS) == Parsed(3, "soft")


def test_a_code_block_is_read() -> None:
    assert _parse("whist", "My move:\n```\nplay:QS\n```\n", PLAYS) == Parsed(3, "soft")


def test_ten_is_read_as_t() -> None:
    assert _parse("whist", "10S", PLAYS) == Parsed(2, "soft")
    assert _parse("whist", "play:10S", PLAYS) == Parsed(2, "soft")
    assert _parse("whist", "10 of spades", PLAYS) == Parsed(2, "soft")


def test_trumps_are_named_by_letter_or_name() -> None:
    legal = [Action("trump", s) for s in "CDHS"]
    assert _parse("tennis_whist", "hearts", legal) == Parsed(2, "soft")
    assert _parse("tennis_whist", "Trump: Hearts", legal) == Parsed(2, "soft")
    assert _parse("tennis_whist", "H", legal) == Parsed(2, "soft")


def test_robbing_and_the_ace_decisions() -> None:
    legal = [Action("announce"), Action("rob", "JC"), Action("rob", "5D"), Action("silent")]
    assert _parse("spoil_five", "rob JC", legal) == Parsed(1, "soft")
    assert _parse("spoil_five", "Rob: 5♦", legal) == Parsed(2, "soft")
    assert _parse("spoil_five", "ANNOUNCE", legal) == Parsed(0, "soft")
    legal = [Action("claim"), Action("jinx")]
    assert _parse("spoil_five", "Answer: jinx", legal) == Parsed(1, "soft")


def test_tennis_shots_by_bare_card_and_doubles_players() -> None:
    legal = [Action("pass"), Action("shot", "LF-RB"), Action("smash"), Action("pass", "LF-RB")]
    assert _parse("tennis", "lf-rb", legal) == Parsed(1, "soft")
    assert _parse("tennis", "PASS", legal) == Parsed(0, "soft")
    doubles = [Action("pass"), Action("shot", "A1:LF-RB"), Action("smash", "A2")]
    assert _parse("tennis", "smash", doubles) == Parsed(2, "soft")
    assert _parse("tennis", "LF-RB", doubles) == Parsed(1, "soft")


def test_an_answer_fitting_two_actions_is_refused_with_both_named() -> None:
    doubles = [Action("shot", "A1:LF-RB"), Action("shot", "A2:LF-RB"), Action("pass")]
    parsed = _parse("tennis", "LF-RB", doubles)
    assert parsed.index is None and parsed.how == "none"
    assert "shot:A1:LF-RB" in parsed.reason and "shot:A2:LF-RB" in parsed.reason
    parsed = _parse("whist", "maybe `QS`, or 'TS'", PLAYS)
    assert parsed.index is None and "play:QS" in parsed.reason and "play:TS" in parsed.reason


def test_an_illegal_play_is_refused_naming_the_rule_and_the_legal_actions() -> None:
    legal = [Action("play", "4S"), Action("play", "8S")]
    obs = {"seat": 0, "hand": ["2H", "4S", "8S"]}
    parsed = _parse("whist", "play:2H", legal, observation=obs)
    assert parsed == Parsed(
        None, "none", "'play:2H' is not legal now: you must follow spades; legal: play:4S, play:8S"
    )
    parsed = _parse("whist", "KD", legal, observation=obs)
    assert parsed.reason.startswith("'play:KD' is not legal now: you do not hold KD; legal:")
    assert _parse("whist", "play:2H", legal).reason == (
        "'play:2H' is not legal now; legal: play:4S, play:8S"
    )


def test_a_shot_not_from_the_balls_area_is_refused_with_why() -> None:
    legal = [Action("pass"), Action("shot", "LF-RB")]
    obs = {
        "seat": 0,
        "ball_area": "LF",
        "players": [{"name": "P1", "visible": True, "hand": ["LF-RB", "RB-LB"]}],
    }
    parsed = _parse("tennis", "shot:RB-LB", legal, observation=obs)
    assert "a shot must start where the ball is (LF)" in parsed.reason
    assert "legal: pass, shot:LF-RB" in parsed.reason
    assert "you do not hold KILL" in _parse("tennis", "shot:KILL", legal, observation=obs).reason


def test_nonsense_and_empty_answers_are_refused_in_one_line() -> None:
    parsed = _parse("whist", "I think I should lead trumps", PLAYS)
    assert parsed.index is None and parsed.how == "none" and "\n" not in parsed.reason
    assert "names no action" in parsed.reason and "legal: play:4S" in parsed.reason
    assert _parse("whist", "   ", PLAYS).how == "none"
    assert _parse("whist", "play:QS", []) == Parsed(
        None, "none", "no action is legal now: it is not your turn"
    )
    assert _parse("whist", "9", PLAYS).how == "none"  # no action 9
    many = [Action("play", c) for c in ("2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC")]
    assert _parse("whist", "12", many).index is None


DOUBLES = [Action("pass"), Action("shot", "A1:LF-RB"), Action("smash", "A2"), Action("done")]


@pytest.mark.parametrize(("game", "legal"), [("whist", PLAYS), ("tennis", DOUBLES)])
@settings(max_examples=150, deadline=None)
@given(answer=st.text(max_size=80))
def test_any_answer_is_read_or_refused_in_one_line(
    game: str, legal: list[Action], answer: str
) -> None:
    parsed = _parse(game, answer, legal)
    if parsed.index is None:
        assert parsed.how == "none" and parsed.reason and "\n" not in parsed.reason
    else:
        assert 0 <= parsed.index < len(legal) and parsed.how in ("exact", "soft")
        assert parsed.reason == ""


@pytest.mark.parametrize(
    "filler", ["\n", " ", "a", "'", "`", '"', "“", "10", "♠", "Action: ", "play:", "q of "]
)
def test_a_long_answer_is_read_in_linear_time(filler: str) -> None:
    for answer in (filler * 50_000 + "\nAction: QS", filler * 50_000):
        started = time.perf_counter()
        parsed = _parse("whist", answer, PLAYS)
        assert time.perf_counter() - started < 2.0
        assert parsed.how in ("soft", "none")


def test_spoil_fives_hand_puts_the_ace_of_hearts_among_the_trumps_in_rank_order() -> None:
    hand = ["2C", "AC", "KC", "5D", "AD", "JD", "AH", "KH"]
    assert hand_lines(hand, "D", "spoil_five") == [
        "Your hand (8 cards):",
        "  Hearts: KH",
        "  Diamonds (trumps): 5D, JD, AH, AD",
        "  Clubs: KC, AC, 2C",
    ]
    assert hand_lines(hand, "D", "whist")[1:] == [
        "  Hearts: AH, KH",
        "  Diamonds (trumps): AD, JD, 5D",
        "  Clubs: AC, KC, 2C",
    ]

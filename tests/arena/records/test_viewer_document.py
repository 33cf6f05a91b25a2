"""The replay viewer's document (``page_data`` / ``viewer_document``): what every game's steps
hold, checked against the engine and the record rather than against the code that made it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from arena.records.format import read_record
from arena.records.html import render_page, viewer_document
from arena.records.view import load_replay
from engine import get_game
from engine.games.tennis_cards import TYPE_TEXT
from tests.arena.records.viewer_records import BANK_MS, MOVE_MS, VIEWER_GAMES, timed_record
from tests.arena.replay_truth import engine_views

SEED = 4


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("viewer-docs")
    return {label: timed_record(tmp, game, SEED, players) for label, game, players in VIEWER_GAMES}


@pytest.mark.parametrize(("label", "game", "players"), VIEWER_GAMES)
def test_every_step_of_every_game_is_in_the_document(
    records: dict[str, Any], label: str, game: str, players: int | None
) -> None:
    rec = records[label]
    doc = viewer_document(rec.path)
    decisions = [e for _, e in read_record(rec.path).decisions()]
    views = engine_views(rec.path)
    assert doc["meta"]["game"] == game and doc["meta"]["decisions"] == len(decisions)
    # The drawing is named by the game, not guessed from its id.
    assert doc["meta"]["presentation"] == get_game(game).presentation_kind
    assert len(doc["steps"]) == len(decisions) + 1 == len(views)
    assert doc["steps"][-1]["end"] and doc["steps"][-1]["decision"] is None
    json.dumps(doc)  # JSON-clean
    for step, entry, obs in zip(doc["steps"], decisions, views, strict=False):
        assert step["action"] == entry["action"] and step["seat"] == entry["seat"]
        assert step["decision"]["ms"] == entry["ms"]
        for seat, private in enumerate(step["private"]):
            # Each seat's private entry is that seat's own observation, field for field.
            for key, value in private.items():
                assert obs[seat][key] == value, (step["n"], seat, key)
            for key, value in step["public"].items():
                assert obs[seat][key] == value, (step["n"], seat, key)


@pytest.mark.parametrize(("label", "game", "players"), VIEWER_GAMES)
def test_a_seat_entry_holds_no_other_seats_cards(
    records: dict[str, Any], label: str, game: str, players: int | None
) -> None:
    doc = viewer_document(records[label].path)
    views = engine_views(records[label].path)
    for step, obs in zip(doc["steps"], views, strict=True):
        for seat, private in enumerate(step["private"]):
            if game == "tennis":
                for p, player in enumerate(private["players"]):
                    if not obs[seat]["players"][p]["visible"]:
                        assert player["hand"] == []
            else:
                assert private["hand"] == obs[seat]["hand"]
                others = {c for s, o in enumerate(obs) if s != seat for c in o["hand"]}
                assert not others & set(private["hand"])
        # Nothing private leaks into the shared part.
        assert not set(step["public"]) & set(doc["meta"]["private_fields"])


def test_bank_left_follows_the_referees_rules(records: dict[str, Any]) -> None:
    for label, _, _ in VIEWER_GAMES:
        rec = records[label]
        doc = viewer_document(rec.path)
        assert doc["meta"]["time_control"] == {"move_ms": MOVE_MS, "bank_ms": BANK_MS}
        got = [s["decision"]["bank_left_ms"] for s in doc["steps"][:-1]]
        assert got == pytest.approx(rec.banks, abs=0.01), label
        # The timed-out decision (step 3) empties its seat's bank, and says so.
        timed_out = doc["steps"][3]["decision"]
        assert timed_out["timeout"] and timed_out["bank_left_ms"] == 0.0
        # Spot-check the arithmetic by hand on the first decisions of a seat.
        entries = [e for _, e in read_record(rec.path).decisions()]
        seat = entries[0]["seat"]
        bank = float(BANK_MS)
        for k, e in enumerate(entries[:3]):
            if e["seat"] == seat:
                bank = max(0.0, bank - max(0.0, e["ms"] - MOVE_MS))
                assert doc["steps"][k]["decision"]["bank_left_ms"] == pytest.approx(bank)


def test_no_time_control_means_no_bank(tmp_path: Path) -> None:
    from tests.arena.replay_truth import make_record

    doc = viewer_document(make_record(tmp_path, "whist", 5))
    assert doc["meta"]["time_control"] is None
    assert all(s["decision"]["bank_left_ms"] is None for s in doc["steps"][:-1])


def test_faults_and_fallbacks_are_marked_for_the_timeline(records: dict[str, Any]) -> None:
    rec = records["whist"]
    marks = viewer_document(rec.path)["meta"]["marks"]
    assert sorted({m["step"] for m in marks if not m["fallback"]}) == rec.fault_steps == [3, 5]
    assert sorted(m["step"] for m in marks if m["fallback"]) == rec.fallback_steps
    assert {m["kind"] for m in marks if not m["fallback"]} == {"timeout", "illegal"}


def test_card_codes_are_the_engines(records: dict[str, Any]) -> None:
    card = re.compile(r"^(?:[2-9TJQKA][CDHS])$")
    for label, game, _ in VIEWER_GAMES:
        if game == "tennis":
            continue
        doc = viewer_document(records[label].path)
        for step in doc["steps"]:
            for private in step["private"]:
                assert all(card.match(c) for c in private["hand"])
            for trick in step["public"]["tricks"]:
                assert all(card.match(c) for c in trick["cards"])
            assert step["hand_sizes"] == [len(p["hand"]) for p in step["private"]]


def test_tennis_scores_are_said_as_on_court(records: dict[str, Any]) -> None:
    for label in ("tennis-singles", "tennis-doubles"):
        doc = viewer_document(records[label].path)
        said = set()
        for step in doc["steps"]:
            pub, score = step["public"], step["tennis"]["score"]
            if pub["phase"] != "over":
                names = ("0", "15", "30", "40")
                assert score["points"] == [names[p] for p in pub["points"]]
            said.update(score["points"])
            rows = {r["label"]: [c["value"] for c in r["cells"]] for r in step["scores"]["rows"]}
            assert rows["Points"] == score["points"]
            assert rows["Games (this set)"] == [str(g) for g in pub["games"]]
            seen = {d["card"]: d["count"] for d in step["tennis"]["discards_seen"]}
            assert all(
                seen.get(t, 0) == n for t, n in zip(TYPE_TEXT, pub["discards_seen"], strict=True)
            )
        assert {"15", "30", "40"} <= said, label


def test_scores_are_labelled_with_seat_and_side_names(records: dict[str, Any]) -> None:
    doc = viewer_document(records["whist"].path)
    rows = doc["steps"][10]["scores"]["rows"]
    assert [r["label"] for r in rows] == [
        "Tricks this deal",
        "Points this game",
        "Games won (rubber)",
    ]
    assert all([c["who"] for c in r["cells"]] == ["N+S", "E+W"] for r in rows)
    spoil = viewer_document(records["spoil_five"].path)
    for step in spoil["steps"]:
        robbed = step["public"]["robbed_by"]
        notes = " ".join(step["notes"])
        assert "robbed_by" not in notes and "-1" not in notes
        if robbed >= 0:
            assert f"{spoil['meta']['seat_names'][robbed]} robbed the turn-up" in step["notes"]
    result = doc["meta"]["result"]
    assert [s["name"] for s in result["seats"]] == ["N", "E", "S", "W"]
    assert result["summary"] == read_record(records["whist"].path).result["summary"]


def test_the_page_inlines_viewer_and_document(records: dict[str, Any]) -> None:
    page = render_page(load_replay(records["forty_five"].path))
    assert "window.CardArenaViewer" in page and ".cav-table" in page
    data = re.search(r'id="replay-data">(.*?)</script>', page, re.S)
    assert data is not None
    assert json.loads(data.group(1)) == viewer_document(records["forty_five"].path)

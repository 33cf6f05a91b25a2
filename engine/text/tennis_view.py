"""Tennis's text view (singles and doubles): who the seat is, the court as ``Game.present``'s
sketch draws it, the ball, the hands the seat sees, the serve and the decks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from engine.core import Game, Presentation
from engine.text.words import AREA_WORDS, said


def _players(obs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    players = obs.get("players", ())
    return [p for p in players if isinstance(p, Mapping)]


def who_lines(game: Game, obs: Mapping[str, Any]) -> list[str]:
    """The seat: a singles player, a doubles team, or one doubles player."""
    players = _players(obs)
    side = obs.get("side")
    mine = [str(p.get("name")) for p in players if p.get("side") == side]
    theirs = " and ".join(str(p.get("name")) for p in players if p.get("side") != side)
    mode = str(obs.get("mode", ""))
    lines = [said("game", title=game.title)]
    if mode == "doubles-team":
        team = "A" if side == 0 else "B"
        lines.append(said("t_you_team", team=team, players=" and ".join(mine)))
    elif mode == "doubles-players":
        controls = [int(i) for i in obs.get("controls", ())]
        name = str(players[controls[0]].get("name")) if controls else "?"
        partner = " and ".join(n for n in mine if n != name)
        lines.append(said("t_you_player", name=name, partner=partner, opponents=theirs))
    else:
        name = mine[0] if mine else "?"
        lines.append(said("t_you", name=name, mode=f"singles against {theirs}"))
    return lines


def ball_lines(obs: Mapping[str, Any]) -> list[str]:
    """Where the ball is, whose it is to answer, and what answers it."""
    if obs.get("phase") == "exchange":
        given = obs.get("exchange_given", 0)
        stage = said("t_stage_back", given=given) if obs.get("exchange_stage") else None
        return [said("t_phase_exchange", stage=stage or said("t_stage_give"))]
    ball_side, area = obs.get("ball_side", -1), str(obs.get("ball_area") or "")
    whose = said("t_yours") if ball_side == obs.get("side") else said("t_theirs")
    lines = []
    if obs.get("smash_pending"):
        lines.append(said("t_smash", whose=whose))
    elif area:
        lines.append(said("t_ball", whose=whose, area=area, words=AREA_WORDS.get(area, area)))
    else:
        lines.append(said("t_no_ball"))
    if obs.get("left_by"):
        lines.append(said("t_left_by", who=obs["left_by"]))
    return lines


def _counted(cards: Sequence[str]) -> str:
    """``RF-LB, SMASH x2``: copies of a card are alike, so they are counted."""
    counts = Counter(cards)
    return ", ".join(c if n == 1 else f"{c} x{n}" for c, n in counts.items())


def hand_lines(obs: Mapping[str, Any]) -> list[str]:
    """The hands this seat sees (its own, a team's two) and the others' sizes."""
    lines = []
    for p in _players(obs):
        name = str(p.get("name"))
        role = said("t_role", role=p["role"]) if p.get("role") else ""
        cards = [str(c) for c in p.get("hand", ())]
        if p.get("visible") and cards:
            lines.append(
                said("t_hand", name=name, role=role, count=len(cards), cards=_counted(cards))
            )
        elif p.get("visible"):
            lines.append(said("t_hand_empty", name=name, role=role))
        else:
            lines.append(said("t_other_hand", name=name, role=role, count=p.get("hand_size")))
    return lines


def table_lines(obs: Mapping[str, Any], shown: Presentation) -> list[str]:
    """The serve, the decks, the face-up discards and the recent events."""
    players = _players(obs)
    server = obs.get("server")
    lines = []
    if isinstance(server, int) and 0 <= server < len(players):
        who = players[server].get("name")
        lines.append(said("t_server", who=who, where=obs.get("serve_from")))
    lines.append(
        said(
            "t_stock",
            stock=obs.get("stock_size"),
            discards=obs.get("discard_size"),
            serve=obs.get("serve_deck_size"),
        )
    )
    drawing = shown.drawing.get("tennis")
    seen = drawing.get("discards_seen") if isinstance(drawing, Mapping) else None
    if isinstance(seen, list | tuple) and seen:
        cards = ", ".join(f"{d['card']} x{d['count']}" for d in seen if isinstance(d, Mapping))
        lines.append(said("t_seen", cards=cards))
    return lines


def recent_lines(obs: Mapping[str, Any]) -> list[str]:
    """The observation's window of recent events, as the referee wrote them."""
    recent = [str(r) for r in obs.get("recent", ())]
    return [said("t_recent")] + [f"  {r}" for r in recent] if recent else []


def render_tennis(game: Game, obs: Mapping[str, Any], shown: Presentation) -> list[str]:
    """The tennis view's lines before the score."""
    lines = who_lines(game, obs)
    if shown.sketch:
        lines += shown.sketch.splitlines()
    lines += ball_lines(obs)
    lines += hand_lines(obs)
    lines += table_lines(obs, shown)
    return lines

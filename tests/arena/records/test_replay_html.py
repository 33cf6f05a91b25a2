"""``arena replay html``: the page is self-contained, and in a real headless Chromium it steps
through the match, shows each seat's hand as the engine has it, and a seat view never shows
another seat's hidden cards.

Chromium is driven over the DevTools protocol with a tiny stdlib websocket client (no extra
package). When /usr/bin/chromium is missing, scripts/ensure_chromium.sh installs Debian's.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from arena.records.format import read_record, write_record
from engine import get_game
from tests.arena.replay_truth import (
    GAMES,
    OPTIONS,
    card_tokens,
    engine_steps,
    engine_views,
    hidden_now,
)
from tests.arena.replay_truth import make_record as short_record
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")
tokens = card_tokens


# --- a minimal websocket + DevTools client ------------------------------------------------------


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: masked text frames out, frames in."""

    def __init__(self, url: str, timeout: float = 20.0) -> None:
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert m, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, "websocket handshake: connection closed"
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        assert b" 101 " in status, status
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            assert chunk, "websocket: connection closed"
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, text: str) -> None:
        payload = text.encode()
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def recv(self) -> str:
        parts = []
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else b""
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode in (0x9, 0xA):  # ping/pong: not used by DevTools
                continue
            parts.append(data)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


class Page:
    """One browser tab over the DevTools protocol."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                result: dict[str, Any] = msg["result"]
                return result

    def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page and return its value (JSON-able)."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    def open(self, url: str) -> None:
        """Load ``url`` and wait until the replay script has run."""
        self.call("Page.navigate", url=url)
        ready = (
            f"document.readyState === 'complete' && location.href.split('#')[0] === "
            f"{json.dumps(url.split('#')[0])} && document.body.dataset.ready === '1'"
        )
        wait_until(lambda: self.js(ready), 20, interval=0.05, what=f"the page {url} to load")

    def show(self, step: int, seat: int | str) -> None:
        """Select a step and a view through the URL fragment, as a link would."""
        self.js(f"location.hash = 'step={step}&seat={seat}'")
        want = [str(step), str(seat)]
        wait_until(
            lambda: self.js("[document.body.dataset.step, document.body.dataset.seat]") == want,
            5,
            what=f"the page to honour the fragment step={step}&seat={seat}",
        )

    def text(self) -> str:
        """Everything the page shows (rendered text only: no embedded data, no scripts)."""
        value: str = self.js("document.body.innerText")
        return value

    def hand_rows(self) -> list[tuple[str, str]]:
        rows = self.js(
            "[...document.querySelectorAll('#hands .hand-row')]"
            ".map(r => [r.dataset.label, r.querySelector('.cards').textContent])"
        )
        return [(label, text) for label, text in rows]

    def click(self, element_id: str) -> None:
        self.js(f"document.getElementById({json.dumps(element_id)}).click()")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    if not CHROMIUM.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "ensure_chromium.sh")], check=True)
    assert CHROMIUM.exists(), "scripts/ensure_chromium.sh did not install chromium"
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ws: WebSocket | None = None
    try:
        port_file = profile / "DevToolsActivePort"

        def port_written() -> str:
            assert proc.poll() is None, "chromium exited at start"
            return port_file.read_text().strip() if port_file.exists() else ""

        written = wait_until(port_written, 30, interval=0.05, what="chromium's DevTools port")
        port = int(written.split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            targets = json.load(r)
        page = next(t for t in targets if t.get("type") == "page")
        ws = WebSocket(page["webSocketDebuggerUrl"])
        tab = Page(ws)
        tab.call("Page.enable")
        yield tab
    finally:
        if ws is not None:
            ws.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


# --- records and the engine's truth ---------------------------------------------------------------


def make_record(tmp_path: Path, game: str, seed: int = 5) -> Path:
    return short_record(tmp_path, game, seed)


def own_hands(obs: dict[str, Any]) -> dict[str, list[str]]:
    """The hands a seat's observation shows it: ``{row label: cards}``."""
    if "players" in obs:  # tennis: per player, those this seat may see
        return {
            p["name"] + (f" ({p['role']})" if p["role"] else ""): list(p["hand"])
            for p in obs["players"]
            if p["visible"]
        }
    return {"hand": list(obs["hand"])}


def shown_hands(rows: list[tuple[str, str]], seat_name: str, game: str) -> dict[str, list[str]]:
    """The hands the page shows in a seat view, keyed as :func:`own_hands`."""
    if game == "tennis":
        return {label: tokens(text) for label, text in rows}
    assert [label for label, _ in rows] == [seat_name]
    fields = dict(part.split(": ", 1) for part in rows[0][1].split("; "))
    return {"hand": [] if fields["hand"] == "—" else fields["hand"].split()}


def sample_steps(n_frames: int) -> list[int]:
    return sorted({0, 1, n_frames // 3, n_frames // 2, n_frames - 2, n_frames - 1})


# --- tests ----------------------------------------------------------------------------------------


def test_page_is_self_contained_and_embeds_the_match(tmp_path: Path) -> None:
    record = make_record(tmp_path, "whist")
    out = tmp_path / "page" / "whist.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    page = out.read_text()
    # No network: no external script, stylesheet, image, font or frame.
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "http://" not in page and "https://" not in page
    data_text = re.search(r'id="replay-data">(.*?)</script>', page, re.S)
    assert data_text is not None
    data = json.loads(data_text.group(1))
    decisions = sum(1 for _ in read_record(record).decisions())
    assert data["meta"]["decisions"] == decisions
    assert len(data["steps"]) == decisions + 1 and data["steps"][-1]["end"] is True


def test_markup_in_record_text_cannot_escape_the_data_block(tmp_path: Path) -> None:
    record = make_record(tmp_path, "whist")
    rec = read_record(record)
    evil = "</script><script>document.title='pwned'</script>"
    header = dict(rec.header)
    header["seats"] = [{**seat, "bot_name": evil} for seat in header["seats"]]
    header["match_id"] = "<b>x</b>"
    forged = tmp_path / "evil.jsonl.gz"
    write_record(forged, header, rec.entries, rec.result)
    out = tmp_path / "evil.html"
    assert main(["replay", "html", str(forged), "-o", str(out)]) == 0
    page = out.read_text()
    assert evil not in page
    assert page.count("<script") == 2  # the data block and the viewer script, nothing injected
    assert "<b>x</b>" not in page


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.slow
def test_seat_views_show_exactly_the_engines_hand_and_nothing_hidden(
    browser: Page, tmp_path: Path, game: str
) -> None:
    record = make_record(tmp_path, game)
    out = tmp_path / f"{game}.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    steps = engine_steps(record)
    views = [v for v, _ in steps]
    names = get_game(game).seat_names(get_game(game).configure(OPTIONS[game][0], OPTIONS[game][1]))
    browser.open(out.as_uri())
    for k in sample_steps(len(views)):
        for seat in range(len(names)):
            browser.show(k, seat)
            assert shown_hands(browser.hand_rows(), names[seat], game) == own_hands(
                views[k][seat]
            ), f"step {k}, seat {names[seat]}"
            leaked = hidden_now(*steps[k], seat) & set(tokens(browser.text()))
            assert not leaked, f"step {k}: seat {names[seat]}'s view shows {sorted(leaked)}"
        # The whole-table view shows every hand of every seat.
        browser.show(k, "all")
        shown = Counter(t for _, text in browser.hand_rows() for t in tokens(text))
        for obs in views[k]:
            for cards in own_hands(obs).values():
                assert not Counter(cards) - shown, f"step {k}: whole table lacks {cards}"


@pytest.mark.slow
def test_buttons_jump_and_seat_selector_drive_the_page(browser: Page, tmp_path: Path) -> None:
    record = make_record(tmp_path, "whist")
    out = tmp_path / "whist.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    decisions = sum(1 for _ in read_record(record).decisions())
    browser.open(out.as_uri() + "#step=0&seat=all")
    assert browser.js("document.getElementById('step').textContent") == f"Step 0 of {decisions}"
    assert browser.js("document.getElementById('prev').disabled") is True
    for _ in range(3):
        browser.click("next")
    browser.click("prev")
    assert browser.js("document.body.dataset.step") == "2"
    assert browser.js("document.getElementById('step').textContent") == f"Step 2 of {decisions}"
    assert len(browser.hand_rows()) == 4
    # Jump to a step by number.
    browser.js("document.getElementById('jump').value = '10'")
    browser.click("go")
    assert browser.js("document.body.dataset.step") == "10"
    # The seat selector: the view narrows to one seat and the fragment follows.
    browser.js(
        "const s = document.getElementById('seat-select'); s.value = '2';"
        "s.dispatchEvent(new Event('change'))"
    )
    assert browser.js("document.body.dataset.seat") == "2"
    assert [label for label, _ in browser.hand_rows()] == ["S"]
    assert browser.js("location.hash") == "#step=10&seat=2"
    # At step 0 a seat sees its own deal and none of the other three.
    browser.click("first")
    events = browser.js("[...document.querySelectorAll('#events li')].map(li => li.textContent)")
    deals = [e for e in events if " deal " in f" {e} "]
    assert len(deals) == 1 and deals[0].startswith("S deal")
    # The end shows the recorded result.
    browser.click("last")
    assert browser.js("document.body.dataset.step") == str(decisions)
    summary = read_record(record).result["summary"]
    assert summary in browser.js("document.getElementById('result').textContent")
    assert browser.js("document.getElementById('next').disabled") is True


@pytest.mark.slow
def test_tennis_page_draws_the_court_with_the_ball(browser: Page, tmp_path: Path) -> None:
    record = make_record(tmp_path, "tennis")
    out = tmp_path / "tennis.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    views = engine_views(record)
    k = next(i for i, v in enumerate(views) if v[0]["ball_area"])
    browser.open(out.as_uri())
    browser.show(k, "all")
    court = browser.js("document.getElementById('court').textContent")
    assert browser.js("getComputedStyle(document.getElementById('court-box')).display") != "none"
    lines = court.splitlines()
    marked = [i for i, line in enumerate(lines) if "(o)" in line]
    net = next(i for i, line in enumerate(lines) if line.endswith(" net"))
    assert len(marked) == 1 and f"{views[k][0]['ball_area']} (o)" in lines[marked[0]]
    # Side 0 plays at the bottom of the drawing, side 1 at the top.
    assert (marked[0] < net) == (views[k][0]["ball_side"] == 1)
    assert browser.js("getComputedStyle(document.getElementById('trick-box')).display") == "none"


def test_html_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "plain.jsonl.gz"
    bad.write_text("not gzip")
    assert main(["replay", "html", str(bad), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a gzip file" in err
    assert not (tmp_path / "x.html").exists()

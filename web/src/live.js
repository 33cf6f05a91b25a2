// A match in progress on its page (docs/hosting.md, "Live matches"): shown live once no other
// seating of its deal is still to play or in play, else the page says when. The feed
// (/api/v1/live/ID/feed, Server-Sent Events) holds the match's public events and the table
// drawn from them (arena/people/onlooker.py), the page messages of `arena watch`'s page; the
// table is drawn by the replay viewer as that page draws it, every hand face down.
import { API, h, api, empty } from "./common.js";

const STATUS_POLL_MS = 5000;
const MAX_EVENTS = 200;

export function liveMatch(stage, id, onOver) {
  const box = h("div", { class: "live-match", id: "live-match" });
  const line = h("p", { class: "lead", id: "live-state" }, "Looking whether it can be shown live\u2026");
  stage.append(line, box);
  const look = () =>
    api(`/live/${encodeURIComponent(id)}`)
      .then((v) => {
        line.dataset.showing = v.showing;
        line.textContent = v.showing === "live" ? "Live: public information only (hands are face down until the replay is published)." : `Not shown live now: ${v.why}.`;
        if (v.showing === "live") follow(box, id, line, onOver);
        else if (v.showing === "waiting") setTimeout(look, STATUS_POLL_MS);
        else if (v.showing === "over") onOver();
      })
      .catch((err) => (line.textContent = err.message));
  look();
}

function follow(box, id, line, onOver) {
  const table = h("div", { id: "viewer" }, empty("Waiting for the table\u2026"));
  const log = h("ol", { id: "live-events", class: "live-events" });
  const result = h("div", { id: "live-result", class: "live-result", hidden: true });
  box.append(result, table, h("h2", {}, "Events, live"), log);
  const doc = { meta: null, steps: [] };
  let viewer = null;
  const draw = () => {
    if (viewer) viewer.destroy();
    viewer = window.CardArenaViewer.mount(table, doc, { keyboard: false, playFromHere: false, onlooker: true });
    viewer.goto(doc.steps.length - 1);
  };
  const source = new EventSource(`${API}/live/${encodeURIComponent(id)}/feed`);
  const handlers = {
    start: (m) => {
      // A stream that reconnects starts again from its first message.
      doc.meta = m.meta;
      doc.steps = [];
      log.replaceChildren();
    },
    event: (m) => {
      log.append(h("li", {}, m.event.text));
      while (log.children.length > MAX_EVENTS) log.removeChild(log.firstChild);
    },
    view: (m) => {
      doc.steps.push(m.step);
      draw();
    },
    error: (m) => log.append(h("li", { class: "fault" }, m.message)),
    end: (m) => {
      source.close();
      result.hidden = false;
      // A challenge's deal is its own: its replay is published at once (./challenges.js).
      const published = id.startsWith("challenge-") ? "its replay is published: reload the page to see it." : "its replay is published once every rotation of its deal has been played.";
      result.replaceChildren(h("strong", {}, `End of the match: ${m.result.summary}`), ` \u00b7 ${published}`);
      line.dataset.showing = "over";
      box.dataset.ended = "1";
      onOver();
    },
  };
  source.onmessage = (e) => {
    const m = JSON.parse(e.data);
    const handle = handlers[m.type];
    if (handle) handle(m);
    box.dataset.ready = "1";
  };
  source.onerror = () => {
    // The host refuses (the rule, a limit) or the stream ended: say so, look again later.
    if (box.dataset.ended === "1") return;
    source.close();
    line.textContent = "The live stream stopped; looking again\u2026";
    setTimeout(() => {
      box.replaceChildren();
      liveMatchAgain(box, id, line, onOver);
    }, STATUS_POLL_MS);
  };
}

function liveMatchAgain(box, id, line, onOver) {
  api(`/live/${encodeURIComponent(id)}`)
    .then((v) => {
      line.dataset.showing = v.showing;
      if (v.showing === "live") follow(box, id, line, onOver);
      else line.textContent = v.showing === "over" ? "The match is over." : `Not shown live now: ${v.why}.`;
    })
    .catch((err) => (line.textContent = err.message));
}

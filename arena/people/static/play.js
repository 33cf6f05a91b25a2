/* Card Arena: a person's seat (arena play). Reads the seat's feed (Server-Sent Events from the
 * bridge, arena/people/page.py) and draws each decision with the replay viewer
 * (CardArenaViewer, in the seat's own view); answers by POST. Everything it shows comes from the
 * feed, which holds only what the seat's own protocol messages said.
 */
(function () {
  "use strict";
  var SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  var CARD = /^(10|[2-9TJQKA])([CDHS])$/;
  var $ = function (id) { return document.getElementById(id); };
  var state = { doc: null, seat: null, viewer: null, pending: null, legal: [], focus: 0,
    clock: null, ended: false, sending: false };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cardText(code) {
    var m = CARD.exec(code);
    if (!m) return null;
    return el("span", (m[2] === "D" || m[2] === "H") ? "pl-red" : "pl-black",
      (m[1] === "T" ? "10" : m[1]) + SUIT[m[2]]);
  }
  /* "play:TD" as "10♦", "trump:H" as "trump ♥", anything else as its words. */
  function actionLabel(code) {
    var i = code.indexOf(":"), kind = i < 0 ? code : code.slice(0, i), arg = i < 0 ? "" : code.slice(i + 1);
    var span = el("span", "pl-label");
    var card = arg ? cardText(arg) : null;
    if (kind !== "play" || !card) span.appendChild(document.createTextNode(kind + (arg ? " " : "")));
    if (card) span.appendChild(card);
    else if (SUIT[arg]) span.appendChild(el("span", (arg === "D" || arg === "H") ? "pl-red" : "pl-black", SUIT[arg]));
    else if (arg) span.appendChild(document.createTextNode(arg.replace(/:/g, " ")));
    return span;
  }
  function status(text, error) {
    var s = $("pl-status");
    s.textContent = text;
    s.classList.toggle("pl-error", !!error);
  }
  function fmt(ms) { return (Math.max(0, ms) / 1000).toFixed(ms < 10000 ? 1 : 0) + " s"; }

  // --- the clock: the move's time first, then the bank, as the referee counts ---------------
  function startClock(deadline, bank) {
    stopClock();
    var start = performance.now();
    function tick() {
      var used = performance.now() - start;
      var move = deadline - used, left = bank + Math.min(0, move);
      var c = $("pl-clock");
      c.textContent = "move " + fmt(move) + " \u00b7 bank " + fmt(left);
      c.classList.toggle("pl-low", move <= 0 || (move < 5000 && left <= 0));
    }
    tick();
    state.clock = setInterval(tick, 200);
  }
  function stopClock() { if (state.clock !== null) clearInterval(state.clock); state.clock = null; }

  // --- the move panel ----------------------------------------------------------------------
  /* The cards of the seat's hands (a tennis seat may hold two players' hands). */
  function myCards() {
    return document.querySelectorAll('[data-seat-hand="' + state.seat + '"] [data-card]');
  }
  function drawActions() {
    var box = $("pl-actions");
    box.replaceChildren();
    myCards().forEach(function (c) { c.classList.remove("pl-legal", "pl-focus"); });
    $("pl-move").hidden = state.pending === null;
    document.body.dataset.pending = state.pending === null ? "" : String(state.pending);
    // Another tab in front still shows whose move it is.
    if (state.doc) document.title = (state.pending === null ? "" : "\u25cf Your move \u00b7 ") +
      state.doc.meta.title + (state.seat < 0 ? " \u00b7 watching" :
        " \u00b7 seat " + state.doc.meta.seat_names[state.seat]);
    if (state.pending === null) return;
    state.legal.forEach(function (code, i) {
      var b = el("button", "pl-action" + (i === state.focus ? " pl-focus" : ""));
      b.type = "button";
      b.dataset.index = String(i);
      b.dataset.action = code;
      if (i < 10) b.appendChild(el("span", "pl-key", String((i + 1) % 10)));
      b.appendChild(actionLabel(code));
      b.addEventListener("click", function () { send(i); });
      box.appendChild(b);
    });
    myCards().forEach(function (c) {
      var code = c.getAttribute("data-card");
      var i = state.legal.indexOf("play:" + code);
      if (i < 0) return;
      c.classList.add("pl-legal");
      if (i === state.focus) c.classList.add("pl-focus");
      c.setAttribute("data-index", String(i));
    });
  }
  function send(i) {
    if (state.pending === null || state.sending || i < 0 || i >= state.legal.length) return;
    state.sending = true;
    var rid = state.pending;
    fetch("answer", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ request_id: rid, index: i }) })
      .then(function (r) {
        if (r.status === 204) return null;
        return r.json().then(function (b) { status(b.error || ("answer refused: " + r.status), true); });
      })
      .catch(function () { status("the bridge is gone", true); })
      .then(function () { state.sending = false; });
  }
  function onKey(e) {
    if (state.pending === null || e.ctrlKey || e.metaKey || e.altKey) return;
    var n = state.legal.length, handled = true;
    if (/^[0-9]$/.test(e.key)) {
      var i = (parseInt(e.key, 10) + 9) % 10;
      if (i < n) send(i); else handled = false;
    } else if (e.key === "ArrowRight" || e.key === "ArrowDown") { state.focus = (state.focus + 1) % n; drawActions(); }
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") { state.focus = (state.focus + n - 1) % n; drawActions(); }
    else if (e.key === "Enter") send(state.focus);
    else handled = false;
    if (handled) e.preventDefault();
  }

  // --- the feed ----------------------------------------------------------------------------
  function show() {
    if (state.viewer) state.viewer.destroy();
    var root = $("viewer");
    // A spectator's steps hold no hand: every hand is drawn face down, as a count.
    state.viewer = window.CardArenaViewer.mount(root, state.doc, {
      keyboard: false, playFromHere: false, onlooker: state.seat < 0 });
    state.viewer.setSeat(state.seat);
    state.viewer.goto(state.doc.steps.length - 1);
  }
  function liveEvent(text, cls) {
    var ol = $("pl-events");
    ol.appendChild(el("li", cls || "", text));
    while (ol.children.length > 200) ol.removeChild(ol.firstChild);
    $("pl-live").scrollTop = $("pl-live").scrollHeight;
  }
  function showResult(r) {
    var names = state.doc ? state.doc.meta.seat_names : [];
    var box = $("pl-result");
    box.replaceChildren(el("h3", "cav-panel-title", "End of the match"),
      el("div", "pl-result-summary", r.summary));
    var table = el("table", "cav-result-table");
    table.appendChild(el("tr")).append(el("th", "", "seat"), el("th", "", "score"), el("th", "", "rank"));
    r.scores.forEach(function (s, i) {
      var tr = el("tr", (r.ranks[i] === 1 ? "cav-winner" : "") + (i === state.seat ? " pl-me" : ""));
      tr.append(el("td", "", (names[i] || i) + (i === state.seat ? " (you)" : "")), el("td", "", s),
        el("td", "", r.ranks[i]));
      table.appendChild(tr);
    });
    box.appendChild(table);
    if (r.forfeited_by) box.appendChild(el("div", "cav-fault", "forfeit by " + r.forfeited_by));
    r.faults.forEach(function (f) { box.appendChild(el("div", "cav-fault", "your fault: " + f.kind + ": " + f.detail)); });
    box.hidden = false;
  }
  var handlers = {
    start: function (m) {
      state.seat = m.seat;
      // A feed that reconnects starts again from its first message: start again with it.
      state.doc = { meta: m.meta, steps: [] };
      state.pending = null;
      $("pl-events").replaceChildren();
      var names = m.meta.seat_names;
      // A spectator (arena watch) sits at no seat: public events and the result only.
      $("pl-who").textContent = m.seat < 0 ? m.meta.title + " \u00b7 watching live: public information only" :
        m.meta.title + " \u00b7 you are " + names[m.seat] + " (seat " + m.seat + ")";
      if (m.seat < 0) $("viewer").replaceChildren(el("div", "pl-wait", "Waiting for the table\u2026"));
      document.body.dataset.seat = String(m.seat);
    },
    event: function (m) { liveEvent(m.event.text, m.event.to ? "cav-private" : ""); },
    // The table between the seat's decisions, as the events it was sent move it on.
    view: function (m) {
      state.doc.steps.push(m.step);
      show();
      drawActions();
    },
    decision: function (m) {
      state.doc.steps.push(m.step);
      state.pending = m.request_id;
      state.legal = m.legal;
      state.focus = 0;
      show();
      drawActions();
      startClock(m.deadline_ms, m.bank_ms);
      status("your move");
    },
    answered: function (m) {
      if (state.pending !== m.request_id) return;
      var steps = state.doc.steps;
      steps[steps.length - 1].action = state.legal[m.index];
      state.pending = null;
      stopClock();
      show();
      drawActions();
      status("waiting for the others");
    },
    error: function (m) {
      liveEvent((m.fault ? "fault " + m.fault + ": " : "") + m.message, "cav-fault");
      if (m.fault === "timeout") { state.pending = null; stopClock(); drawActions(); }
    },
    end: function (m) {
      state.ended = true;
      state.pending = null;
      stopClock();
      drawActions();
      showResult(m.result);
      status("the match is over");
      document.body.dataset.ended = "1";
      source.close();
    },
  };
  var source = new EventSource("feed");
  source.onmessage = function (e) {
    var m = JSON.parse(e.data);
    var h = handlers[m.type];
    if (h) h(m);
    document.body.dataset.ready = "1";
  };
  source.onerror = function () {
    if (!state.ended) status("lost the bridge; retrying\u2026", true);
  };
  document.addEventListener("keydown", onKey);
  // One listener for the highlighted cards, whichever drawing they are in now.
  document.addEventListener("click", function (e) {
    var card = e.target && e.target.closest ? e.target.closest("svg.pl-legal") : null;
    if (card) send(parseInt(card.getAttribute("data-index"), 10));
  });
})();

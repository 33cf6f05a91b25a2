/* Card Arena replay viewer: draws one match document (arena/records/html.py, page_data) as a
 * table seen from above (card games) or a court (tennis), with a timeline to step through it.
 * Which of them is the game's word, meta.presentation ("trick_table", "tennis_court", or
 * "fields": every field by name), never its id.
 *
 *   const player = CardArenaViewer.mount(element, doc, {hash: true});
 *   player.goto(12); player.setSeat(2); player.setSeat("all");
 *
 * Plain JavaScript, no libraries, nothing fetched: it runs inside a single offline HTML file.
 * Every number that needs the record or the rules (scores, bank left) comes computed in the
 * document; this file only draws. In a seat view it draws from that seat's own observation
 * (step.private[seat]) and the fields every seat shares (step.public), nothing else.
 * Events: "cardarena:step" (detail {step, seat}) on the element whenever either changes.
 * With doc.analysis (arena replay analyze --json's object, docs/analysis.md) the decision panel
 * draws each legal action's value as a bar and the timeline marks the costly decisions, each
 * only in the whole-table view and the deciding seat's.
 * Options: hash (keep the URL fragment), keyboard, playFromHere (false: no "Play from here"),
 * onlooker (a spectator's live table, arena/people/onlooker.py: every hand face down, as counts,
 * whatever the view; the steps carry no hand anyway).
 */
(function () {
  "use strict";

  // The SVG namespace, taken from the HTML parser so this file holds no URL at all.
  var SVG_NS = (function () {
    var d = document.createElement("div");
    d.innerHTML = "<svg></svg>";
    return d.firstChild.namespaceURI;
  })();
  var SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  var SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  var CARD = /^(10|[2-9TJQKA])([CDHS])$/;
  var TENNIS_CARD = /^(?:(RF|LF|RB|LB)-(RF|LF|RB|LB)|SMASH|KILL|OUT)$/;
  var SPEEDS = [0.5, 1, 2, 4];
  var BASE_MS = 800; // one step per 0.8 s at 1x
  var HELP = "Keys: \u2190/\u2192 step \u00b7 Home/End first/last \u00b7 Space play/pause \u00b7 " +
    "0\u20139 seat view \u00b7 a whole table";

  // --- small DOM helpers ----------------------------------------------------------------------

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function append(parent, children) {
    children.forEach(function (c) { if (c) parent.appendChild(c); });
    return parent;
  }
  function rankText(r) { return r === "T" ? "10" : r; }
  function cardLabel(code) {
    var m = CARD.exec(code);
    return m ? rankText(m[1]) + SUIT[m[2]] : code;
  }
  function isRed(suit) { return suit === "D" || suit === "H"; }
  function fmtMs(ms) {
    if (ms === null || ms === undefined) return "\u2014";
    if (ms >= 10000) return (ms / 1000).toFixed(1) + " s";
    return (Math.round(ms * 10) / 10).toLocaleString("en-US") + " ms";
  }

  // --- cards ------------------------------------------------------------------------------------

  /* A playing card's face: rank and suit in the corners, the suit large in the middle. */
  function cardFace(code, small) {
    var m = CARD.exec(code);
    if (!m) return tennisCard(code, small);
    var rank = rankText(m[1]), suit = m[2];
    var s = svg("svg", { viewBox: "0 0 60 84", role: "img",
      "aria-label": rank + " of " + SUIT_NAME[suit] });
    s.setAttribute("class", "cav-card " + (isRed(suit) ? "cav-red" : "cav-black") +
      (small ? " cav-small" : ""));
    s.setAttribute("data-card", code);
    append(s, [
      svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, class: "cav-card-bg" }),
      svg("text", { x: 5, y: 18, class: "cav-rank", "font-size": rank.length > 1 ? 15 : 17 }, rank),
      svg("text", { x: 6, y: 33, class: "cav-pip", "font-size": 14 }, SUIT[suit]),
      svg("text", { x: 33, y: 62, class: "cav-pip", "font-size": 34, "text-anchor": "middle" },
        SUIT[suit]),
      svg("text", { x: 55, y: 78, class: "cav-rank", "font-size": 12, "text-anchor": "end" },
        rank + SUIT[suit]),
    ]);
    return s;
  }
  /* A card face down: only that it is there. */
  function cardBack(small, tennis) {
    var s = svg("svg", { viewBox: tennis ? "0 0 44 60" : "0 0 60 84", role: "img",
      "aria-label": "a hidden card" });
    s.setAttribute("class", "cav-card cav-back" + (small ? " cav-small" : "") +
      (tennis ? " cav-tcard" : ""));
    s.setAttribute("data-hidden-card", "");
    var w = tennis ? 44 : 60, h = tennis ? 60 : 84;
    append(s, [
      svg("rect", { x: 1, y: 1, width: w - 2, height: h - 2, rx: 5, class: "cav-back-bg" }),
      svg("rect", { x: 5, y: 5, width: w - 10, height: h - 10, rx: 3, class: "cav-back-in" }),
      svg("path", { d: "M" + w / 2 + " 12 L" + (w - 12) + " " + h / 2 + " L" + w / 2 + " " +
        (h - 12) + " L12 " + h / 2 + " Z", class: "cav-back-in" }),
    ]);
    return s;
  }
  /* Where an area lies in a card's little court: the hitter's half at the bottom (as it faces
   * the net, its left is on the left), the other half at the top (seen from the other side, so
   * its left is on our right). Returns [x, y] of the area's centre in a 44x60 card. */
  function areaSpot(area, far) {
    var left = area.charAt(0) === "L", fore = area.charAt(1) === "F";
    var x = (left !== far) ? 14 : 30;
    var y = far ? (fore ? 23 : 11) : (fore ? 37 : 49);
    return [x, y];
  }
  /* A tennis play card as a small diagram: a shot is an arrow from its origin to the far side's
   * destination; Smash, Kill and Out are named. */
  function tennisCard(code, small) {
    var s = svg("svg", { viewBox: "0 0 44 60", role: "img", "aria-label": code });
    s.setAttribute("class", "cav-card cav-tcard" + (small ? " cav-small" : ""));
    s.setAttribute("data-card", code);
    s.appendChild(svg("title", {}, code));
    s.appendChild(svg("rect", { x: 1, y: 1, width: 42, height: 58, rx: 5, class: "cav-card-bg" }));
    var m = TENNIS_CARD.exec(code);
    if (m && m[1]) {
      append(s, [
        svg("rect", { x: 6, y: 5, width: 32, height: 50, class: "cav-mini-court" }),
        svg("line", { x1: 6, y1: 30, x2: 38, y2: 30, class: "cav-mini-net" }),
        svg("line", { x1: 22, y1: 5, x2: 22, y2: 55, class: "cav-mini-line" }),
      ]);
      var a = areaSpot(m[1], false), b = areaSpot(m[2], true);
      append(s, [
        svg("circle", { cx: a[0], cy: a[1], r: 3, class: "cav-mini-from" }),
        svg("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: "cav-mini-shot" }),
        svg("circle", { cx: b[0], cy: b[1], r: 3.5, class: "cav-mini-to" }),
        svg("text", { x: 22, y: 59, class: "cav-mini-text", "text-anchor": "middle",
          "font-size": 6 }, code),
      ]);
    } else {
      var icon = { SMASH: "\u26a1", KILL: "\u2716", OUT: "\u2298" }[code] || "?";
      append(s, [
        svg("text", { x: 22, y: 30, "text-anchor": "middle", "font-size": 20,
          class: "cav-special cav-" + code.toLowerCase() }, icon),
        svg("text", { x: 22, y: 48, "text-anchor": "middle", "font-size": 8.5,
          class: "cav-special-name" }, code.charAt(0) + code.slice(1).toLowerCase()),
      ]);
    }
    return s;
  }
  /* Text with every card code in it shown as a coloured "10♥" (events, facts, tricks). */
  function richText(text) {
    var span = el("span", "cav-rich");
    String(text).split(/(\s+|[=,;:()\[\]])/).forEach(function (tok) {
      var m = CARD.exec(tok);
      if (m) span.appendChild(el("span", "cav-inline-card " + (isRed(m[2]) ? "cav-red" : "cav-black"),
        rankText(m[1]) + SUIT[m[2]]));
      else if (tok) span.appendChild(document.createTextNode(tok));
    });
    return span;
  }

  /* An action as people read it: "play:TD" as the card "10♦", "trump:H" as "trump ♥", "rob:5C"
   * as "rob 5♣", "pass" as it is; its code stays in data-action. */
  function actionView(code) {
    var s = String(code), i = s.indexOf(":");
    var kind = i < 0 ? s : s.slice(0, i), arg = i < 0 ? "" : s.slice(i + 1);
    var span = el("span", "cav-action");
    span.setAttribute("data-action", s);
    if (kind !== "play" || !arg) span.appendChild(document.createTextNode(kind + (arg ? " " : "")));
    if (SUIT[arg]) {
      span.appendChild(el("span", "cav-inline-card " + (isRed(arg) ? "cav-red" : "cav-black"), SUIT[arg]));
    } else if (arg) {
      span.appendChild(richText(arg.replace(/:/g, " ")));
    }
    return span;
  }

  // --- analysis: each legal action's value (doc.analysis) -------------------------------------

  var COSTLY = { inaccuracy: 1, mistake: 1, blunder: 1 };
  function fmtValue(x) { return (Math.round(x * 100) / 100).toFixed(2); }

  /* The analysed decision d as one bar per legal action, the longest the best; the played one
   * and the best one marked. Values may be negative (forty-five's points), so bars start at the
   * decision's lowest value. */
  function analysisBars(d, an) {
    var unit = an.unit;
    var box = el("div", "cav-analysis cav-class-" + d["class"]);
    box.setAttribute("data-analysis-step", String(d.step));
    var head = el("div", "cav-analysis-head");
    append(head, [el("span", "cav-analysis-class", d["class"]),
      el("span", "", d.loss > 0 ? " −" + fmtValue(d.loss) + " ± " + fmtValue(d.loss_se) +
        " " + unit : " loses nothing"),
      el("span", "cav-dim", " · " + d.method + (d.fallback ? " · played by the referee" : ""))]);
    box.appendChild(head);
    var means = d.actions.map(function (a) { return a.mean; });
    var lo = Math.min.apply(null, means), hi = Math.max.apply(null, means);
    d.actions.forEach(function (a) {
      var row = el("div", "cav-bar-row");
      row.setAttribute("data-bar-action", a.action);
      var chosen = a.action === d.chosen, best = a.action === d.best;
      if (chosen) row.classList.add("cav-bar-chosen");
      if (best) row.classList.add("cav-bar-best");
      var track = el("span", "cav-bar-track");
      var bar = el("span", "cav-bar");
      bar.style.width = (hi > lo ? 8 + 92 * (a.mean - lo) / (hi - lo) : 100) + "%";
      track.appendChild(bar);
      row.title = a.action + ": " + fmtValue(a.mean) + " ± " + fmtValue(a.se) + " " + unit +
        " over " + a.n + " worlds";
      append(row, [append(el("span", "cav-bar-label"), [actionView(a.action)]), track,
        el("span", "cav-bar-value", fmtValue(a.mean)),
        el("span", "cav-bar-tags", (chosen ? "played" : "") + (chosen && best ? " · " : "") +
          (best ? "best" : ""))]);
      box.appendChild(row);
    });
    box.appendChild(el("div", "cav-dim cav-analysis-unit", "values in " + unit + " to the end of the " +
      an.span + ", " + an.worlds + " worlds"));
    return box;
  }

  // --- the viewer -------------------------------------------------------------------------------

  function mount(root, doc, options) {
    options = options || {};
    var meta = doc.meta, steps = doc.steps, names = meta.seat_names;
    var last = steps.length - 1;
    var state = { step: 0, seat: "all", playing: false, speed: 1, timer: null, sent: null,
      showPlay: false };
    var kind = meta.presentation;
    var isTennis = kind === "tennis_court";
    var analysis = doc.analysis || null, analysed = {};
    if (analysis) analysis.decisions.forEach(function (d) { analysed[d.step] = d; });
    // Only the deciding seat's view and the whole table's show a decision's analysis.
    function showsAnalysis(d) { return !!d && (state.seat === "all" || state.seat === d.seat); }

    root.classList.add("cav");
    root.replaceChildren();
    root.dataset.game = meta.game;
    root.dataset.presentation = kind;

    function seatName(s) {
      return (typeof s === "number" && s >= 0 && s < names.length) ? names[s] : "?";
    }
    function sees(to) { return state.seat === "all" || to === null || to.indexOf(state.seat) >= 0; }
    var onlooker = !!options.onlooker;

    // Header, controls, timeline.
    var title = el("div", "cav-title", meta.title + " \u00b7 " + (meta.match_id || "match"));
    var subtitle = el("div", "cav-subtitle", names.map(function (n, i) {
      return n + (meta.bots[i] ? " = " + meta.bots[i] : "");
    }).join(" \u00b7 ") + (meta.seed === null ? "" : " \u00b7 seed " + meta.seed));
    var tc = meta.time_control;
    if (tc) subtitle.textContent += " \u00b7 " + tc.move_ms + " ms a move + " + tc.bank_ms + " ms bank";

    function button(cls, label, titleText, fn) {
      var b = el("button", cls, label);
      b.type = "button";
      b.title = titleText;
      b.addEventListener("click", fn);
      return b;
    }
    var bFirst = button("cav-first", "|\u25c0", "first step (Home)", function () { go(0); });
    var bPrev = button("cav-prev", "\u25c0", "previous step (\u2190)", function () { go(state.step - 1); });
    var bPlay = button("cav-play", "\u25b6 Play", "play / pause (Space)", function () { toggle(); });
    var bNext = button("cav-next", "\u25b6", "next step (\u2192)", function () { go(state.step + 1); });
    var bLast = button("cav-last", "\u25b6|", "the end (End)", function () { go(last); });
    var speed = el("select", "cav-speed");
    speed.title = "playback speed";
    SPEEDS.forEach(function (v) {
      var o = el("option", "", v + "\u00d7");
      o.value = String(v);
      speed.appendChild(o);
    });
    speed.value = "1";
    speed.addEventListener("change", function () { state.speed = parseFloat(speed.value) || 1; });
    var seatSel = el("select", "cav-seat-select");
    seatSel.title = "whose view: the whole table, or what one seat could see";
    var oAll = el("option", "", "Whole table");
    oAll.value = "all";
    seatSel.appendChild(oAll);
    names.forEach(function (n, i) {
      var o = el("option", "", "Seat " + n + (meta.bots[i] ? " (" + meta.bots[i] + ")" : ""));
      o.value = String(i);
      seatSel.appendChild(o);
    });
    seatSel.addEventListener("change", function () { setSeat(seatSel.value); });
    var stepLabel = el("span", "cav-step-label");
    var link = el("a", "cav-link", "link to this step");
    var controls = append(el("div", "cav-controls"), [bFirst, bPrev, bPlay, bNext, bLast,
      append(el("label", "cav-speed-label"), [document.createTextNode("speed "), speed]),
      append(el("label", "cav-view-label"), [document.createTextNode("view "), seatSel]),
      stepLabel, link]);

    var range = el("input");
    range.type = "range";
    range.min = "0";
    range.max = String(last);
    range.value = "0";
    range.setAttribute("aria-label", "step");
    range.addEventListener("input", function () { go(parseInt(range.value, 10)); });
    var ticks = el("div", "cav-ticks");
    meta.marks.forEach(function (m) {
      var sdk = m.kind === "sdk_fallback";
      var t = el("span", "cav-fault-mark " +
        (m.fallback ? "cav-mark-fallback" : sdk ? "cav-mark-sdk-fallback" : "cav-mark-fault"));
      t.style.left = (last ? (100 * m.step / last) : 0) + "%";
      t.title = "step " + m.step + ": " + seatName(m.seat) + " " +
        (m.fallback ? "played by the referee (fallback)"
          : sdk ? "its SDK fell back after an exception" : "fault: " + m.kind);
      t.dataset.step = String(m.step);
      t.addEventListener("click", function () { go(m.step); });
      ticks.appendChild(t);
    });
    var costly = [];
    if (analysis) analysis.decisions.forEach(function (d) {
      if (!COSTLY[d["class"]]) return;
      var t = el("span", "cav-analysis-mark cav-class-" + d["class"]);
      t.style.left = (last ? (100 * d.step / last) : 0) + "%";
      t.title = "step " + d.step + ": " + seatName(d.seat) + " " + d["class"] + ", played " + d.chosen +
        ", best " + d.best + ": −" + fmtValue(d.loss) + " " + analysis.unit;
      t.dataset.step = String(d.step);
      t.dataset.seat = String(d.seat);
      t.addEventListener("click", function () { go(d.step); });
      costly.push({ mark: t, d: d });
      ticks.appendChild(t);
    });
    var timeline = append(el("div", "cav-timeline"), [range, ticks]);
    var help = el("div", "cav-help", HELP);

    var board = el("div", "cav-board");
    var side = el("div", "cav-side");
    var decision = el("div", "cav-decision cav-panel");
    var score = el("div", "cav-score cav-panel");
    var history = el("div", "cav-history cav-panel");
    var events = el("div", "cav-events cav-panel");
    var result = el("div", "cav-result cav-panel");
    append(side, [decision, score, history, events]);
    var body = append(el("div", "cav-body"), [board, side]);
    append(root, [append(el("div", "cav-head"), [title, subtitle]), controls, timeline, help,
      result, body]);

    // --- drawing ---------------------------------------------------------------------------

    function panelTitle(text) { return el("h3", "cav-panel-title", text); }

    function drawDecision(st) {
      decision.replaceChildren(panelTitle(st.end ? "End of the match" : "Decision " + st.n));
      if (st.end) {
        decision.appendChild(el("div", "", "After " + meta.decisions + " decisions."));
        return;
      }
      var who = seatName(st.seat);
      var line = el("div", "cav-choice");
      if (onlooker) {
        line.textContent = who + " to move";
      } else if (state.seat === "all" || state.seat === st.seat) {
        line.appendChild(document.createTextNode(who + " chose "));
        line.appendChild(append(el("strong"), [actionView(st.action)]));
        if (st.fallback) line.appendChild(el("span", "cav-fallback", " played by the referee (fault fallback)"));
      } else {
        line.textContent = who + " to move (its choice shows in the next step's events).";
      }
      decision.appendChild(line);
      // The bot's own words: text nodes only (a note is the bot's, never markup).
      if (st.sdk_fallback && (state.seat === "all" || state.seat === st.seat)) {
        decision.appendChild(el("div", "cav-sdk-fallback", "its SDK fell back after " + st.sdk_fallback));
      }
      if (st.note && (state.seat === "all" || state.seat === st.seat)) {
        decision.appendChild(el("div", "cav-bot-note", "note: " + st.note));
      }
      var d = st.decision;
      if (d) {
        var t = "time used " + fmtMs(d.ms);
        if (d.bank_left_ms !== null) {
          t += " \u00b7 from the bank " + fmtMs(d.from_bank_ms) + " \u00b7 bank left " + fmtMs(d.bank_left_ms);
        } else {
          t += " \u00b7 no time control";
        }
        if (d.timeout) t += " \u00b7 timed out";
        decision.appendChild(el("div", "cav-time", t));
      }
      if (!onlooker && (state.seat === "all" || state.seat === st.seat)) {
        var legal = el("div", "cav-legal", st.legal.length + " legal:");
        st.legal.slice(0, 30).forEach(function (a) {
          legal.appendChild(document.createTextNode("  "));
          legal.appendChild(actionView(a));
        });
        if (st.legal.length > 30) legal.appendChild(document.createTextNode(" \u2026"));
        decision.appendChild(legal);
      }
      if (showsAnalysis(analysed[st.n])) decision.appendChild(analysisBars(analysed[st.n], analysis));
      if (options.playFromHere !== false) drawPlayFromHere(st);
    }

    // "Play from here" (docs/play.md): a static page starts nothing, so it shows the command
    // that takes the seat shown (the seat to move in the whole table's view) over at this step.
    function drawPlayFromHere(st) {
      var file = meta.record_file || (meta.match_id || "match") + ".jsonl.gz";
      var word = /^[\w.\/-]+$/.test(file) ? file : "'" + file.replace(/'/g, "'\\''") + "'";
      var seat = state.seat === "all" ? st.seat : state.seat;
      var code = el("code", "cav-play-command",
        "arena replay play " + word + " --at " + st.n + " --seat " + seat + " --human");
      code.hidden = !state.showPlay;
      var show = el("button", "cav-play-here", "Play from here");
      show.type = "button";
      show.title = "the command that plays on from this decision, with you in this seat";
      show.addEventListener("click", function () {
        state.showPlay = code.hidden;
        code.hidden = !state.showPlay;
      });
      decision.appendChild(append(el("div", "cav-play-from"), [show, code]));
    }

    function drawScores(st) {
      score.replaceChildren(panelTitle("Score"));
      if (isTennis) score.appendChild(tennisBoard(st));
      var dl = el("dl", "cav-score-rows");
      // Tennis: the scoreboard above already shows the rows.
      (isTennis ? [] : st.scores.rows).forEach(function (row) {
        dl.appendChild(el("dt", "", row.label));
        var dd = el("dd");
        row.cells.forEach(function (c) {
          append(dd, [append(el("span", "cav-cell"), [el("span", "cav-who", c.who), el("b", "", c.value)])]);
        });
        dl.appendChild(dd);
      });
      st.scores.facts.forEach(function (f) {
        dl.appendChild(el("dt", "", f.label));
        dl.appendChild(append(el("dd"), [richText(f.value)]));
      });
      score.appendChild(dl);
    }

    function drawEvents(st) {
      events.replaceChildren(panelTitle("Since the last step"));
      var ol = el("ol");
      st.events.forEach(function (ev) {
        if (!sees(ev.to)) return;
        var li = append(el("li"), [richText(ev.text)]);
        li.value = ev.i + 1;
        if (ev.to !== null) {
          li.appendChild(el("span", "cav-private", state.seat === "all"
            ? "  [to " + ev.to.map(seatName).join("+") + "]" : "  (private)"));
        }
        ol.appendChild(li);
      });
      st.faults.forEach(function (f) {
        if (state.seat !== "all" && f.seat !== state.seat) return;
        ol.appendChild(el("li", "cav-fault", "fault: " + seatName(f.seat) + " " + f.kind + ": " + f.detail));
      });
      if (!ol.children.length) ol.appendChild(el("li", "cav-dim", "nothing"));
      events.appendChild(ol);
    }

    function drawResult(st) {
      result.hidden = !st.end;
      result.replaceChildren();
      if (!st.end) return;
      var r = meta.result;
      append(result, [panelTitle("Result"), el("div", "cav-summary", r.summary)]);
      var table = el("table", "cav-result-table");
      var head = append(el("tr"), [el("th", "", "seat"), el("th", "", "bot"), el("th", "", "score"),
        el("th", "", "rank")]);
      table.appendChild(head);
      r.seats.slice().sort(function (a, b) { return (a.rank || 99) - (b.rank || 99); }).forEach(function (s) {
        var tr = append(el("tr", s.rank === 1 ? "cav-winner" : ""), [el("td", "", s.name),
          el("td", "", s.bot), el("td", "", s.score === null ? "\u2014" : s.score),
          el("td", "", s.rank === null ? "\u2014" : s.rank)]);
        table.appendChild(tr);
      });
      result.appendChild(table);
      if (r.forfeited_by) result.appendChild(el("div", "cav-fault", "forfeit by " + r.forfeited_by));
    }

    // Card games: the table seen from above.

    function trickWins(tricks) {
      var won = names.map(function () { return 0; });
      tricks.forEach(function (t) { if (t.winner >= 0 && t.winner < won.length) won[t.winner] += 1; });
      return won;
    }
    function seatHand(st, s) {
      // In a seat view only that seat's own observation gives card faces.
      var view = !onlooker && (state.seat === "all" || state.seat === s);
      var box = el("div", "cav-hand");
      box.setAttribute("data-seat-hand", String(s));
      if (view) {
        var priv = st.private[s] || {};
        (priv.hand || []).forEach(function (c) { box.appendChild(cardFace(c)); });
        var extra = el("div", "cav-hand-extra");
        if (priv.pending_ace) append(extra, [document.createTextNode("joins after trick 1: "), cardFace(priv.pending_ace, true)]);
        if (priv.rob_discard) append(extra, [document.createTextNode("discarded face down to rob: "), cardFace(priv.rob_discard, true)]);
        if (priv.ace_demoted) extra.appendChild(el("span", "", "stayed silent: this ace of trumps ranks lowest"));
        if (extra.children.length || extra.textContent) box.appendChild(extra);
        if (!(priv.hand || []).length) box.appendChild(el("span", "cav-dim", "no cards"));
      } else {
        var n = st.hand_sizes ? st.hand_sizes[s] : 0;
        for (var i = 0; i < n; i++) box.appendChild(cardBack());
        box.appendChild(el("span", "cav-count", n + (n === 1 ? " card" : " cards")));
      }
      return box;
    }
    function seatBox(st, s, won) {
      var pub = st.public;
      var box = el("div", "cav-seat");
      box.dataset.seat = String(s);
      if (st.seat === s) box.classList.add("cav-turn");
      if (state.seat === s) box.classList.add("cav-me");
      var out = Array.isArray(pub.eliminated) && pub.eliminated[s];
      if (out) box.classList.add("cav-out");
      var tag = el("div", "cav-seat-tag");
      append(tag, [el("span", "cav-seat-name", names[s]), el("span", "cav-bot", meta.bots[s] || ""),
        pub.dealer === s ? el("span", "cav-badge cav-dealer", "dealer") : null,
        st.seat === s ? el("span", "cav-badge cav-to-move", "to move") : null,
        out ? el("span", "cav-badge cav-out-badge", "out") : null,
        el("span", "cav-tricks", won[s] + (won[s] === 1 ? " trick" : " tricks"))]);
      return append(box, [tag, seatHand(st, s)]);
    }
    function trickView(t, cls) {
      var box = el("div", cls);
      t.cards.forEach(function (c, i) {
        var s = t.seats[i];
        var slot = el("div", "cav-played" + (t.winner === s ? " cav-won" : ""));
        append(slot, [cardFace(c, cls !== "cav-trick"), el("div", "cav-played-by",
          seatName(s) + (i === 0 ? " led" : ""))]);
        box.appendChild(slot);
      });
      return box;
    }
    function drawTable(st) {
      var pub = st.public, n = names.length;
      var bottom = state.seat !== "all" ? state.seat : (names.indexOf("S") >= 0 && n === 4 ? names.indexOf("S") : 0);
      var tricks = Array.isArray(pub.tricks) ? pub.tricks : [];
      var won = trickWins(tricks);
      var table = el("div", "cav-table");
      var spots = { bottom: el("div", "cav-spot cav-bottom"), left: el("div", "cav-spot cav-left"),
        top: el("div", "cav-spot cav-top"), right: el("div", "cav-spot cav-right") };
      for (var k = 0; k < n; k++) {
        var s = (bottom + k) % n;
        // Clockwise from the viewer at the bottom: left, across, right (more seats share the top).
        var where = k === 0 ? "bottom" : n === 2 ? "top" : k === 1 ? "left" : k === n - 1 ? "right" : "top";
        spots[where].appendChild(seatBox(st, s, won));
      }
      var centre = el("div", "cav-centre");
      var trumps = el("div", "cav-trumps");
      if (pub.trump) {
        append(trumps, [el("span", "cav-dim", "trumps "),
          el("span", "cav-trump-suit " + (isRed(pub.trump) ? "cav-red" : "cav-black"), SUIT[pub.trump] + " " + SUIT_NAME[pub.trump])]);
      } else if (pub.phase === "trump") {
        trumps.appendChild(el("span", "cav-dim", seatName(pub.dealer) + " is choosing trumps"));
      }
      if (pub.turn_up) append(trumps, [el("span", "cav-dim", " turn-up "), cardFace(pub.turn_up, true)]);
      centre.appendChild(trumps);
      var current = tricks.length ? tricks[tricks.length - 1] : null;
      var label = el("div", "cav-trick-label");
      if (!current) label.textContent = "no card played yet";
      else if (current.winner === -1) label.textContent = "trick " + tricks.length + ", " + seatName(current.leader) + " led";
      else label.textContent = "trick " + tricks.length + " won by " + seatName(current.winner);
      centre.appendChild(label);
      centre.appendChild(current ? trickView(current, "cav-trick") : el("div", "cav-trick"));
      (st.notes || []).forEach(function (t) { centre.appendChild(el("div", "cav-note", t)); });
      append(table, [spots.top, spots.left, centre, spots.right, spots.bottom]);
      board.replaceChildren(table);

      history.replaceChildren(panelTitle("Tricks this deal"));
      var ol = el("ol", "cav-history-list");
      tricks.forEach(function (t, i) {
        var li = el("li", t.winner === -1 ? "cav-live" : "");
        append(li, [el("span", "cav-history-head", seatName(t.leader) + " led"), trickView(t, "cav-history-trick"),
          el("span", "cav-history-won", t.winner === -1 ? "being played" : "\u2192 " + seatName(t.winner))]);
        li.value = i + 1;
        ol.appendChild(li);
      });
      if (!tricks.length) ol.appendChild(el("li", "cav-dim", "no trick yet"));
      history.appendChild(ol);
    }

    // Tennis: the court from above, the hands and the decks.

    function tennisSeatOf(p, players) {
      // One seat per player (singles, doubles control=players), else one per team (side).
      return names.length === players.length ? p : players[p].side;
    }
    function tennisBoard(st) {
      var t = st.tennis, sc = t.score, pub = st.public;
      var serverSide = t.players[pub.server] ? t.players[pub.server].side : -1;
      var table = el("table", "cav-scoreboard");
      var head = append(el("tr"), [el("th", "", "")]);
      sc.set_scores.forEach(function (_, i) { head.appendChild(el("th", "", "set " + (i + 1))); });
      append(head, [el("th", "", "sets"), el("th", "", "games"), el("th", "", "points")]);
      table.appendChild(head);
      [0, 1].forEach(function (s) {
        var tr = append(el("tr"), [el("th", "", (serverSide === s ? "\u25cf " : "") + t.sides[s])]);
        sc.set_scores.forEach(function (txt) {
          tr.appendChild(el("td", "", String(txt).replace("*", "").split("-")[s]));
        });
        append(tr, [el("td", "", sc.sets[s]), el("td", "", sc.games[s]), el("td", "cav-points", sc.points[s])]);
        table.appendChild(tr);
      });
      return table;
    }
    function court(st) {
      var pub = st.public, t = st.tennis, players = t.players;
      var W = 220, H = 340, X = 30, Y = 30, CW = 160, CH = 280, NET = Y + CH / 2;
      var s = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "the court" });
      s.setAttribute("class", "cav-court");
      s.appendChild(svg("rect", { x: 0, y: 0, width: W, height: H, class: "cav-court-bg" }));
      s.appendChild(svg("rect", { x: X, y: Y, width: CW, height: CH, class: "cav-court-in" }));
      function cell(side, area) {
        var far = side === 1, left = area.charAt(0) === "L", fore = area.charAt(1) === "F";
        var col = (left !== far) ? 0 : 1;
        var row = far ? (fore ? 1 : 0) : (fore ? 2 : 3);
        return { x: X + col * CW / 2, y: Y + row * CH / 4, w: CW / 2, h: CH / 4 };
      }
      [0, 1].forEach(function (side) {
        ["RF", "LF", "RB", "LB"].forEach(function (a) {
          var c = cell(side, a);
          var hit = pub.ball_side === side && pub.ball_area === a;
          s.appendChild(svg("rect", { x: c.x, y: c.y, width: c.w, height: c.h,
            class: "cav-area" + (hit ? " cav-area-ball" : "") }));
          s.appendChild(svg("text", { x: c.x + 6, y: c.y + 14, class: "cav-area-name" }, a));
        });
      });
      s.appendChild(svg("line", { x1: X - 8, y1: NET, x2: X + CW + 8, y2: NET, class: "cav-net" }));
      s.appendChild(svg("text", { x: X + CW + 10, y: NET + 4, class: "cav-area-name" }, "net"));
      // Who plays where: side 1 at the top, side 0 at the bottom.
      [0, 1].forEach(function (side) {
        var who = players.filter(function (p) { return p.side === side; }).map(function (p) {
          return p.name + (p.role ? " (" + p.role + ")" : "");
        }).join(" + ");
        s.appendChild(svg("text", { x: W / 2, y: side === 1 ? 18 : H - 8, "text-anchor": "middle",
          class: "cav-court-side" + (pub.ball_side === side ? " cav-court-answers" : "") }, who));
      });
      // The server, at its baseline on the side it serves from (its own right or left).
      var server = players[pub.server];
      if (server && pub.phase !== "over") {
        var far = server.side === 1, right = pub.serve_from === "right";
        var x = (right !== far) ? X + CW * 0.75 : X + CW * 0.25;
        var y = far ? Y - 4 : Y + CH + 4;
        var g = svg("g", { class: "cav-server" });
        append(g, [svg("circle", { cx: x, cy: y, r: 7 }),
          svg("text", { x: x, y: y + 3.5, "text-anchor": "middle", "font-size": 9 }, "S")]);
        var tip = svg("title", {}, server.name + " serves from the " + pub.serve_from);
        g.appendChild(tip);
        s.appendChild(g);
      }
      if (pub.ball_area && pub.ball_side >= 0) {
        var c = cell(pub.ball_side, pub.ball_area);
        s.appendChild(svg("circle", { cx: c.x + c.w / 2, cy: c.y + c.h / 2, r: 9, class: "cav-ball" }));
      }
      if (pub.smash_pending && pub.ball_side >= 0) {
        s.appendChild(svg("text", { x: W / 2, y: pub.ball_side === 1 ? Y + CH / 4 : Y + 3 * CH / 4,
          "text-anchor": "middle", class: "cav-smash" }, "SMASH!"));
      }
      return s;
    }
    function tennisHand(st, p) {
      var t = st.tennis, player = t.players[p];
      var seat = tennisSeatOf(p, t.players);
      var view = null;
      if (onlooker) view = null;
      else if (state.seat === "all") {
        // Any seat allowed to see this hand holds it in its observation.
        for (var s = 0; s < st.private.length; s++) {
          var pl = (st.private[s].players || [])[p];
          if (pl && pl.visible) { view = pl; break; }
        }
      } else {
        var mine = (st.private[state.seat].players || [])[p];
        if (mine && mine.visible) view = mine;
      }
      var box = el("div", "cav-seat cav-tennis-player");
      var acting = st.public.acting;
      if (acting && (acting === player.name || (acting.length === 1 && player.name.charAt(0) === acting))) {
        box.classList.add("cav-turn");
      }
      var tag = el("div", "cav-seat-tag");
      append(tag, [el("span", "cav-seat-name", player.name + (player.role ? " (" + (player.role === "R" ? "right" : "left") + ")" : "")),
        el("span", "cav-bot", meta.bots[seat] || ""),
        st.public.server === p ? el("span", "cav-badge cav-dealer", "serving") : null,
        box.classList.contains("cav-turn") ? el("span", "cav-badge cav-to-move", "to move") : null,
        el("span", "cav-tricks", player.hand_size + " cards")]);
      var hand = el("div", "cav-hand");
      hand.setAttribute("data-seat-hand", String(seat));
      hand.setAttribute("data-player", String(p));
      if (view) view.hand.forEach(function (c) { hand.appendChild(tennisCard(c)); });
      else for (var i = 0; i < player.hand_size; i++) hand.appendChild(cardBack(false, true));
      if (!player.hand_size) hand.appendChild(el("span", "cav-dim", "no cards"));
      return append(box, [tag, hand]);
    }
    function drawTennis(st) {
      var pub = st.public, t = st.tennis;
      var wrap = el("div", "cav-tennis");
      var left = append(el("div", "cav-court-box"), [court(st)]);
      var notes = el("div", "cav-notes");
      function note(text) { notes.appendChild(el("div", "cav-note", text)); }
      if (pub.phase === "exchange") {
        note("Card exchange: " + pub.acting + " gives " + (pub.exchange_stage ? "back " : "") +
          "(" + pub.exchange_given + " given so far)");
      }
      if (pub.smash_pending) note("Smash pending: only a Kill answers it (or concede)");
      else if (pub.serve_ball) note("The ball is the In serve");
      else if (!pub.ball_area && pub.phase === "rally") note("No ball in play");
      if (pub.left_by) note(pub.left_by + " left the ball to the partner");
      left.appendChild(notes);
      var right = el("div", "cav-tennis-hands");
      [1, 0].forEach(function (side) {
        var row = el("div", "cav-tennis-side");
        row.appendChild(el("div", "cav-side-name", t.sides[side] + (side === 1 ? " (top of the court)" : " (bottom)")));
        t.players.forEach(function (p, i) { if (p.side === side) row.appendChild(tennisHand(st, i)); });
        right.appendChild(row);
      });
      var decks = el("div", "cav-decks");
      var pile = pub.serve_pile || [0, 0, 0];
      append(decks, [
        el("div", "", "Serve deck: " + pub.serve_deck_size + " cards left; turned: " + pile[0] +
          " ace" + (pile[0] === 1 ? "" : "s") + ", " + pile[1] + " fault" + (pile[1] === 1 ? "" : "s") +
          ", " + pile[2] + " in"),
        el("div", "", "Play deck: " + pub.stock_size + " in the stock, " + pub.discard_size + " discarded"),
      ]);
      if (t.discards_seen.length) {
        var seen = el("div", "cav-discards");
        seen.appendChild(el("span", "cav-dim", "face-up discards: "));
        t.discards_seen.forEach(function (d) {
          append(seen, [append(el("span", "cav-discard"), [tennisCard(d.card, true), el("span", "", "\u00d7" + d.count)])]);
        });
        decks.appendChild(seen);
      }
      right.appendChild(decks);
      append(wrap, [left, right]);
      board.replaceChildren(wrap);
      history.hidden = true;
    }

    function drawGeneric(st) {
      var box = el("div", "cav-generic");
      for (var s = 0; s < names.length; s++) {
        if (state.seat !== "all" && state.seat !== s) continue;
        var hand = el("div", "cav-hand");
        hand.setAttribute("data-seat-hand", String(s));
        var priv = st.private[s] || {};
        append(hand, [el("span", "cav-seat-name", names[s] + " "), richText(JSON.stringify(priv))]);
        box.appendChild(hand);
      }
      board.replaceChildren(box);
      history.hidden = true;
    }

    // --- state -------------------------------------------------------------------------------

    function render() {
      var st = steps[state.step];
      stepLabel.textContent = "step " + state.step + " / " + last + (st.end ? " (end)" : "");
      range.value = String(state.step);
      seatSel.value = String(state.seat);
      bFirst.disabled = bPrev.disabled = state.step === 0;
      bNext.disabled = bLast.disabled = state.step === last;
      history.hidden = false;
      if (isTennis) drawTennis(st);
      else if (kind === "trick_table" && Array.isArray(st.public.tricks)) drawTable(st);
      else drawGeneric(st);
      drawDecision(st);
      costly.forEach(function (c) { c.mark.hidden = !showsAnalysis(c.d); });
      drawScores(st);
      drawEvents(st);
      drawResult(st);
      var hash = "#step=" + state.step + "&seat=" + state.seat;
      link.setAttribute("href", hash);
      root.dataset.step = String(state.step);
      root.dataset.seat = String(state.seat);
      if (options.hash && location.hash !== hash) {
        try { history_replace(hash); } catch (e) { /* some file: URLs refuse it */ }
      }
      var key = state.step + "|" + state.seat;
      if (state.sent !== key) {
        state.sent = key;
        root.dispatchEvent(new CustomEvent("cardarena:step", { detail: { step: state.step, seat: state.seat } }));
      }
    }
    function history_replace(hash) { window.history.replaceState(null, "", hash); }

    function go(k) {
      if (typeof k !== "number" || isNaN(k)) return;
      state.step = Math.max(0, Math.min(last, Math.round(k)));
      if (state.step === last) pause();
      render();
    }
    function parseSeat(v) {
      var n = parseInt(v, 10);
      return (v === "all" || isNaN(n) || n < 0 || n >= names.length) ? "all" : n;
    }
    function setSeat(v) {
      state.seat = parseSeat(String(v));
      render();
    }
    function tick() {
      state.timer = null;
      if (!state.playing) return;
      if (state.step >= last) { pause(); return; }
      go(state.step + 1);
      if (state.playing) state.timer = setTimeout(tick, BASE_MS / state.speed);
    }
    function play() {
      if (state.playing) return;
      if (state.step >= last) state.step = 0;
      state.playing = true;
      bPlay.textContent = "\u2016 Pause";
      root.classList.add("cav-playing");
      state.timer = setTimeout(tick, BASE_MS / state.speed);
      render();
    }
    function pause() {
      state.playing = false;
      if (state.timer !== null) clearTimeout(state.timer);
      state.timer = null;
      bPlay.textContent = "\u25b6 Play";
      root.classList.remove("cav-playing");
    }
    function toggle() { if (state.playing) pause(); else play(); }

    function fromHash() {
      var params = {};
      location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
        var p = kv.split("=");
        if (p[0]) params[decodeURIComponent(p[0])] = decodeURIComponent(p[1] || "");
      });
      if (params.seat !== undefined) state.seat = parseSeat(params.seat);
      var k = parseInt(params.step, 10);
      if (!isNaN(k)) state.step = Math.max(0, Math.min(last, k));
      render();
    }
    function onKey(e) {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      var target = e.target, tag = target && target.tagName;
      if (target && target.isContentEditable) return;
      // Another form field of the host page keeps its keys; the viewer's own take ours.
      if ((tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") && !root.contains(target)) return;
      var handled = true;
      if (e.key === "ArrowRight") go(state.step + 1);
      else if (e.key === "ArrowLeft") go(state.step - 1);
      else if (e.key === "Home") go(0);
      else if (e.key === "End") go(last);
      else if (e.key === " " || e.key === "Spacebar") toggle();
      else if (e.key === "a" || e.key === "A") setSeat("all");
      else if (/^[0-9]$/.test(e.key) && parseInt(e.key, 10) < names.length) setSeat(e.key);
      else handled = false;
      // The range input would move a second time, a focused button would click again.
      if (handled) e.preventDefault();
    }
    var keyTarget = options.keyboard === false ? null : document;
    if (keyTarget) keyTarget.addEventListener("keydown", onKey);
    if (options.hash) {
      window.addEventListener("hashchange", fromHash);
      fromHash();
    } else {
      render();
    }

    return {
      goto: function (k) { go(Number(k)); },
      setSeat: setSeat,
      play: play,
      pause: pause,
      get step() { return state.step; },
      get seat() { return state.seat; },
      destroy: function () {
        pause();
        if (keyTarget) keyTarget.removeEventListener("keydown", onKey);
        if (options.hash) window.removeEventListener("hashchange", fromHash);
        root.replaceChildren();
      },
    };
  }

  window.CardArenaViewer = { mount: mount };
})();

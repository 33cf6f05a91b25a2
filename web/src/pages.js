// The competition's pages (arena/web/pages.py serves their shell): each draws itself from the
// host's public JSON API, and an author's own data with the token they signed in with.
// Everything from strangers (bot and author names, logs) goes in as text, never as HTML.
import * as Plot from "@observablehq/plot";
import {
  API,
  TOKEN_KEY,
  h,
  token,
  ApiError,
  api,
  apiText,
  apiPage,
  botOf,
  botLink,
  matchLink,
  day,
  fmt,
  section,
  empty,
  showError,
  sortableTable,
  chart,
  me,
  forgetMe,
  markNav,
  STATUS_TEXT,
} from "./common.js";
import { PAGES as SEASON_PAGES, seasonNote } from "./seasons.js";
import { PAGES as EVENT_PAGES } from "./events.js";
import { liveMatch } from "./live.js";
import { PAGES as ADMIN_PAGES } from "./admin.js";
import { PAGES as BROWSE_PAGES } from "./browse.js";
import { challengeBox, humanLabel, humanMatches } from "./challenges.js";

async function leaderboardPage(main) {
  const params = new URLSearchParams(location.search);
  const phase = params.get("phase") === "final" ? "final" : "ladder";
  const latest = params.get("latest") === "1";
  const retired = params.get("all") === "1";
  const status = await api("/status");
  main.querySelector("h1").textContent = `${status.name}: ${phase === "final" ? "the final" : "the ladder"}`;
  main.append(
    h(
      "p",
      { class: "lead" },
      `${status.game}, ${status.players} players · ${status.matches_played} matches played · ladder ${status.state}`,
      status.final && status.final !== "not started" ? ` · final ${status.final}` : "",
    ),
  );
  main.append(...seasonNote(status));
  if (status.final === "finished") {
    const won = status.final_winners || [];
    main.append(
      h(
        "p",
        { class: "winner", id: "final-winner" },
        won.length ? `The final is over: ${won.join(" and ")} won it.` : "The final is over.",
      ),
    );
  }
  const controls = h(
    "form",
    { class: "controls", method: "get", action: "/leaderboard" },
    h(
      "label",
      {},
      "Phase ",
      h(
        "select",
        { name: "phase", id: "phase", onchange: (e) => e.target.form.submit() },
        h("option", { value: "ladder", selected: phase === "ladder" }, "ladder"),
        h("option", { value: "final", selected: phase === "final" }, "final"),
      ),
    ),
    h(
      "label",
      {},
      h("input", {
        type: "checkbox",
        name: "latest",
        value: "1",
        id: "latest",
        checked: latest,
        onchange: (e) => e.target.form.submit(),
      }),
      " each bot's latest version only",
    ),
    h(
      "label",
      {},
      h("input", {
        type: "checkbox",
        name: "all",
        value: "1",
        id: "all",
        checked: retired,
        onchange: (e) => e.target.form.submit(),
      }),
      " retired versions too",
    ),
  );
  main.append(controls);
  const [rows, history, cross] = await Promise.all([
    api(`/leaderboard?phase=${phase}${latest ? "&latest=true" : ""}${retired ? "&all=true" : ""}`),
    api(`/leaderboard/history?phase=${phase}`),
    api(`/leaderboard/cross-table?phase=${phase}`),
  ]);
  if (rows.length === 0) {
    main.append(empty(`No rated versions in the ${phase} yet.`));
    return;
  }
  const table = sortableTable(
    [
      { key: "rank", label: "Rank", numeric: true },
      { key: "bot", label: "Bot", cell: (r) => h("a", { href: `/bots/${encodeURIComponent(r.bot)}` }, r.bot) },
      { key: "ref", label: "Version", cell: (r) => r.ref.slice(r.ref.lastIndexOf("@") + 1), sort: (r) => r.ref },
      { key: "author", label: "Author" },
      { key: "elo", label: "Elo", numeric: true, cell: (r) => fmt(r.elo) },
      { key: "plus_minus", label: "± 95 %", numeric: true, cell: (r) => fmt(r.plus_minus) },
      { key: "matches", label: "Matches", numeric: true },
      { key: "score", label: "Score", numeric: true, cell: (r) => fmt(r.score, 3) },
      {
        key: "standing",
        label: "",
        sort: (r) => (r.provisional ? 1 : 0) + (r.retired ? 2 : 0),
        cell: (r) =>
          h(
            "span",
            { class: "standing" },
            [r.provisional ? "provisional" : "", r.retired ? "retired" : ""].filter(Boolean).join(", "),
          ),
      },
    ],
    rows,
    { id: "leaderboard", initial: ["rank", 1] },
  );
  // The rule behind the mark, in one sentence, under the table it orders.
  const rule = status.provisional_rule
    ? h("p", { class: "note", id: "provisional-rule" }, status.provisional_rule)
    : null;
  main.append(section("Standings", table, rule));
  if (phase === "ladder") await parSection(main);
  const order = rows.map((r) => r.ref);
  main.append(
    section(
      "Elo with its 95 % interval",
      chart({
        marginLeft: 110,
        height: 40 + 26 * rows.length,
        x: { label: "Elo", grid: true },
        y: { domain: order, label: null },
        marks: [
          Plot.ruleY(rows, { y: "ref", x1: (r) => r.elo - r.plus_minus, x2: (r) => r.elo + r.plus_minus, stroke: "#5b7083", strokeWidth: 2 }),
          Plot.tickX(rows, { y: "ref", x: (r) => r.elo - r.plus_minus, stroke: "#5b7083" }),
          Plot.tickX(rows, { y: "ref", x: (r) => r.elo + r.plus_minus, stroke: "#5b7083" }),
          Plot.dot(rows, { y: "ref", x: "elo", fill: "#c0392b", r: 4, title: (r) => `${r.ref}: ${fmt(r.elo)} ± ${fmt(r.plus_minus)}` }),
        ],
      }),
    ),
  );
  const points = history.flatMap((p) => p.ratings.map((r) => ({ ...r, matches: p.matches, at: new Date(p.at) })));
  // The last refit's count of rated matches: the x axis runs from 0 to it.
  const last = Math.max(1, ...points.map((d) => d.matches));
  main.append(
    section(
      "Ratings over time",
      points.length === 0
        ? empty("No history yet: it grows as units finish.")
        : chart({
            height: 280,
            marginLeft: 50, // room for "2,400" on the Elo axis
            marginRight: 110,
            // From 0 (one refit alone would make an empty domain), whole numbers as ticks.
            x: { label: "rated matches", grid: true, tickFormat: "d", domain: [0, last], ticks: Math.min(10, last) },
            y: { label: "Elo", grid: true },
            color: { legend: true, domain: order },
            marks: [
              // z named: a series of one point (one refit) is not "high cardinality" to Plot.
              Plot.areaY(points, { x: "matches", y1: (d) => d.elo - d.plus_minus, y2: (d) => d.elo + d.plus_minus, z: "ref", fill: "ref", fillOpacity: 0.08 }),
              Plot.lineY(points, { x: "matches", y: "elo", z: "ref", stroke: "ref", strokeWidth: 2 }),
              Plot.dot(points, { x: "matches", y: "elo", fill: "ref", r: 2.5, title: (d) => `${d.ref}: ${fmt(d.elo)} ± ${fmt(d.plus_minus)} after ${d.matches} matches` }),
            ],
            endLabels: { data: points, x: "matches", y: "elo", z: "ref", text: "ref" },
          }),
    ),
  );
  const versions = cross.versions;
  const los = cross.superiority;
  main.append(
    section(
      "Likelihood of superiority",
      h("p", { class: "note" }, "P(row is stronger than column), from the rating fit."),
      los.length === 0
        ? empty("Not enough rated versions.")
        : heatmap(los, versions, "p", "RdBu", "P", (d) => d.p.toFixed(2)),
    ),
  );
  const cells = cross.cells.map((c) => ({ ...c, score: (c.wins + c.draws / 2) / Math.max(1, c.matches) }));
  main.append(
    section(
      "Cross-table",
      h("p", { class: "note" }, "Row's wins–losses–draws against column; colour: its score."),
      cells.length === 0
        ? empty("No two versions have met yet.")
        : heatmap(cells, versions, "score", "RdYlGn", "score", (d) => `${d.wins}–${d.losses}–${d.draws}`),
    ),
  );
}

// A versions × versions heatmap of ``data`` (rows of {row, column, [fill]}), each cell labelled.
// Par (docs/ratings.md): each version's score per match minus the reference's in the same seat
// on the same deal; only where the competition measures it ([ladder] par).
async function parSection(main) {
  const board = await api("/leaderboard/par");
  if (!board.reference) return;
  const note = h(
    "p",
    { class: "note", id: "par-note" },
    `Mean score per ladder match minus what ${board.reference} scored in the same seat on the same deal (luck-adjusted); ± is the 95 % interval.`,
  );
  main.append(
    section(
      `Par against ${board.reference}`,
      board.rows.length === 0
        ? empty("No par yet: it is computed as units finish.")
        : sortableTable(
            [
              { key: "ref", label: "Version", cell: (r) => botLink(r.ref) },
              { key: "par", label: "Par", numeric: true, cell: (r) => fmt(r.par, 3) },
              { key: "plus_minus", label: "± 95 %", numeric: true, sort: (r) => r.plus_minus ?? Infinity, cell: (r) => (r.plus_minus === null ? "–" : fmt(r.plus_minus, 3)) },
              { key: "matches", label: "Matches", numeric: true },
              { key: "deals", label: "Deals", numeric: true },
            ],
            board.rows,
            { id: "par", initial: ["par", -1] },
          ),
      note,
    ),
  );
}

function heatmap(data, versions, fill, scheme, label, text) {
  return chart({
    marginLeft: 110,
    marginBottom: 80,
    width: Math.max(320, 110 + 64 * versions.length),
    height: 90 + 40 * versions.length,
    x: { domain: versions, label: null, tickRotate: -30 },
    y: { domain: versions, label: null },
    color: { type: "linear", domain: [0, 1], scheme, legend: true, label },
    marks: [
      Plot.cell(data, { x: "column", y: "row", fill, inset: 1 }),
      // Dark ink on the light middle of the scale, white on its dark ends.
      Plot.text(data, { x: "column", y: "row", text, fill: (d) => (Math.abs(d[fill] - 0.5) > 0.3 ? "white" : "black") }),
    ],
  });
}

// --- a bot ------------------------------------------------------------------------------------


async function botPage(main, args) {
  const name = args.name;
  const [bots, who, status] = await Promise.all([api("/bots"), me(), api("/status")]);
  const bot = bots.find((b) => b.name === name);
  if (!bot) {
    main.append(h("p", { class: "error", role: "alert" }, `No bot called ${name}.`));
    return;
  }
  const mine = who && who.author.name === bot.author;
  main.append(h("p", { class: "lead" }, `by ${bot.author}${mine ? " (you)" : ""} · ${bot.versions.length} version${bot.versions.length === 1 ? "" : "s"}`));
  const challenge = await challengeBox(bot, status);
  if (challenge) main.append(challenge);
  // An author sees why their versions failed: the version call answers them with the reason.
  const versions = mine
    ? await Promise.all(bot.versions.map((v) => api(`/versions/${v.id}`, { auth: true })))
    : bot.versions;
  main.append(
    section(
      "Versions",
      sortableTable(
        [
          { key: "number", label: "Version", numeric: true },
          { key: "kind", label: "Kind" },
          { key: "runtime", label: "Runtime" },
          {
            key: "status",
            label: "Status",
            cell: (v) =>
              h(
                "span",
                { class: `status status-${v.status}` },
                STATUS_TEXT[v.status] || v.status,
                v.reason ? h("span", { class: "reason" }, `: ${v.reason}`) : null,
              ),
          },
          { key: "sha256", label: "SHA-256", cell: (v) => h("code", { title: v.sha256 || "" }, (v.sha256 || "live").slice(0, 12)) },
          { key: "created", label: "Submitted", cell: (v) => day(v.created) },
        ],
        versions,
        { id: "versions", initial: ["number", -1] },
      ),
    ),
  );
  const rated = versions.filter((v) => v.status === "validated" || v.status === "retired");
  for (const v of rated.slice().reverse()) {
    const [h2h, matches] = await Promise.all([
      api(`/versions/${v.id}/head-to-head`),
      api(`/matches?version=${v.id}&limit=20`),
    ]);
    const faults = matches.flatMap((m) =>
      m.faults.filter((f) => m.seats[f.seat] === v.ref).map((f) => ({ ...f, match_id: m.match_id })),
    );
    main.append(
      section(
        `${v.ref}`,
        h("h3", {}, "Head to head"),
        h2h.length === 0
          ? empty("No opponents yet.")
          : sortableTable(
              [
                { key: "opponent", label: "Opponent", cell: (r) => botLink(r.opponent) },
                { key: "matches", label: "Matches", numeric: true },
                { key: "wins", label: "Won", numeric: true },
                { key: "losses", label: "Lost", numeric: true },
                { key: "draws", label: "Drawn", numeric: true },
                { key: "score", label: "Score", numeric: true, sort: (r) => (r.wins + r.draws / 2) / r.matches, cell: (r) => fmt((r.wins + r.draws / 2) / r.matches, 2) },
              ],
              h2h,
              { initial: ["matches", -1] },
            ),
        h("h3", {}, "Recent matches"),
        matches.length === 0 ? empty("No matches yet.") : matchTable(matches),
        h("h3", {}, `Faults in these matches: ${faults.length}`),
        faults.length === 0
          ? null
          : h("ul", { class: "faults" }, faults.map((f) => h("li", {}, matchLink(f.match_id), ` seat ${f.seat}: ${f.kind}${f.detail ? ` (${f.detail})` : ""}`))),
      ),
    );
  }
}

function outcome(m, bot) {
  if (!m.ranks || !bot) return "";
  const best = Math.min(...m.seats.map((s, i) => (botOf(s) === bot ? m.ranks[i] : Infinity)));
  const others = Math.min(...m.seats.map((s, i) => (botOf(s) !== bot ? m.ranks[i] : Infinity)));
  return best < others ? "won" : best > others ? "lost" : "drew";
}

// ``ordered``: the rows stay in the host's order (newest unit first) until a header is clicked.
function matchTable(matches, bot, ordered = false) {
  return sortableTable(
    [
      { key: "match_id", label: "Match", cell: (m) => matchLink(m.match_id) },
      { key: "phase", label: "Phase" },
      { key: "seats", label: "Seats", sort: (m) => m.seats.join(" "), cell: (m) => h("span", { class: "seats" }, m.seats.map((s, i) => [i ? " · " : "", botLink(s)])) },
      { key: "summary", label: "Result", cell: (m) => m.summary || "" },
      ...(bot ? [{ key: "outcome", label: bot, sort: (m) => outcome(m, bot), cell: (m) => outcome(m, bot) }] : []),
      { key: "faults", label: "Faults", numeric: true, sort: (m) => m.faults.length, cell: (m) => (m.faults.length ? h("span", { class: "fault" }, m.faults.length) : "0") },
      { key: "finished", label: "Finished", cell: (m) => day(m.finished) },
    ],
    matches,
    { id: "matches", initial: ordered ? undefined : ["finished", -1] },
  );
}

// --- matches ---------------------------------------------------------------------------------

// Matches per page of /matches.
const PAGE_SIZE = 50;

// The API's filters (bot, version, phase, season, event, faults) select on the host, a page at
// a time; the result (won/lost/drew for the chosen bot) narrows the page shown. Every control is
// in the URL.
async function matchesPage(main) {
  const params = new URLSearchParams(location.search);
  const bot = params.get("bot") || "";
  const version = params.get("version") || "";
  const phase = params.get("phase") || "";
  const result = params.get("result") || "";
  const faultsOnly = params.get("faults") === "1";
  const pageNo = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
  const perPage = Math.min(1000, Math.max(1, parseInt(params.get("limit") || "", 10) || PAGE_SIZE));
  const query = new URLSearchParams({ limit: perPage, offset: (pageNo - 1) * perPage });
  if (bot) query.set("bot", bot);
  if (version) query.set("version", version);
  if (phase) query.set("phase", phase);
  if (faultsOnly) query.set("faults", "true");
  const season = params.get("season") || "";
  const event = params.get("event") || "";
  if (season) query.set("season", season);
  if (event) query.set("event", event);
  const [status, bots, seasons, events, found] = await Promise.all([
    api("/status"),
    api("/bots"),
    api("/seasons"),
    api("/events"),
    apiPage(`/matches?${query}`),
  ]);
  const versions = bots.filter((b) => !bot || b.name === bot).flatMap((b) => b.versions);
  // A new choice starts again at the first page.
  const submit = (e) => {
    e.target.form.querySelector("[name=page]").disabled = true;
    if (e.target.name === "bot") e.target.form.querySelector("[name=version]").disabled = true;
    e.target.form.submit();
  };
  main.append(
    h(
      "form",
      { class: "controls", method: "get", action: "/matches", id: "filters" },
      h("input", { type: "hidden", name: "page", value: pageNo }),
      params.has("limit") ? h("input", { type: "hidden", name: "limit", value: perPage }) : null,
      h("label", {}, "Game ", h("select", { name: "game", disabled: true }, h("option", {}, status.game))),
      h(
        "label",
        {},
        "Bot ",
        h("select", { name: "bot", id: "filter-bot", onchange: submit }, h("option", { value: "" }, "any"), bots.map((b) => h("option", { value: b.name, selected: b.name === bot }, b.name))),
      ),
      h(
        "label",
        {},
        "Version ",
        h("select", { name: "version", id: "filter-version", onchange: submit }, h("option", { value: "" }, "any"), versions.map((v) => h("option", { value: v.id, selected: String(v.id) === version }, v.ref))),
      ),
      h(
        "label",
        {},
        "Phase ",
        h("select", { name: "phase", id: "filter-phase", onchange: submit }, ["", "ladder", "final", "event"].map((p) => h("option", { value: p, selected: p === phase }, p || "any"))),
      ),
      h(
        "label",
        {},
        "Season ",
        h("select", { name: "season", id: "filter-season", onchange: submit }, h("option", { value: "" }, "any"), seasons.map((s) => h("option", { value: s.number, selected: String(s.number) === season }, s.title))),
      ),
      events.some((e) => e.state !== "scheduled")
        ? h(
            "label",
            {},
            "Event ",
            h("select", { name: "event", id: "filter-event", onchange: submit }, h("option", { value: "" }, "any"), events.filter((e) => e.state !== "scheduled").map((e) => h("option", { value: e.name, selected: e.name === event }, e.name))),
          )
        : null,
      h(
        "label",
        {},
        "Result ",
        h("select", { name: "result", id: "filter-result", onchange: submit, disabled: !bot }, ["", "won", "lost", "drew"].map((r) => h("option", { value: r, selected: r === result }, r ? `the bot ${r}` : "any"))),
      ),
      h("label", {}, h("input", { type: "checkbox", name: "faults", value: "1", id: "filter-faults", checked: faultsOnly, onchange: submit }), " with faults only"),
    ),
  );
  let shown = found.rows;
  if (bot && result) shown = shown.filter((m) => outcome(m, bot) === result);
  const pages = Math.max(1, Math.ceil(found.total / perPage));
  main.append(h("p", { class: "lead", id: "match-count" }, `${shown.length} of ${found.total} matches`));
  const pager = pagerLinks(params, pageNo, pages);
  main.append(pager, shown.length === 0 ? empty("No match fits.") : matchTable(shown, bot || undefined, true), pager.cloneNode(true));
  const human = await humanMatches();
  if (human) main.append(human);
}

// "newer" and "older" links around "page N of M", keeping the page's other parameters.
function pagerLinks(params, pageNo, pages) {
  const to = (n) => {
    const q = new URLSearchParams(params);
    q.set("page", n);
    return `/matches?${q}`;
  };
  return h(
    "nav",
    { class: "pager", "aria-label": "pages of matches" },
    pageNo > 1 ? h("a", { href: to(pageNo - 1), rel: "prev", class: "prev" }, "← newer") : h("span", { class: "prev" }, ""),
    h("span", { class: "page-of" }, `page ${pageNo} of ${pages}`),
    pageNo < pages ? h("a", { href: to(pageNo + 1), rel: "next", class: "next" }, "older →") : h("span", { class: "next" }, ""),
  );
}

// --- one match -----------------------------------------------------------------------------

async function matchPage(main, args) {
  const id = args.match_id;
  let m;
  try {
    // Not over: in progress, followed live when the duplicate-deal rule allows (./live.js).
    const live = await api(`/live/${encodeURIComponent(id)}`).catch(() => null);
    if (live && live.showing !== "over") {
      liveMatch(main, id, () => {});
      return;
    }
    m = await api(`/matches/${encodeURIComponent(id)}`);
  } catch (err) {
    showError(main, err);
    return;
  }
  const who = await me();
  const myRefs = new Set((who ? who.bots : []).flatMap((b) => b.versions.map((v) => v.ref)));
  main.append(
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Phase"),
      h("dd", {}, m.human ? [humanLabel(), " a challenge: a person held a seat"] : `${m.phase}, unit ${m.unit}, rotation ${m.rotation}`),
      h("dt", {}, "Seats"),
      h("dd", {}, m.seats.map((s, i) => [i ? " · " : "", `${i}: `, botLink(s)])),
      h("dt", {}, "Result"),
      h("dd", {}, m.summary || m.state),
      h("dt", {}, "Faults"),
      h("dd", {}, m.faults.length ? m.faults.map((f) => h("div", { class: "fault" }, `seat ${f.seat}: ${f.kind}${f.detail ? ` (${f.detail})` : ""}`)) : "none"),
      h("dt", {}, "Finished"),
      h("dd", {}, day(m.finished)),
    ),
  );
  const layout = h("div", { class: "match-layout" });
  const stage = h("div", { class: "stage" });
  layout.append(stage);
  main.append(layout);
  const mySeats = m.seats.map((s, i) => [s, i]).filter(([s]) => myRefs.has(s));
  if (!m.record_available) {
    stage.append(empty("The replay is published once every rotation of this deal has been played."));
  } else {
    try {
      // Signed in: the viewer shows the notes of the author's own seats (nobody else's).
      const doc = await api(`/matches/${encodeURIComponent(id)}/viewer`, { auth: true });
      const el = h("div", { id: "viewer" });
      stage.append(el);
      const player = { current: window.CardArenaViewer.mount(el, doc, { hash: true }) };
      stage.append(h("p", {}, h("a", { href: `${API}/matches/${encodeURIComponent(id)}/record`, download: "" }, "Download the record"), " (arena replay verify checks it)."));
      if (mySeats.length > 0) stage.append(analysisBox(id, (analysis) => {
        // The same viewer, now with the author's analysis: bars and timeline marks.
        player.current.destroy();
        player.current = window.CardArenaViewer.mount(el, { ...doc, analysis }, { hash: true });
      }));
    } catch (err) {
      showError(stage, err);
    }
  }
  if (mySeats.length > 0) {
    const logs = h("aside", { class: "logs", id: "seat-logs" }, h("h2", {}, "Your seat logs"));
    layout.append(logs);
    for (const [ref, seat] of mySeats) {
      const pre = h("pre", { class: "log", "data-seat": seat });
      logs.append(h("h3", {}, `seat ${seat} · ${ref}`), pre);
      apiText(`/matches/${encodeURIComponent(id)}/logs/${seat}`)
        .then((text) => (pre.textContent = text || "(it wrote nothing)"))
        .catch((err) => (pre.textContent = err.message));
    }
  }
}

// The author's analysis of their seats (docs/analysis.md): its state, a button to ask for it,
// and once done the analysis handed to show() for the viewer to draw.
const ANALYSIS_POLL_MS = 3000;

function analysisBox(id, show) {
  const url = `/matches/${encodeURIComponent(id)}/analysis`;
  const line = h("span", { class: "analysis-state" }, "");
  const ask = h("button", { type: "button", id: "request-analysis", hidden: true }, "Request analysis");
  const box = h("p", { class: "analysis", id: "analysis" }, "Analysis of your seats: ", line, " ", ask);
  const told = (a) => {
    line.textContent = (a.state === "none" ? "not asked for" : a.state) + (a.reason ? ` (${a.reason})` : "");
    box.dataset.state = a.state;
    ask.hidden = a.state !== "none" && a.state !== "failed";
    if (a.state === "done" && a.analysis) show(a.analysis);
    else if (a.state === "queued" || a.state === "running") setTimeout(look, ANALYSIS_POLL_MS);
  };
  const look = () =>
    api(url, { auth: true })
      .then(told)
      .catch((err) => (line.textContent = err.message));
  ask.addEventListener("click", () => {
    ask.disabled = true;
    api(url, { method: "POST", auth: true })
      .then(told)
      .catch((err) => (line.textContent = err.message))
      .finally(() => (ask.disabled = false));
  });
  look();
  return box;
}

// --- the author's own page -------------------------------------------------------------------

async function mePage(main) {
  const who = await me();
  if (!who) {
    main.querySelector("h1").textContent = "Sign in";
    const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "off", placeholder: "cau_…", required: true, size: 44 });
    const message = h("p", { class: "error", role: "alert", hidden: true });
    const form = h(
      "form",
      {
        class: "signin",
        id: "signin",
        onsubmit: async (e) => {
          e.preventDefault();
          localStorage.setItem(TOKEN_KEY, input.value.trim());
          forgetMe();
          try {
            const ok = await me();
            if (!ok) throw new Error("That token is not an author's token of this competition.");
            location.reload();
          } catch (err) {
            localStorage.removeItem(TOKEN_KEY);
            message.hidden = false;
            message.textContent = err.message;
          }
        },
      },
      h("label", { for: "token" }, "Your API token (from the host, or arena remote register)"),
      input,
      h("button", { type: "submit" }, "Sign in"),
      message,
    );
    main.append(form, h("p", { class: "note" }, "The token stays in this browser and is sent only to this host."));
    return;
  }
  main.querySelector("h1").textContent = `${who.author.name}'s bots`;
  main.append(
    h(
      "p",
      { class: "controls" },
      h("button", { id: "signout", onclick: () => { localStorage.removeItem(TOKEN_KEY); location.href = "/leaderboard"; } }, "Sign out"),
      " ",
      h(
        "button",
        {
          id: "rotate",
          onclick: async () => {
            if (!confirm("Make a new token? The one you use now stops working.")) return;
            const rotated = await api("/me/token", { method: "POST", auth: true });
            localStorage.setItem(TOKEN_KEY, rotated.token);
            shown.hidden = false;
            shown.querySelector("code").textContent = rotated.token;
          },
        },
        "New API token",
      ),
    ),
  );
  const shown = h("p", { class: "token", hidden: true, id: "new-token" }, "Your new token (shown once; this browser keeps it): ", h("code", {}));
  main.append(shown);
  const rows = who.bots.flatMap((b) => b.versions.map((v) => ({ ...v, bot: b.name })));
  main.append(
    section(
      "Submissions",
      rows.length === 0
        ? empty("Nothing submitted yet.")
        : sortableTable(
            [
              { key: "ref", label: "Version", cell: (v) => botLink(v.ref) },
              { key: "kind", label: "Kind" },
              { key: "status", label: "Status", cell: (v) => h("span", { class: `status status-${v.status}` }, STATUS_TEXT[v.status] || v.status) },
              { key: "reason", label: "Why", cell: (v) => v.reason || "" },
              {
                key: "log",
                label: "Validation log",
                sort: (v) => v.id,
                cell: (v) =>
                  v.kind === "live"
                    ? ""
                    : h("button", { class: "show-log", onclick: (e) => showLog(e.target, v.id) }, "show"),
              },
              { key: "created", label: "Submitted", cell: (v) => day(v.created) },
            ],
            rows,
            { id: "submissions", initial: ["created", -1] },
          ),
    ),
  );
  main.append(
    section(
      "Submit a version",
      h("pre", {}, `export ARENA_SERVER=${location.origin} ARENA_API_TOKEN=…\narena remote submit BOT ./my-bot-directory\narena remote live BOT   # a bot that runs on your machine`),
    ),
  );
}

async function showLog(button, versionId) {
  const pre = h("pre", { class: "log" });
  button.replaceWith(pre);
  try {
    pre.textContent = await apiText(`/versions/${versionId}/log`);
  } catch (err) {
    pre.textContent = err.message;
  }
}

// --- start -----------------------------------------------------------------------------------

const PAGES = {
  leaderboard: leaderboardPage,
  bot: botPage,
  matches: matchesPage,
  match: matchPage,
  me: mePage,
  ...SEASON_PAGES,
  ...EVENT_PAGES,
  ...ADMIN_PAGES,
  ...BROWSE_PAGES,
};

async function start() {
  const main = document.getElementById("page");
  const kind = main.dataset.page;
  const args = JSON.parse(main.dataset.args || "{}");
  try {
    await markNav(kind);
    await PAGES[kind](main, args);
  } catch (err) {
    showError(main, err);
  }
  // Three frames: the charts have been laid out, observed and redrawn at their cards' widths.
  for (let i = 0; i < 3; i++) await new Promise((done) => requestAnimationFrame(done));
  main.dataset.ready = "1"; // for tests and screenshots: the page has drawn itself
}

start();

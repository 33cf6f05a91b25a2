// The pages for finding one's way around a long-running competition: every bot at a glance,
// and the pages the host renders itself (a 404, the rules and the protocol), which need no
// drawing but the navigation's.
import { h, api, day, fmt, section, empty, sortableTable, botLink, STATUS_TEXT } from "./common.js";
import { humanLabel } from "./challenges.js";

// Every bot: its author, its latest version and that version's status, and its rating (its
// best-ranked version on the ladder, if any is rated).
async function botsPage(main) {
  const [bots, board] = await Promise.all([api("/bots"), api("/leaderboard?phase=ladder")]);
  const rated = new Map();
  for (const r of board) if (!rated.has(r.bot)) rated.set(r.bot, r);
  const rows = bots.map((b) => {
    const latest = b.versions.reduce((a, v) => (v.number > a.number ? v : a), b.versions[0]);
    const best = rated.get(b.name);
    return {
      name: b.name,
      author: b.author,
      latest: latest ? latest.ref : "",
      number: latest ? latest.number : 0,
      status: latest ? latest.status : "",
      versions: b.versions.length,
      elo: best ? best.elo : null,
      rank: best ? best.rank : null,
      rated: best ? best.ref : "",
      updated: latest ? latest.created : "",
    };
  });
  main.append(h("p", { class: "lead", id: "bot-count" }, `${rows.length} bot${rows.length === 1 ? "" : "s"}, ${rated.size} rated on the ladder`));
  const missing = (x) => (x === null ? -Infinity : x);
  main.append(
    section(
      "Every bot",
      rows.length === 0
        ? empty("No bot has been submitted yet.")
        : sortableTable(
            [
              { key: "name", label: "Bot", cell: (r) => h("a", { href: `/bots/${encodeURIComponent(r.name)}` }, r.name) },
              { key: "author", label: "Author" },
              { key: "latest", label: "Latest version", sort: (r) => r.number },
              { key: "status", label: "Status", cell: (r) => h("span", { class: `status status-${r.status}` }, STATUS_TEXT[r.status] || r.status) },
              { key: "versions", label: "Versions", numeric: true },
              { key: "elo", label: "Elo", numeric: true, sort: (r) => missing(r.elo), cell: (r) => (r.elo === null ? "" : h("span", { title: r.rated }, fmt(r.elo))) },
              { key: "rank", label: "Rank", numeric: true, sort: (r) => (r.rank === null ? Infinity : r.rank), cell: (r) => (r.rank === null ? "" : r.rank) },
              { key: "updated", label: "Latest submitted", cell: (r) => day(r.updated) },
            ],
            rows,
            { id: "bots", initial: ["elo", -1] },
          ),
    ),
  );
}

// How often the live list asks again, in ms.
const LIVE_POLL_MS = 5000;

// The matches being played: who plays which, never what happens (a unit plays one deal in every
// rotation: one match's public play is another's hidden hands). Asked again every few seconds.
async function livePage(main) {
  main.append(
    h(
      "p",
      { class: "note", id: "live-rule" },
      "Who is playing now. A deal is played in every rotation of its seats, so no card of a match is shown until every rotation is over and its replay is published on the match's page.",
    ),
  );
  const where = h("div", { id: "live" });
  main.append(where);
  const draw = async () => {
    const live = await api("/live");
    const rows = live.matches;
    where.replaceChildren(
      live.on_workers
        ? h("p", { class: "note", id: "on-workers" }, "This host plays its ladder on a cluster's workers: their matches are not shown while they play.")
        : "",
      h("p", { class: "lead", id: "live-count" }, `${rows.length} match${rows.length === 1 ? "" : "es"} in progress`),
      rows.length === 0
        ? empty("No match is being played right now.")
        : sortableTable(
            [
              { key: "match_id", label: "Match", cell: (m) => [h("a", { href: `/matches/${encodeURIComponent(m.match_id)}` }, m.match_id), m.human ? [" ", humanLabel()] : ""] },
              { key: "phase", label: "Phase" },
              { key: "unit", label: "Deal", numeric: true },
              { key: "rotation", label: "Rotation", numeric: true },
              { key: "seats", label: "Seats", sort: (m) => m.seats.join(" "), cell: (m) => h("span", { class: "seats" }, m.seats.map((s, i) => [i ? " · " : "", botLink(s)])) },
            ],
            rows,
            { id: "live-matches", initial: ["unit", -1] },
          ),
    );
  };
  await draw();
  setInterval(() => draw().catch(() => {}), LIVE_POLL_MS);
}

// Drawn by the host: nothing to fetch.
const served = async () => {};

export const PAGES = { bots: botsPage, live: livePage, notfound: served, text: served };

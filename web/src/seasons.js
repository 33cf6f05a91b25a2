// The ladder's seasons: /seasons (each with its dates and winners) and /seasons/N (its standings,
// frozen at its end once archived, and its ratings over time); and what the leaderboard says of
// the current season and the latest results.
import * as Plot from "@observablehq/plot";
import { h, api, botLink, day, fmt, section, empty, sortableTable, chart } from "./common.js";

const when = day; // "2026-12-05 05:13 UTC" (day names the zone)
const winners = (list) => (list.length ? list.join(" and ") : "nobody (no established version)");

// Under the leaderboard's lead: the season it shows, and the latest results with their winners.
export function seasonNote(status) {
  const out = [];
  const s = status.season;
  if (s) {
    const until = s.ends ? `, until ${when(s.ends)}` : "";
    out.push(
      h("p", { class: "note", id: "current-season" }, "Season: ", h("a", { href: `/seasons/${s.number}` }, s.title), ` (since ${when(s.starts)}${until})`),
    );
  }
  for (const r of (status.results || []).slice(0, 3)) {
    if (r.kind === "final") continue; // the final's winner has its own line
    out.push(h("p", { class: "winner result" }, `${r.subject} ended ${when(r.at)}: won by ${winners(r.winners)}.`));
  }
  return out;
}

async function seasonsPage(main) {
  const seasons = await api("/seasons");
  main.append(
    section(
      "Seasons",
      sortableTable(
        [
          { key: "number", label: "#", numeric: true },
          { key: "title", label: "Season", cell: (s) => h("a", { href: `/seasons/${s.number}` }, s.title) },
          { key: "starts", label: "From", cell: (s) => when(s.starts) },
          { key: "ends", label: "To", cell: (s) => when(s.ends) },
          { key: "state", label: "State" },
          { key: "matches", label: "Matches", numeric: true, cell: (s) => (s.matches ?? "") },
          {
            key: "winners",
            label: "Winner",
            sort: (s) => s.winners.join(" "),
            cell: (s) => (s.state === "archived" ? h("span", { class: "winner" }, ...joined(s.winners)) : ""),
          },
        ],
        seasons,
        { id: "seasons", initial: ["number", -1] },
      ),
    ),
  );
}

function joined(refs) {
  if (!refs.length) return ["none"];
  return refs.flatMap((ref, i) => (i ? [" and ", botLink(ref)] : [botLink(ref)]));
}

async function seasonPage(main, { number }) {
  const detail = await api(`/seasons/${encodeURIComponent(number)}`);
  const s = detail.season;
  main.querySelector("h1").textContent = s.title;
  const archived = s.state === "archived";
  main.append(
    h("p", { class: "lead" }, `${when(s.starts)} to ${s.ends ? when(s.ends) : "no end planned"} · ${archived ? `archived, ${s.matches} matches` : "current"}`),
  );
  if (archived) main.append(h("p", { class: "winner", id: "season-winner" }, `Won by ${winners(s.winners)}.`));
  const rows = detail.standings;
  main.append(
    section(
      archived ? "Standings, frozen at its end" : "Standings so far",
      rows.length === 0
        ? empty("No rated versions in this season.")
        : sortableTable(
            [
              { key: "rank", label: "Rank", numeric: true },
              { key: "ref", label: "Version", cell: (r) => botLink(r.ref) },
              { key: "author", label: "Author" },
              { key: "elo", label: "Elo", numeric: true, cell: (r) => fmt(r.elo) },
              { key: "plus_minus", label: "± 95 %", numeric: true, cell: (r) => fmt(r.plus_minus) },
              { key: "matches", label: "Matches", numeric: true },
              { key: "provisional", label: "", cell: (r) => (r.provisional ? "provisional" : "") },
            ],
            rows,
            { id: "season-standings", initial: ["rank", 1] },
          ),
      h("p", { class: "note" }, "Download: ", ...downloads(s.number)),
    ),
  );
  const points = detail.history.flatMap((p) => p.ratings.map((r) => ({ ...r, matches: p.matches })));
  main.append(
    section(
      "Ratings over the season",
      detail.history.length < 2
        ? empty("Too few refits in this season for a chart.")
        : chart({
            height: 260,
            marginLeft: 50,
            marginRight: 110,
            x: { label: "rated matches", grid: true, tickFormat: "d" },
            y: { label: "Elo", grid: true },
            color: { domain: rows.map((r) => r.ref) },
            marks: [
              Plot.lineY(points, { x: "matches", y: "elo", z: "ref", stroke: "ref", strokeWidth: 2 }),
              Plot.text(points, Plot.selectLast({ x: "matches", y: "elo", z: "ref", text: "ref", textAnchor: "start", dx: 4 })),
            ],
          }),
    ),
  );
}

function downloads(n) {
  const link = (what, f) => h("a", { href: `/api/v1/export/${what}.${f}?season=${n}`, download: "" }, `${what}.${f}`);
  return [link("standings", "csv"), " · ", link("standings", "json"), " · ", link("matches", "csv"), " · ", link("matches", "json")];
}

export const PAGES = { seasons: seasonsPage, season: seasonPage };

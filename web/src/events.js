// The events' pages (arena/host/events): /events lists them; /events/NAME draws a knockout as
// a bracket (one column a round, each tie a box with its deals' matches), a Swiss event as its
// standings and its rounds' pairings, heats as one table a heat. Everything from the API's
// /events and /events/NAME; names from strangers go in as text.
import { h, api, botLink, matchLink, day, section, empty, sortableTable } from "./common.js";

const eventLink = (name) => h("a", { href: `/events/${encodeURIComponent(name)}` }, name);
const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const rules = (e) =>
  Object.entries(e.config)
    .filter(([k]) => k !== "format" && k !== "start")
    .map(([k, v]) => `${k.replaceAll("_", " ")} ${v}`)
    .join(", ");

async function eventsPage(main) {
  const events = await api("/events");
  main.querySelector("h1").textContent = "Events";
  if (events.length === 0) {
    main.append(empty("No events: a host adds them to its config ([[events]], docs/hosting.md)."));
    return;
  }
  const columns = [
    { key: "name", label: "Event", cell: (e) => eventLink(e.name) },
    { key: "format", label: "Format" },
    { key: "state", label: "State" },
    { key: "start", label: "Start (UTC)", cell: (e) => (e.start ? day(e.start) : "when the host starts it") },
    { key: "entrants", label: "Entrants", numeric: true, sort: (e) => e.entrants.length, cell: (e) => e.entrants.length || "" },
    { key: "winner", label: "Winner", cell: (e) => (e.winner ? botLink(e.winner) : "") },
  ];
  main.append(section("Events", sortableTable(columns, events, { id: "events" })));
}

function deals(tie) {
  return h(
    "ul",
    { class: "deals" },
    tie.deals.map((d) =>
      h("li", {}, `deal ${d.deal + 1} (${d.state}${d.points.length ? `, ${d.points.map(num).join("–")}` : ""}): `, d.match_ids.map((id, i) => [i ? " " : "", matchLink(id)])),
    ),
  );
}

function tieBox(tie) {
  const through = new Set(tie.result.slice(0, 1));
  const sides = tie.sides.map((ref, i) =>
    h(
      "div",
      { class: `side${ref && through.has(ref) ? " through" : ""}` },
      h("span", { class: "seed" }, tie.seeds[i] ?? ""),
      ref ? botLink(ref) : h("span", { class: "bye" }, "bye"),
      h("span", { class: "pts" }, ref && tie.deals.length ? num(tie.points[tie.sides.filter(Boolean).indexOf(ref)]) : ""),
    ),
  );
  return h("div", { class: "tie" }, sides, tie.deals.length ? deals(tie) : null);
}

function bracket(e) {
  return h(
    "div",
    { class: "bracket", id: "bracket" },
    e.rounds.map((r) => h("div", { class: "round" }, h("h3", {}, r.name), r.ties.map(tieBox))),
  );
}

function swiss(e) {
  const columns = [
    { key: "rank", label: "#", numeric: true },
    { key: "ref", label: "Entrant", cell: (s) => botLink(s.ref) },
    { key: "seed", label: "Seed", numeric: true },
    { key: "points", label: "Points", numeric: true, cell: (s) => num(s.points) },
    { key: "match_points", label: "Match points", numeric: true, cell: (s) => num(s.match_points) },
    { key: "tiebreak", label: "Buchholz", numeric: true, cell: (s) => num(s.tiebreak) },
  ];
  const rounds = e.rounds.map((r) =>
    section(
      r.name,
      h(
        "ul",
        { class: "pairings" },
        r.ties.map((t) =>
          t.sides[1] === null
            ? h("li", {}, botLink(t.sides[0]), ": bye")
            : h("li", {}, botLink(t.sides[0]), " v ", botLink(t.sides[1]), t.deals.length ? ` ${t.points.map(num).join("–")}` : "", deals(t)),
        ),
      ),
    ),
  );
  return [section("Standings", sortableTable(columns, e.standings, { id: "standings" })), ...rounds];
}

function heats(e) {
  return e.rounds.map((r) =>
    section(
      r.name,
      r.ties.map((t, i) => {
        const order = t.result.length ? t.result : t.sides;
        const rows = order.map((ref, k) => {
          const at = t.sides.indexOf(ref);
          return { place: t.result.length ? k + 1 : "", ref, seed: t.seeds[at], points: t.points[at] ?? 0, score: t.scores[at] ?? 0 };
        });
        const columns = [
          { key: "place", label: "#", numeric: true },
          { key: "ref", label: "Entrant", cell: (row) => botLink(row.ref) },
          { key: "seed", label: "Seed", numeric: true },
          { key: "points", label: "Match points", numeric: true, cell: (row) => num(row.points) },
          { key: "score", label: "Score", numeric: true, cell: (row) => num(row.score) },
        ];
        return h("div", { class: "heat" }, h("h3", {}, r.ties.length > 1 ? `Heat ${i + 1}` : "Final heat"), sortableTable(columns, rows), deals(t));
      }),
    ),
  );
}

async function eventPage(main, args) {
  const e = await api(`/events/${encodeURIComponent(args.name)}`);
  main.querySelector("h1").textContent = `${e.name}: ${e.format}`;
  main.append(h("p", { class: "lead" }, `${rules(e)} · ${e.state}`, e.start ? ` · start ${day(e.start)} UTC` : ""));
  if (e.winner) main.append(h("p", { class: "winner", id: "event-winner" }, `${e.winner} won ${e.name}.`, e.reason ? ` (${e.reason})` : ""));
  else if (e.state === "finished" && e.reason) main.append(h("p", { class: "reason" }, e.reason));
  if (e.state === "scheduled") {
    main.append(empty("Not started yet: its entrants will be the ladder's best at its start."));
    return;
  }
  main.append(section("Entrants", h("ol", { class: "entrants" }, e.entrants.map((ref) => h("li", {}, botLink(ref))))));
  if (e.format === "knockout") main.append(section("Bracket", bracket(e)));
  else if (e.format === "swiss") main.append(...swiss(e));
  else main.append(...heats(e));
}

export const PAGES = { events: eventsPage, event: eventPage };

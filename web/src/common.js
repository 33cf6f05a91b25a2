// What every page shares: the API client (with the signed-in author's token), element building,
// links, tables, charts and the navigation bar. A page module (pages.js, and one file per area)
// imports what it needs and registers its pages in pages.js's PAGES.
import * as Plot from "@observablehq/plot";

export const API = "/api/v1";
export const TOKEN_KEY = "cardarena.token";

// --- small helpers -------------------------------------------------------------------------

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const token = () => localStorage.getItem(TOKEN_KEY);

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

// bearer: another token than the signed-in author's (the admin page's own).
export async function api(path, { method = "GET", auth = false, body, bearer } = {}) {
  const headers = {};
  const t = bearer ?? token();
  if (auth && t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(API + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const detail = data && typeof data === "object" && data.detail ? data.detail : `HTTP ${res.status}`;
    throw new ApiError(res.status, typeof detail === "string" ? detail : JSON.stringify(detail));
  }
  return data;
}

// A page of a list the API pages (``limit`` after ``offset``): its rows and the total number
// of rows the query selects (the X-Total-Count header).
export async function apiPage(path) {
  const res = await fetch(API + path);
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, (data && data.detail) || `HTTP ${res.status}`);
  return { rows: data, total: Number(res.headers.get("X-Total-Count") || data.length) };
}

export async function apiText(path) {
  const t = token();
  const res = await fetch(API + path, { headers: t ? { Authorization: `Bearer ${t}` } : {} });
  const text = await res.text();
  if (!res.ok) {
    let detail = `HTTP ${res.status}`;
    try {
      detail = JSON.parse(text).detail || detail;
    } catch {
      /* not JSON: keep the status */
    }
    throw new ApiError(res.status, detail);
  }
  return text;
}

export const botOf = (ref) => ref.slice(0, ref.lastIndexOf("@"));
// A person's seat (a challenge's "person:AUTHOR") is no bot: no link.
export const botLink = (ref) =>
  ref.startsWith("person:") ? h("span", { class: "ref person" }, ref) : h("a", { href: `/bots/${encodeURIComponent(botOf(ref))}`, class: "ref" }, ref);
export const matchLink = (id) => h("a", { href: `/matches/${encodeURIComponent(id)}` }, id);
// A stored time (ISO 8601, UTC: "2026-12-05T05:13:22.123Z") as "2026-12-05 05:13 UTC"; a time
// with another offset is converted, one without any is read as UTC (as the host stores them).
export function day(iso) {
  if (!iso) return "";
  const t = new Date(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(iso) ? iso : `${iso}Z`);
  if (Number.isNaN(t.getTime())) return iso;
  return `${t.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
export const fmt = (x, digits = 1) => (typeof x === "number" ? x.toFixed(digits) : "");

// A version's status, in words.
export const STATUS_TEXT = {
  pending: "waiting for validation",
  validating: "being validated",
  validated: "validated",
  failed: "failed validation",
  retired: "retired",
};

export function section(title, ...children) {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

export function empty(text) {
  return h("p", { class: "empty" }, text);
}

export function showError(where, err) {
  where.append(h("p", { class: "error", role: "alert" }, err.message || String(err)));
}

// A table whose columns sort on a click of their header (numbers as numbers), keeping
// aria-sort on the sorted header for screen readers and tests.
export function sortableTable(columns, rows, { id, initial } = {}) {
  const table = h("table", { class: "sortable", id });
  const thead = h("thead");
  const tbody = h("tbody");
  const headRow = h("tr");
  let sortKey = initial ? initial[0] : null;
  let sortDir = initial ? initial[1] : 1;
  const cells = columns.map((col) => {
    const th = h(
      "th",
      { scope: "col", "data-key": col.key, tabindex: 0, class: col.numeric ? "num" : "" },
      col.label,
    );
    const activate = () => {
      sortDir = sortKey === col.key ? -sortDir : col.numeric ? -1 : 1;
      sortKey = col.key;
      draw();
    };
    th.addEventListener("click", activate);
    th.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        activate();
      }
    });
    headRow.append(th);
    return th;
  });
  thead.append(headRow);
  table.append(thead, tbody);
  function draw() {
    const sorted = [...rows];
    if (sortKey !== null) {
      const col = columns.find((c) => c.key === sortKey);
      const value = col.sort || ((r) => r[col.key]);
      sorted.sort((a, b) => {
        const x = value(a);
        const y = value(b);
        return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
      });
    }
    for (const [i, th] of cells.entries()) {
      const key = columns[i].key;
      th.setAttribute("aria-sort", key === sortKey ? (sortDir > 0 ? "ascending" : "descending") : "none");
    }
    tbody.replaceChildren(
      ...sorted.map((r) =>
        h(
          "tr",
          {},
          columns.map((c) => h("td", { class: c.numeric ? "num" : "" }, c.cell ? c.cell(r) : r[c.key])),
        ),
      ),
    );
  }
  draw();
  return table;
}

// A chart as wide as its card: drawn at the figure's width once it is laid out, and again
// whenever that changes (a resized window). ``options.width`` fixes the width instead (the
// heatmaps size their cells). ``endLabels`` ({ data, x, y, z, text }): a label at the last point
// of each series, moved apart so that no two overlap.
export function chart({ endLabels, ...options }) {
  const figure = h("figure", { class: "chart" });
  let drawn = 0;
  const draw = () => {
    const width = options.width ?? Math.max(320, Math.floor(figure.clientWidth) || 640);
    if (width === drawn) return;
    drawn = width;
    const base = { style: { fontSize: "12px" }, ...options, width };
    figure.replaceChildren(endLabels ? withEndLabels(base, endLabels) : Plot.plot(base));
  };
  draw();
  // Redrawn in the next frame, not in the observer's callback: the new drawing changes the
  // figure's height, which the observer would report again in the same frame (a loop error).
  new ResizeObserver(() => requestAnimationFrame(draw)).observe(figure);
  return figure;
}

// The smallest gap between two labels' baselines, in pixels (12 px text).
const LABEL_GAP = 15;

// Draw once for the y scale, spread the series' last points apart in pixels, then draw with
// the labels at those places (the y domain held, so that the labels move nothing else).
function withEndLabels(options, { data, x, y, z, text }) {
  const scale = Plot.plot(options).scale("y");
  const last = new Map();
  for (const d of data) last.set(d[z], d);
  const ends = [...last.values()].map((d) => ({ d, py: scale.apply(d[y]) })).sort((a, b) => a.py - b.py);
  const [bottom, top] = [Math.max(...scale.range), Math.min(...scale.range)];
  spread(ends, top, bottom);
  const labels = ends.map(({ d, py }) => ({ x: d[x], y: scale.invert(py), text: d[text], z: d[z] }));
  return Plot.plot({
    ...options,
    y: { ...options.y, domain: scale.domain },
    marks: [...options.marks, Plot.text(labels, { x: "x", y: "y", text: "text", fill: "z", textAnchor: "start", dx: 6 })],
  });
}

// Move the points (sorted by ``py``) apart by at least LABEL_GAP, within [top, bottom] where
// there is room: down from the top first, then back up from the bottom.
export function spread(points, top, bottom) {
  for (let i = 0; i < points.length; i++) {
    const floor = i === 0 ? top : points[i - 1].py + LABEL_GAP;
    points[i].py = Math.max(points[i].py, floor);
  }
  for (let i = points.length - 1; i >= 0; i--) {
    const ceiling = i === points.length - 1 ? bottom : points[i + 1].py - LABEL_GAP;
    points[i].py = Math.min(points[i].py, ceiling);
  }
  return points;
}

// --- the signed-in author ------------------------------------------------------------------

let meCache;
// After a sign-in or a rotated token: the next me() asks the host again.
export function forgetMe() {
  meCache = undefined;
}

export async function me() {
  if (!token()) return null;
  if (meCache === undefined) {
    try {
      meCache = await api("/me", { auth: true });
    } catch (err) {
      if (err.status === 401 || err.status === 403) {
        localStorage.removeItem(TOKEN_KEY);
        meCache = null;
      } else throw err;
    }
  }
  return meCache;
}

export async function markNav(page) {
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (a.dataset.nav === page) a.setAttribute("aria-current", "page");
  }
  const who = await me().catch(() => null);
  const link = document.getElementById("nav-me");
  if (who) link.textContent = `${who.author.name}'s bots`;
}

// --- the leaderboard -------------------------------------------------------------------------

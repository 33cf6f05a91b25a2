// The host's admin page (/admin): signed in with the admin token, pasted as an author pastes
// theirs and kept in this browser under its own key, sent only to this host. Authors with their
// versions, quotas and a suspend or reinstate button; the validation queue; failed units with
// why and a rerun button; the audit log. Everything from strangers goes in as text.
import { h, api, day, section, empty, showError, sortableTable } from "./common.js";

export const ADMIN_TOKEN_KEY = "cardarena.admin-token";

const adminToken = () => localStorage.getItem(ADMIN_TOKEN_KEY) || "";
const admin = (path, options = {}) => api(`/admin${path}`, { ...options, auth: true, bearer: adminToken() });
const MIB = 1024 * 1024;

function signIn(main) {
  main.querySelector("h1").textContent = "Admin: sign in";
  const input = h("input", { type: "password", id: "admin-token", name: "admin-token", autocomplete: "off", placeholder: "caa_…", required: true, size: 44 });
  const message = h("p", { class: "error", role: "alert", hidden: true });
  const form = h(
    "form",
    {
      class: "signin",
      id: "admin-signin",
      onsubmit: async (e) => {
        e.preventDefault();
        localStorage.setItem(ADMIN_TOKEN_KEY, input.value.trim());
        try {
          await admin("/authors");
          location.reload();
        } catch (err) {
          localStorage.removeItem(ADMIN_TOKEN_KEY);
          message.hidden = false;
          message.textContent = err.status === 403 ? "That is not this host's admin token." : err.message;
        }
      },
    },
    h("label", { for: "admin-token" }, "The host's admin token (the competition directory's private/admin.token)"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    message,
  );
  main.append(form, h("p", { class: "note" }, "The token stays in this browser and is sent only to this host."));
}

const of = (used, limit, unit = "") => (limit ? `${used}/${limit}${unit}` : `${used}${unit} (no limit)`);

function quota(q) {
  const stored = (q.stored_bytes / MIB).toFixed(1);
  const limit = q.stored_bytes_limit ? (q.stored_bytes_limit / MIB).toFixed(0) : 0;
  return `versions today ${of(q.versions_today, q.versions_per_day)} · live bots ${of(q.live_bots, q.live_bots_per_author)} · stored ${of(stored, limit, " MiB")}`;
}

function authorsSection(authors, act) {
  if (authors.length === 0) return section("Authors", empty("No authors yet."));
  const columns = [
    { key: "name", label: "Author" },
    {
      key: "standing",
      label: "Standing",
      sort: (a) => a.suspended || "",
      cell: (a) => (a.suspended ? h("span", { class: "suspended" }, `suspended ${day(a.suspended)} UTC${a.suspended_reason ? `: ${a.suspended_reason}` : ""}`) : "active"),
    },
    {
      key: "versions",
      label: "Versions",
      sort: (a) => a.versions.length,
      cell: (a) => h("ul", { class: "versions" }, a.versions.map((v) => h("li", {}, `${v.ref} · ${v.kind} · ${v.status}`, v.reason ? ` (${v.reason})` : ""))),
    },
    { key: "quota", label: "Quota use", sort: (a) => a.quota.versions_today, cell: (a) => quota(a.quota) },
    {
      key: "action",
      label: "",
      sort: (a) => a.name,
      cell: (a) => {
        if (a.suspended) return h("button", { class: "reinstate", "data-author": a.name, onclick: () => act(`reinstate ${a.name}`, () => reinstate(a.name)) }, "Reinstate");
        const reason = h("input", { class: "reason", "aria-label": `why suspend ${a.name}`, placeholder: "reason", size: 16 });
        const button = h(
          "button",
          {
            class: "suspend",
            "data-author": a.name,
            onclick: () => {
              if (!confirm(`Suspend ${a.name}? Their tokens stop working, their versions are retired, their live bots are disconnected.`)) return;
              act(`suspend ${a.name}`, () => admin(`/authors/${encodeURIComponent(a.name)}/suspend`, { method: "POST", body: { reason: reason.value.trim() } }));
            },
          },
          "Suspend",
        );
        return h("span", {}, reason, " ", button);
      },
    },
  ];
  return section("Authors", sortableTable(columns, authors, { id: "admin-authors" }));
}

async function reinstate(name) {
  const made = await admin(`/authors/${encodeURIComponent(name)}/reinstate`, { method: "POST" });
  const shown = document.getElementById("new-token");
  shown.hidden = false;
  shown.querySelector("span").textContent = `${made.author.name}'s new API token (shown once; the old one stays dead, their retired versions stay retired): `;
  shown.querySelector("code").textContent = made.token;
}

function queueSection(queue) {
  const rows = queue.validation.map((q) => ({ ...q.version, age_s: q.age_s }));
  const columns = [
    { key: "id", label: "Version", numeric: true },
    { key: "ref", label: "Bot" },
    { key: "kind", label: "Kind" },
    { key: "status", label: "Status" },
    { key: "age_s", label: "Waiting (s)", numeric: true, cell: (v) => v.age_s.toFixed(0) },
  ];
  return section("Validation queue", rows.length ? sortableTable(columns, rows, { id: "admin-queue" }) : empty("Nothing waiting for its validation."));
}

function failedSection(units, act) {
  const columns = [
    { key: "id", label: "Unit", numeric: true },
    { key: "phase", label: "Phase" },
    { key: "table", label: "Table", sort: (u) => u.table.join(" "), cell: (u) => u.table.join(", ") },
    { key: "finished", label: "Failed (UTC)", cell: (u) => day(u.finished) },
    { key: "reason", label: "Why" },
    {
      key: "rerun_as",
      label: "",
      sort: (u) => u.rerun_as ?? -1,
      cell: (u) =>
        u.rerun_as !== null && u.rerun_as !== undefined
          ? `played again as unit ${u.rerun_as}`
          : h("button", { class: "rerun", "data-unit": u.id, onclick: () => act(`rerun unit ${u.id}`, () => admin(`/units/${u.id}/rerun`, { method: "POST" })) }, "Rerun"),
    },
  ];
  return section("Failed units", units.length ? sortableTable(columns, units, { id: "admin-failed", initial: ["id", -1] }) : empty("No failed unit."));
}

function auditSection(rows) {
  const columns = [
    { key: "id", label: "#", numeric: true },
    { key: "at", label: "When (UTC)", cell: (e) => day(e.at) },
    { key: "action", label: "Action" },
    { key: "target", label: "Target" },
    { key: "detail", label: "Detail", sort: (e) => JSON.stringify(e.detail), cell: (e) => (Object.keys(e.detail).length ? JSON.stringify(e.detail) : "") },
  ];
  return section("Audit", rows.length ? sortableTable(columns, rows, { id: "admin-audit", initial: ["id", -1] }) : empty("No admin action yet."));
}

async function adminPage(main) {
  if (!adminToken()) {
    signIn(main);
    return;
  }
  main.querySelector("h1").textContent = "Admin";
  const message = h("p", { class: "note", id: "admin-message", role: "status" });
  const shown = h("p", { class: "token", hidden: true, id: "new-token" }, h("span"), h("code"));
  const body = h("div", { id: "admin-body" });
  const signOut = () => {
    localStorage.removeItem(ADMIN_TOKEN_KEY);
    location.href = "/leaderboard";
  };
  main.append(h("p", { class: "controls" }, h("button", { id: "admin-signout", onclick: signOut }, "Sign out")), message, shown, body);

  async function draw() {
    const [authors, queue, audit] = await Promise.all([admin("/authors"), admin("/queue"), admin("/audit")]);
    body.replaceChildren(authorsSection(authors, act), queueSection(queue), failedSection(queue.failed_units, act), auditSection(audit));
  }

  async function act(what, run) {
    message.textContent = `${what}…`;
    try {
      await run();
      message.textContent = `${what}: done`;
    } catch (err) {
      message.textContent = `${what}: ${err.message}`;
    }
    await draw();
  }

  try {
    await draw();
  } catch (err) {
    if (err.status === 403) {
      localStorage.removeItem(ADMIN_TOKEN_KEY);
      signIn(main);
      return;
    }
    showError(main, err);
  }
}

export const PAGES = { admin: adminPage };

// Challenges (docs/hosting.md, "Challenges: authors at the table"): a signed-in author plays a
// bot's newest ladder version in the browser, and human matches are labelled wherever they show.
import { h, api, me, section, matchLink, day } from "./common.js";

// A person's seat in a human match's seats: "person:alice".
export const isPerson = (ref) => ref.startsWith("person:");

// The visible label of a human match (its page, the lists).
export const humanLabel = () => h("span", { class: "human-label", title: "a person held a seat: a challenge" }, "human");

// On a bot's page, for a signed-in author where the host takes challenges and the bot has a
// version on the ladder: the seat to take and a "Challenge" button that starts the match and
// opens the author's page (their seat) in this tab.
export async function challengeBox(bot, status) {
  if (!status.challenge_seats || !bot.versions.some((v) => v.status === "validated")) return null;
  const who = await me();
  if (!who) return null;
  const seats = Array.from({ length: status.challenge_seats }, (_, i) => i);
  const seat = h("select", { id: "challenge-seat", name: "seat" }, seats.map((i) => h("option", { value: i }, `seat ${i}`)));
  const line = h("span", { class: "challenge-state", role: "status" }, "");
  const go = h("button", { type: "button", id: "challenge" }, "Challenge");
  go.addEventListener("click", async () => {
    go.disabled = true;
    line.textContent = "starting…";
    try {
      const started = await api("/challenges", { method: "POST", auth: true, body: { opponents: [bot.name], seat: Number(seat.value) } });
      line.textContent = "";
      location.assign(started.play_url);
    } catch (err) {
      line.textContent = err.message;
      go.disabled = false;
    }
  });
  const box = section(
    "Play it yourself",
    h("p", {}, `Sit at a table against ${bot.name}'s newest version on the ladder, in this browser: a human match, labelled so.`),
    h("p", {}, h("label", {}, "Your seat ", seat), " ", go, " ", line),
  );
  box.id = "challenge-box";
  box.classList.add("challenge");
  return box;
}

// The human matches, newest first, for the match list.
export async function humanMatches() {
  const found = await api("/challenges?limit=20");
  if (found.length === 0) return null;
  return section(
    "Human matches",
    h(
          "table",
          { id: "human-matches" },
          h("thead", {}, h("tr", {}, ["Match", "", "Seats", "State", "Result", "Started"].map((t) => h("th", {}, t)))),
          h(
            "tbody",
            {},
            found.map((c) =>
              h(
                "tr",
                {},
                h("td", {}, matchLink(c.match_id)),
                h("td", {}, humanLabel()),
                h("td", {}, c.seats.join(" · ")),
                h("td", {}, c.state),
                h("td", {}, c.summary || c.reason || ""),
                h("td", {}, day(c.created)),
              ),
          ),
        ),
      ),
  );
}

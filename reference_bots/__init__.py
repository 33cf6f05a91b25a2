"""Reference bots: random and rule-based players for every game, plus a Node.js bot in js/."""

#!/usr/bin/env node
// Card Arena reference bot for Node.js.
//
// It speaks protocol version 1 (proto/cardarena/v1/arena.proto) and plays every game without
// knowing any rules: each DecisionRequest carries the legal actions, and the bot answers with an
// index into that list. The .proto is loaded at run time; there is no generated code.
//
// The arena launches it with ARENA_ADDRESS (host:port or unix:PATH), ARENA_TOKEN and ARENA_SEED.
// Exit status: 0 when the server ends the stream normally (or after --matches N matches, on
// SIGTERM, or when the connection is cut (UNAVAILABLE) between matches: after one has ended, with
// none in play, as when the server shuts down), 1 when the connection fails otherwise, 2 on a
// usage error, 3 when the server rejects the Hello.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const util = require("node:util");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const BOT_VERSION = "1.0.0";
const PROTOCOL_VERSION = 1;
const DEFAULT_PROTO = path.join(__dirname, "..", "..", "proto", "cardarena", "v1", "arena.proto");

const USAGE = `usage: node bot.js [options]

Card Arena reference bot: answers every decision with the index of a legal action.

options:
  --server ADDR          host:port or unix:PATH (default: $ARENA_ADDRESS)
  --token TOKEN          token sent in Hello (default: $ARENA_TOKEN)
  --seed N               seed of the random strategy (default: $ARENA_SEED, else 0)
  --strategy NAME        random: uniform over the legal actions (default); first: index 0
  --matches N            exit after N matches have ended (default: until the server ends)
  --name NAME            bot name sent in Hello (default: node-<strategy>)
  --games LIST           comma-separated game ids to accept (default: any)
  --proto PATH           arena.proto to load (default: $ARENA_PROTO, else the repository's)
  --connect-timeout S    seconds to wait for the server to accept the connection (default 10)
  --verbose              log every message received to stderr
  -h, --help             show this help`;

// ---------------------------------------------------------------------------------------------
// Command line

function usageError(message) {
  process.stderr.write(`bot: error: ${message}\n`);
  process.exit(2);
}

/** Options from argv; environment variables supply the defaults. */
function parseOptions(argv, env) {
  const str = { type: "string" };
  let values;
  try {
    ({ values } = util.parseArgs({
      args: argv,
      options: {
        server: str,
        token: str,
        seed: str,
        strategy: str,
        matches: str,
        name: str,
        games: str,
        proto: str,
        "connect-timeout": str,
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    usageError(err.message.split("\n")[0]);
  }
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    process.exit(0);
  }
  const opts = {
    server: values.server || env.ARENA_ADDRESS || "",
    token: values.token ?? env.ARENA_TOKEN ?? "",
    seed: (values.seed ?? env.ARENA_SEED ?? "0").trim(),
    strategy: values.strategy || "random",
    matches: Number(values.matches ?? "0"), // 0: no limit
    name: values.name || "",
    games: (values.games || "").split(",").map((g) => g.trim()).filter(Boolean),
    proto: values.proto || env.ARENA_PROTO || DEFAULT_PROTO,
    connectTimeout: Number(values["connect-timeout"] ?? "10"),
    verbose: Boolean(values.verbose),
  };
  if (!opts.server) usageError("no server address: pass --server or set ARENA_ADDRESS");
  if (opts.strategy !== "random" && opts.strategy !== "first") {
    usageError(`--strategy must be random or first, not ${JSON.stringify(opts.strategy)}`);
  }
  if (!Number.isInteger(opts.matches) || opts.matches < 0) {
    usageError("--matches must be a whole number >= 0");
  }
  if (!(opts.connectTimeout > 0)) usageError("--connect-timeout must be a positive number");
  if (!/^\d+$/.test(opts.seed)) usageError(`seed must be a whole number >= 0, not "${opts.seed}"`);
  opts.seed = BigInt(opts.seed) & MASK64;
  if (!opts.name) opts.name = `node-${opts.strategy}`;
  if (!fs.existsSync(opts.proto)) {
    usageError(`protocol file not found: ${opts.proto} (set ARENA_PROTO or --proto)`);
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Seeded PRNG: splitmix64 expands a 64-bit seed into the state of xoshiro128**, whose steps are
// plain 32-bit integer operations (fast, and the same on every platform).

const MASK64 = (1n << 64n) - 1n;
const GOLDEN64 = 0x9e3779b97f4a7c15n;

/** One splitmix64 step: [next state, output]. */
function splitmix64(state) {
  const next = (state + GOLDEN64) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [next, z ^ (z >> 31n)];
}

function rotl(x, k) {
  return (x << k) | (x >>> (32 - k));
}

class Rng {
  /** @param {bigint} seed any 64-bit value */
  constructor(seed) {
    let state = seed & MASK64;
    const words = [];
    for (let i = 0; i < 2; i++) {
      let out;
      [state, out] = splitmix64(state);
      words.push(Number(out & 0xffffffffn), Number(out >> 32n));
    }
    if (words.every((w) => w === 0)) words[0] = 1; // the all-zero state never leaves zero
    this.s = Uint32Array.from(words);
  }

  /** Next 32-bit unsigned integer (xoshiro128**). */
  nextU32() {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform integer in [0, n), without modulo bias. */
  below(n) {
    if (n <= 1) return 0;
    const limit = 0x100000000 - (0x100000000 % n);
    let x;
    do x = this.nextU32();
    while (x >= limit);
    return x % n;
  }
}

// ---------------------------------------------------------------------------------------------
// The bot

function loadProto(protoPath) {
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: true, // field names as in the .proto: request_id, legal_actions
    longs: String, // uint64 (request_id, bot_seed) as decimal strings: exact, echoed unchanged
    enums: String, // ErrorCode by name
    defaults: false, // absent fields stay absent: less work per message
    oneofs: true, // msg.kind names the member of the oneof that is set
  });
  return grpc.loadPackageDefinition(definition).cardarena.v1;
}

/** Open the Arena.Play stream on a ready channel and answer until it ends. */
function play(opts, client, log) {
  const call = client.Play();
  const started = process.hrtime.bigint();
  const baseRng = new Rng(opts.seed);
  const matchRngs = new Map(); // match_id -> Rng, per match in play: each stays reproducible
  const matchSeats = new Map(); // match_id -> the seats this connection plays there
  let decisions = 0;
  let matchesEnded = 0;
  let welcomed = false;
  let finishing = false; // we are closing on purpose (--matches reached, signal)
  let exitCode = null; // set by a message (Rejected) before the stream ends

  const choose = (req) => {
    const n = req.legal_actions ? req.legal_actions.length : 0;
    if (opts.strategy === "first" || n <= 1) return 0;
    return (matchRngs.get(req.match_id) || baseRng).below(n);
  };

  const finish = (code, fatal) => {
    if (fatal) process.stderr.write(`bot: ${fatal}\n`);
    const secs = Number(process.hrtime.bigint() - started) / 1e9;
    if (opts.verbose || decisions > 0) {
      const rate = secs > 0 ? Math.round(decisions / secs) : 0;
      log(`${decisions} decisions, ${matchesEnded} matches, ${secs.toFixed(2)} s, ${rate}/s`);
    }
    client.close();
    process.exit(code);
  };

  const handlers = {
    decision(req) {
      // With batch_events (our Hello) the events since the last message ride in the request,
      // oldest first: the same Event messages, handled as if each had come alone just before it.
      for (const ev of req.events || []) handlers.event(ev);
      if (finishing) return; // we have half-closed: nothing more can be sent
      // request_id goes back exactly as it came (a decimal string: uint64 exceeds a JS number).
      call.write({ action: { request_id: req.request_id || "0", index: choose(req) } });
      decisions++;
      if (opts.verbose) {
        log(`decision ${req.request_id} in ${req.match_id}: ${req.legal_actions.length} legal`);
      }
    },
    event(ev) {
      if (opts.verbose) log(`event ${ev.match_id} #${ev.seq || 0} ${ev.kind} ${ev.json || ""}`);
    },
    welcome(w) {
      welcomed = true;
      log(`welcome: server ${w.server_version || "?"}, session ${w.session_id || "?"}`);
    },
    rejected(r) {
      exitCode = 3;
      process.stderr.write(`bot: rejected by the server: ${r.reason || "no reason given"}\n`);
    },
    match_start(ms) {
      // Each match gets its own generator, from our seed and the match's bot_seed.
      const mixed = (BigInt(ms.bot_seed || "0") * GOLDEN64) & MASK64;
      matchRngs.set(ms.match_id, new Rng(opts.seed ^ mixed));
      matchSeats.set(ms.match_id, ms.seats || [0]);
      log(`match ${ms.match_id} starts: ${ms.game}, seat(s) ${matchSeats.get(ms.match_id)}`);
    },
    match_end(me) {
      const result = me.result || {};
      const ranks = (matchSeats.get(me.match_id) || []).map((seat) => (result.ranks || [])[seat]);
      matchRngs.delete(me.match_id);
      matchSeats.delete(me.match_id);
      matchesEnded++;
      const faults = (me.faults || []).map((f) => `${f.seat}:${f.kind}`).join(" ") || "none";
      log(
        `match ${me.match_id} ends (${me.reason || "?"}): ${result.summary || ""}; ` +
          `our rank ${ranks.join(",") || "?"}; faults: ${faults}`,
      );
      if (opts.matches > 0 && matchesEnded >= opts.matches && !finishing) {
        finishing = true;
        call.end(); // half-close; the server then ends its side
        setTimeout(() => finish(0), 2000).unref(); // in case it does not
      }
    },
    error(e) {
      const where = e.match_id ? ` (match ${e.match_id}, request ${e.request_id || 0})` : "";
      const code = e.code || "ERROR_CODE_UNSPECIFIED";
      const charged = e.fault ? `fault ${e.fault}, strikes ${e.strikes || 0}` : "warning only";
      log(`server error ${code}: ${e.message || ""}${where}; ${charged}`);
    },
    pong() {},
  };

  call.on("data", (msg) => {
    const handle = handlers[msg.kind];
    if (handle) handle(msg[msg.kind]);
    else if (opts.verbose) log(`ignored message kind ${JSON.stringify(msg.kind)}`); // newer server
  });

  // The call is over once its status has come and, when that is OK, every message before it has
  // been read ('end'); a failed call may end without 'end'.
  let finalStatus = null;
  let readEnded = false;
  const settle = () => {
    if (!finalStatus || (finalStatus.code === grpc.status.OK && !readEnded)) return;
    const { code, details } = finalStatus;
    // As the Python SDK: a cut connection once a match has ended and with none in play is the
    // server gone (a shutdown may cut it before the stream's OK status comes): a normal stop.
    const gone = code === grpc.status.UNAVAILABLE && welcomed && matchesEnded && !matchRngs.size;
    if (exitCode !== null) finish(exitCode);
    else if (code === grpc.status.OK || finishing) finish(0);
    else if (gone) finish(0, `server gone between matches (UNAVAILABLE: ${details})`);
    else if (!welcomed) finish(1, `connection to ${opts.server} failed: ${details}`);
    else finish(1, `stream failed: ${grpc.status[code] || code}: ${details}`);
  };
  call.on("end", () => {
    readEnded = true;
    settle();
  });
  call.on("status", (status) => {
    finalStatus = status;
    settle();
  });
  call.on("error", () => {}); // reported through 'status'

  const stop = (code) => () => {
    finishing = true;
    call.cancel();
    finish(code);
  };
  process.on("SIGTERM", stop(0)); // the arena asks us to stop: not a failure
  process.on("SIGINT", stop(130));

  call.write({
    hello: {
      bot_name: opts.name,
      bot_version: BOT_VERSION,
      token: opts.token,
      protocol_version: PROTOCOL_VERSION,
      games: opts.games,
      max_matches: opts.matches, // 0: no limit; a lobby will not seat us beyond it
      // Lean messages, for speed: events ride inside the next DecisionRequest (req.events), and
      // the observation comes without its text and JSON renderings, which this bot never reads
      // (a bot that parses observation.json must drop omit_json).
      batch_events: true,
      omit_text: true,
      omit_json: true,
    },
  });
}

function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const pkg = loadProto(opts.proto);
  const log = (line) => process.stderr.write(`[${opts.name}] ${line}\n`);
  const client = new pkg.Arena(opts.server, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 * 1024 * 1024, // long match histories
  });
  // The server may still be starting: wait for the channel, within the timeout.
  client.waitForReady(Date.now() + opts.connectTimeout * 1000, (err) => {
    if (err) {
      const secs = opts.connectTimeout;
      process.stderr.write(`bot: cannot connect to ${opts.server} within ${secs} s\n`);
      client.close();
      process.exit(1);
    }
    play(opts, client, log);
  });
}

main();

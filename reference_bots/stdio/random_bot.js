#!/usr/bin/env node
// A random bot over stdio, with Node's standard library only (no npm packages, no gRPC).
//
// The arena starts it with ARENA_TOKEN in its environment; it reads one JSON ServerMessage per
// line on stdin and writes one JSON BotMessage per line on stdout (protobuf's JSON mapping of the
// cardarena.v1 protocol: docs/protocol.md, "stdio"). Its stderr is its log.
"use strict";
const readline = require("node:readline");

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

send({
  hello: {
    botName: "stdio-random-js",
    token: process.env.ARENA_TOKEN,
    protocolVersion: 1,
    omitText: true,
    omitJson: true,
    batchEvents: true,
  },
});

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.decision) {
    const decision = message.decision;
    // requestId is a uint64: the JSON mapping writes it as a string, echoed as it came.
    const index = Math.floor(Math.random() * decision.legalActions.length);
    send({ action: { requestId: decision.requestId, index: index } });
  } else if (message.rejected) {
    console.error("rejected:", JSON.stringify(message.rejected));
  } else if (message.matchEnd) {
    console.error("match over:", message.matchEnd.matchId || "");
  }
});

#!/usr/bin/env python3
"""A random bot over stdio, with Python's standard library only (no SDK, no gRPC).

The arena starts it with ARENA_TOKEN and ARENA_SEED in its environment; it reads one JSON
ServerMessage per line on stdin and writes one JSON BotMessage per line on stdout (protobuf's JSON
mapping of the cardarena.v1 protocol: docs/protocol.md, "stdio"). Its stderr is its log.
"""

import json
import os
import random
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main() -> None:
    rng = random.Random(int(os.environ.get("ARENA_SEED", "0")))
    hello = {"botName": "stdio-random-py", "token": os.environ["ARENA_TOKEN"], "protocolVersion": 1}
    send({"hello": {**hello, "omitText": True, "omitJson": True, "batchEvents": True}})
    for line in sys.stdin:
        message = json.loads(line)
        if "decision" in message:
            decision = message["decision"]
            index = rng.randrange(len(decision["legalActions"]))
            send({"action": {"requestId": decision["requestId"], "index": index}})
        elif "rejected" in message:
            print("rejected:", message["rejected"], file=sys.stderr)
        elif "matchEnd" in message:
            print("match over:", message["matchEnd"].get("matchId", ""), file=sys.stderr)


if __name__ == "__main__":
    main()

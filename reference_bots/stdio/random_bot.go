// A random bot over stdio, with Go's standard library only (no modules, no gRPC).
//
// The arena starts it with ARENA_TOKEN in its environment; it reads one JSON ServerMessage per
// line on stdin and writes one JSON BotMessage per line on stdout (protobuf's JSON mapping of the
// cardarena.v1 protocol: docs/protocol.md, "stdio"). Its stderr is its log.
//
// Build: go build -o random_bot_go random_bot.go (one static binary, nothing else to ship).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
)

// The parts of a ServerMessage this bot reads: encoding/json ignores every other field and kind.
type serverMessage struct {
	MatchStart *struct {
		MatchID string `json:"matchId"`
		BotSeed uint64 `json:"botSeed,string"` // a uint64: the JSON mapping writes it as a string
	} `json:"matchStart"`
	Decision *struct {
		MatchID      string            `json:"matchId"`
		RequestID    json.RawMessage   `json:"requestId"` // echoed exactly as it came
		LegalActions []json.RawMessage `json:"legalActions"`
	} `json:"decision"`
	Rejected *struct {
		Reason string `json:"reason"`
	} `json:"rejected"`
	MatchEnd *struct {
		MatchID string `json:"matchId"`
	} `json:"matchEnd"`
}

type object = map[string]any

func main() {
	out := json.NewEncoder(os.Stdout) // one line per message; os.Stdout is unbuffered
	out.Encode(object{"hello": object{
		"botName": "stdio-random-go", "token": os.Getenv("ARENA_TOKEN"), "protocolVersion": 1,
		"omitText": true, "omitJson": true, "batchEvents": true,
	}})
	rngs := map[string]*rand.Rand{} // one generator per match, seeded from its botSeed
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	for in.Scan() {
		var msg serverMessage
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintln(os.Stderr, "unreadable line:", err)
		} else if start := msg.MatchStart; start != nil {
			rngs[start.MatchID] = rand.New(rand.NewSource(int64(start.BotSeed)))
		} else if d := msg.Decision; d != nil {
			rng := rngs[d.MatchID]
			if rng == nil {
				rng = rand.New(rand.NewSource(0))
				rngs[d.MatchID] = rng
			}
			index := rng.Intn(len(d.LegalActions))
			out.Encode(object{"action": object{"requestId": d.RequestID, "index": index}})
		} else if msg.Rejected != nil {
			fmt.Fprintln(os.Stderr, "rejected:", msg.Rejected.Reason)
			os.Exit(3)
		} else if end := msg.MatchEnd; end != nil {
			fmt.Fprintln(os.Stderr, "match over:", end.MatchID)
			delete(rngs, end.MatchID)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reading stdin:", err)
		os.Exit(1)
	}
}

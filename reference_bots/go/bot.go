// A random Card Arena bot in Go over gRPC, on Debian's grpc-go 1.33 (docs/other-languages.md).
//
// The arena starts it with ARENA_ADDRESS (host:port or unix:PATH) and ARENA_TOKEN. Each decision
// is answered with one of its legal actions, drawn from a generator seeded by the match's
// bot_seed. It exits 0 when the server ends the stream, or when the connection is cut
// (Unavailable) between matches: after one has ended, with none in play, as when the server shuts
// down. It exits 3 when its Hello is rejected, 1 on any other failure.
package main

import (
	"context"
	"io"
	"log"
	"math/rand"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"cardarena/arenapb"
)

func main() {
	log.SetFlags(0) // stderr is the bot's log: one plain line per entry
	conn, err := grpc.Dial(os.Getenv("ARENA_ADDRESS"), grpc.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	stream, err := arenapb.NewArenaClient(conn).Play(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	send := func(msg *arenapb.BotMessage) {
		if err := stream.Send(msg); err != nil && err != io.EOF {
			log.Fatal(err)
		}
	}
	send(&arenapb.BotMessage{Kind: &arenapb.BotMessage_Hello{Hello: &arenapb.Hello{
		BotName: "go-random", BotVersion: "1", Token: os.Getenv("ARENA_TOKEN"),
		ProtocolVersion: 1, BatchEvents: true, OmitText: true, OmitJson: true,
	}}})
	rngs := map[string]*rand.Rand{} // one generator per match in play
	welcomed, ended := false, 0
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return // the server ended the stream: the normal end
		}
		if status.Code(err) == codes.Unavailable && welcomed && ended > 0 && len(rngs) == 0 {
			// Cut with none of our matches in play: the server is gone (a shutdown may cut the
			// connection before the stream's end), a normal stop as for the Python SDK.
			log.Printf("bot: server gone between matches (%v)", err)
			return
		}
		if err != nil {
			log.Fatal(err)
		}
		switch k := msg.Kind.(type) {
		case *arenapb.ServerMessage_Welcome:
			welcomed = true
		case *arenapb.ServerMessage_Rejected:
			log.Println("rejected:", k.Rejected.Reason)
			os.Exit(3)
		case *arenapb.ServerMessage_MatchStart:
			seed := int64(k.MatchStart.BotSeed)
			rngs[k.MatchStart.MatchId] = rand.New(rand.NewSource(seed))
			log.Println("match", k.MatchStart.MatchId, "starts:", k.MatchStart.Game)
		case *arenapb.ServerMessage_Decision:
			d := k.Decision
			rng := rngs[d.MatchId]
			if rng == nil { // no MatchStart seen: still answer
				rng = rand.New(rand.NewSource(0))
				rngs[d.MatchId] = rng
			}
			index := uint32(rng.Intn(len(d.LegalActions)))
			send(&arenapb.BotMessage{Kind: &arenapb.BotMessage_Action{Action: &arenapb.Action{
				RequestId: d.RequestId, Choice: &arenapb.Action_Index{Index: index}}}})
		case *arenapb.ServerMessage_Error:
			log.Println("server error:", k.Error.Message)
		case *arenapb.ServerMessage_MatchEnd:
			delete(rngs, k.MatchEnd.MatchId)
			ended++
			log.Printf("match %s ends (%s)", k.MatchEnd.MatchId, k.MatchEnd.Reason)
		}
	}
}

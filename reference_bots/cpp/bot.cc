// Card Arena reference bot in C++17.
//
// It speaks protocol version 1 (proto/cardarena/v1/arena.proto, compiled by protoc into
// build/gen/) and plays every game without knowing any rules: each DecisionRequest carries the
// legal actions, and the bot answers with the index of one, drawn at random from a generator
// seeded by the seed. It uses gRPC's synchronous API: one thread reads a message and answers it
// before reading the next.
//
// The arena launches it with ARENA_ADDRESS (host:port or unix:PATH), ARENA_TOKEN and ARENA_SEED.
// Exit status: 0 when the server ends the stream normally (or after --matches N matches, or when
// the connection is cut (UNAVAILABLE) between matches: after one has ended, with none in play, as
// when the server shuts down), 1 when the connection fails otherwise, 2 on a usage error, 3 when
// the server rejects the Hello. Every failure is one line on stderr.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "cardarena/v1/arena.grpc.pb.h"

namespace {

namespace pb = cardarena::v1;

constexpr const char* kBotVersion = "1.0.0";
constexpr std::uint32_t kProtocolVersion = 1;
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

constexpr const char* kUsage = R"(usage: cpp-bot [options]

Card Arena reference bot: answers every decision with a random legal action.

options:
  --server ADDR          host:port or unix:PATH (default: $ARENA_ADDRESS)
  --token TOKEN          token sent in Hello (default: $ARENA_TOKEN)
  --seed N               seed of the random choices (default: $ARENA_SEED, else 0)
  --matches N            leave after N matches have ended (default: until the server ends)
  --name NAME            bot name sent in Hello (default: cpp-random)
  --connect-timeout S    seconds to wait for the server to accept the connection (default 10)
  --verbose              log every message received to stderr
  -h, --help             show this help)";

struct Options {
  std::string server;
  std::string token;
  std::uint64_t seed = 0;
  std::uint32_t matches = 0;  // 0: no limit
  std::string name = "cpp-random";
  int connect_timeout_s = 10;
  bool verbose = false;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::cerr << "bot: error: " << message << std::endl;
  std::exit(2);
}

// A whole number in [0, max]; anything else is a usage error naming `what`.
std::uint64_t ParseNumber(const std::string& text, const std::string& what, std::uint64_t max) {
  std::size_t used = 0;
  unsigned long long value = 0;
  bool ok = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (ok) {
    try {
      value = std::stoull(text, &used);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || used != text.size() || value > max) {
    UsageError(what + " must be a whole number from 0 to " + std::to_string(max) + ", not \"" +
               text + "\"");
  }
  return value;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Options from argv; the environment supplies the defaults.
Options ParseOptions(int argc, char** argv) {
  Options opts;
  opts.server = Env("ARENA_ADDRESS");
  opts.token = Env("ARENA_TOKEN");
  std::string seed = Env("ARENA_SEED");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage << std::endl;
      std::exit(0);
    } else if (arg == "--server") {
      opts.server = value();
    } else if (arg == "--token") {
      opts.token = value();
    } else if (arg == "--seed") {
      seed = value();
    } else if (arg == "--matches") {
      opts.matches = static_cast<std::uint32_t>(ParseNumber(value(), "--matches", UINT32_MAX));
    } else if (arg == "--name") {
      opts.name = value();
    } else if (arg == "--connect-timeout") {
      opts.connect_timeout_s = static_cast<int>(ParseNumber(value(), "--connect-timeout", 3600));
      if (opts.connect_timeout_s == 0) UsageError("--connect-timeout must be at least 1");
    } else if (arg == "--verbose") {
      opts.verbose = true;
    } else {
      UsageError("unknown option " + arg + " (see --help)");
    }
  }
  if (opts.server.empty()) UsageError("no server address: pass --server or set ARENA_ADDRESS");
  opts.seed = seed.empty() ? 0 : ParseNumber(seed, "seed", UINT64_MAX);
  return opts;
}

// splitmix64: small, fast, and the same sequence on every platform and standard library
// (std::uniform_int_distribution is not), so the same seeds replay the same match.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += kGolden);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), without modulo bias.
  std::uint32_t Below(std::uint32_t n) {
    if (n <= 1) return 0;
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x;
    do x = Next();
    while (x >= limit);
    return static_cast<std::uint32_t>(x % n);
  }

 private:
  std::uint64_t state_;
};

class Bot {
 public:
  explicit Bot(Options opts) : opts_(std::move(opts)), base_rng_(opts_.seed) {}

  // Connect, play until the stream ends, and return the exit status.
  int Run() {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);  // long match histories
    auto channel =
        grpc::CreateCustomChannel(opts_.server, grpc::InsecureChannelCredentials(), args);
    // The server may still be starting: wait for the channel, within the timeout.
    auto deadline =
        std::chrono::system_clock::now() + std::chrono::seconds(opts_.connect_timeout_s);
    if (!channel->WaitForConnected(deadline)) {
      std::cerr << "bot: cannot connect to " << opts_.server << " within "
                << opts_.connect_timeout_s << " s" << std::endl;
      return 1;
    }
    auto stub = pb::Arena::NewStub(channel);
    grpc::ClientContext context;
    stream_ = stub->Play(&context);
    SendHello();
    pb::ServerMessage msg;
    while (stream_->Read(&msg)) Handle(msg);
    const grpc::Status status = stream_->Finish();
    stream_.reset();  // before the context it was opened with goes
    if (decisions_ > 0 || opts_.verbose) {
      Log(std::to_string(decisions_) + " decisions, " + std::to_string(matches_ended_) +
          " matches");
    }
    if (!rejected_.empty()) {
      std::cerr << "bot: rejected by the server: " << rejected_ << std::endl;
      return 3;
    }
    if (status.ok() || leaving_) return 0;
    if (GoneBetweenMatches(status)) {
      // As the Python SDK: the server went away with nothing of ours in play (a shutdown cut
      // the connection before the stream's OK status came): a normal stop.
      std::cerr << "bot: server gone between matches (code " << status.error_code() << ": "
                << status.error_message() << ")" << std::endl;
      return 0;
    }
    if (!welcomed_) {
      std::cerr << "bot: connection to " << opts_.server << " failed: " << status.error_message()
                << std::endl;
    } else {
      std::cerr << "bot: stream failed: code " << status.error_code() << ": "
                << status.error_message() << std::endl;
    }
    return 1;
  }

 private:
  // A cut connection (UNAVAILABLE) after a Welcome, once a match has ended and none is in play.
  bool GoneBetweenMatches(const grpc::Status& status) const {
    return status.error_code() == grpc::StatusCode::UNAVAILABLE && welcomed_ &&
           matches_ended_ > 0 && rngs_.empty();
  }

  void Log(const std::string& line) const {
    std::cerr << "[" << opts_.name << "] " << line << "\n";
  }

  void SendHello() {
    pb::BotMessage msg;
    pb::Hello* hello = msg.mutable_hello();
    hello->set_bot_name(opts_.name);
    hello->set_bot_version(kBotVersion);
    hello->set_token(opts_.token);
    hello->set_protocol_version(kProtocolVersion);
    hello->set_max_matches(opts_.matches);  // a lobby will not seat us beyond it
    // Lean messages, for speed: events ride inside the next DecisionRequest, and the observation
    // comes without its text and JSON renderings, which this bot never reads.
    hello->set_batch_events(true);
    hello->set_omit_text(true);
    hello->set_omit_json(true);
    stream_->Write(msg);
  }

  void Handle(const pb::ServerMessage& msg) {
    switch (msg.kind_case()) {
      case pb::ServerMessage::kWelcome:
        welcomed_ = true;
        Log("welcome: server " + msg.welcome().server_version() + ", session " +
            msg.welcome().session_id());
        break;
      case pb::ServerMessage::kRejected:
        // The server ends the stream after it; Run reports it once the stream is over.
        rejected_ = msg.rejected().reason().empty() ? "no reason given" : msg.rejected().reason();
        break;
      case pb::ServerMessage::kMatchStart: {
        const pb::MatchStart& start = msg.match_start();
        // Each match gets its own generator, from our seed and the match's bot_seed, so matches
        // played at the same time on one connection stay reproducible.
        rngs_.insert_or_assign(start.match_id(), Rng(opts_.seed ^ (start.bot_seed() * kGolden)));
        Log("match " + start.match_id() + " starts: " + start.game());
        break;
      }
      case pb::ServerMessage::kDecision:
        Decide(msg.decision());
        break;
      case pb::ServerMessage::kEvent:
        OnEvent(msg.event());
        break;
      case pb::ServerMessage::kMatchEnd:
        OnMatchEnd(msg.match_end());
        break;
      case pb::ServerMessage::kError: {
        const pb::Error& e = msg.error();
        const std::string charged = e.fault().empty()
                                        ? "warning only"
                                        : "fault " + e.fault() + ", strikes " +
                                              std::to_string(e.strikes());
        Log("server error " + pb::ErrorCode_Name(e.code()) + ": " + e.message() + "; " + charged);
        break;
      }
      default:  // Pong, or a kind newer than our copy of the .proto: nothing to do
        break;
    }
  }

  void OnEvent(const pb::Event& event) const {
    if (opts_.verbose) {
      Log("event " + event.match_id() + " #" + std::to_string(event.seq()) + " " + event.kind());
    }
  }

  void Decide(const pb::DecisionRequest& request) {
    // With batch_events (our Hello) the events since the last message ride in the request,
    // oldest first: each is handled as if it had come alone just before it.
    for (const pb::Event& event : request.events()) OnEvent(event);
    if (leaving_) return;  // half-closed: nothing more can be sent
    auto found = rngs_.find(request.match_id());
    Rng& rng = found == rngs_.end() ? base_rng_ : found->second;
    // legal_actions is never empty; any index into it is a legal answer.
    const auto legal = static_cast<std::uint32_t>(request.legal_actions_size());
    pb::BotMessage answer;
    answer.mutable_action()->set_request_id(request.request_id());
    answer.mutable_action()->set_index(rng.Below(legal));
    stream_->Write(answer);  // a failed write ends the stream: Read then returns false
    ++decisions_;
    if (opts_.verbose) {
      Log("decision " + std::to_string(request.request_id()) + ": " + std::to_string(legal) +
          " legal");
    }
  }

  void OnMatchEnd(const pb::MatchEnd& end) {
    rngs_.erase(end.match_id());
    ++matches_ended_;
    std::string faults;
    for (const pb::Fault& f : end.faults()) {
      faults += " " + std::to_string(f.seat()) + ":" + f.kind();
    }
    Log("match " + end.match_id() + " ends (" + end.reason() + "): " + end.result().summary() +
        "; faults:" + (faults.empty() ? " none" : faults));
    if (opts_.matches > 0 && matches_ended_ >= opts_.matches && !leaving_) {
      // Half-close: we leave, and the server ends its side of the stream (status OK).
      leaving_ = true;
      stream_->WritesDone();
    }
  }

  Options opts_;
  Rng base_rng_;
  std::map<std::string, Rng> rngs_;  // match_id -> its generator, for the matches in play
  std::unique_ptr<grpc::ClientReaderWriter<pb::BotMessage, pb::ServerMessage>> stream_;
  std::string rejected_;
  bool welcomed_ = false;
  bool leaving_ = false;
  std::uint64_t decisions_ = 0;
  std::uint32_t matches_ended_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options opts = ParseOptions(argc, argv);
  return Bot(std::move(opts)).Run();
}

# Card Arena: `make demo` runs the main job, `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: node-bot demo test lint typecheck pytest venv clean proto rules sandbox-tools wheels test-docker \
  bytecode cpp-bot proto-tools web browser screenshots playthroughs text-views test-cluster test-browser test-sandbox \
  test-host test-agents go-bot test-languages go-grpc-tools

# arena/protocol/_wire.c and engine/solver/_native.c are compiled by the install: an edit to
# either reinstalls. The Python SDK
# (sdk/python, `cardarena`) and the engine (engine/, `cardarena-engine`) are distributions of
# their own, which the arena depends on.
$(STAMP): pyproject.toml sdk/python/pyproject.toml engine/pyproject.toml arena/protocol/_wire.c \
  engine/setup.py engine/solver/_native.c
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./engine -e ./sdk/python -e '.[dev,rl,cluster]'
	@touch $(STAMP)

venv: $(STAMP)

# Bytecode for the project's own modules. Every bot process of a tournament imports them afresh,
# and where PYTHONDONTWRITEBYTECODE is set (as on our machines) Python would compile them from
# source in each: about a sixth of a bot's start-up. Only stale files are recompiled.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q -j 0 arena engine reference_bots

demo: $(STAMP) sandbox-tools node-bot bytecode web
	$(BIN)/arena demo

# The Node.js reference bot's two packages, so the demo shows a bot in another language.
node-bot:
	@if command -v npm >/dev/null 2>&1 && [ ! -d reference_bots/js/node_modules ]; then \
	  (cd reference_bots/js && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
	    || echo "warning: npm ci failed in reference_bots/js: the demo runs without the Node bot"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check engine arena sdk/python reference_bots tests benchmarks scripts fuzz
	$(BIN)/ruff format --check engine arena sdk/python reference_bots tests benchmarks scripts fuzz

typecheck: $(STAMP)
	$(BIN)/mypy --strict engine arena sdk/python/cardarena

pytest: $(STAMP) sandbox-tools bytecode cpp-bot go-bot proto-tools web
	$(BIN)/pytest -m 'not cluster and not browser and not sandbox and not host and not languages and not agents' --durations=30

# The heavy suites on their own, so that `make test` stays short; .ci/run runs them after it:
# the sandbox suite (tests/arena/bots: real bots boxed, flooding, killed with their arena),
# the Dask suite (tests/cluster: real schedulers and workers, killed and restarted), the
# browser suite (tests/web: the pages and the replay viewer in Debian's Chromium) and the host
# suite (a real competition host for minutes: seasons by the clock, events and kill -9, a backup
# mid-ladder, a restart's grace, a descriptor attack); the other-languages suite (test-languages,
# below) too, and the agents suite (language-model agents end to end: `arena mcp` under the real
# mcp client, `arena bot llm` against a local OpenAI-compatible server, in real matches).
test-agents: $(STAMP) bytecode
	$(BIN)/pytest -m agents --durations=10

test-host: $(STAMP) sandbox-tools bytecode cpp-bot go-bot proto-tools web
	$(BIN)/pytest -m host --durations=10

test-cluster: $(STAMP) sandbox-tools bytecode
	$(BIN)/pytest -m cluster

test-sandbox: $(STAMP) sandbox-tools bytecode
	$(BIN)/pytest -m sandbox

test-browser: $(STAMP) sandbox-tools bytecode web browser
	$(BIN)/pytest -m browser

# The competition pages' script (web/src) bundled with its chart library (web/package-lock.json)
# into arena/web/static/pages.js, which arena host serves; rebuilt when a source is newer.
WEB_BUNDLE := arena/web/static/pages.js
web: $(WEB_BUNDLE)
$(WEB_BUNDLE): web/package-lock.json web/build.mjs $(wildcard web/src/*.js)
	@command -v npm >/dev/null 2>&1 || { echo "make web: needs Node.js and npm (the pages' bundle)"; exit 1; }
	@[ web/node_modules/.package-lock.json -nt web/package-lock.json ] \
	  || (cd web && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cd web && node build.mjs

# The screenshots in docs/ (docs/hosting.md, docs/records.md), as the browser tests write them.
SHOTS := leaderboard bot match author admin matches bots live viewer-whist viewer-tennis-singles \
  viewer-spoil_five seasons season events event-knockout event-swiss play-whist watch-whist play-tennis-doubles \
  viewer-analysis match-analysis challenge challenge-list live-match
screenshots: $(STAMP) web browser bytecode sandbox-tools
	$(BIN)/pytest -q tests/web
	@mkdir -p docs/images
	@for s in $(SHOTS); do cp out/screenshots/$$s.png docs/images/$$s.png; done
	@echo "docs/images: $(SHOTS)"

# The browser tests (tests/web) drive Debian's Chromium through Playwright; as root, install it
# when it is missing (Playwright's own browser download is never used).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (the browser tests)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq chromium >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; \
	  else \
	    echo "warning: chromium is missing: the browser tests (tests/web) will fail"; \
	  fi; \
	fi

# Bots run boxed by bubblewrap (arena/bots/sandbox.py); as root, install it when it is missing.
sandbox-tools:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (the bot sandbox)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; }; \
	  else \
	    echo "warning: bubblewrap (bwrap) is missing: bots cannot be sandboxed"; \
	  fi; \
	fi

# The C++ reference bot (reference_bots/cpp): as root, install Debian's gRPC C++ toolchain when it
# is missing, then build (reference_bots/cpp/Makefile rebuilds only what its sources or the .proto
# changed). Without it, a warning here and tests/reference_bots/test_cpp_bot.py fails saying why.
CPP_BOT_DEBS := g++ make pkg-config libgrpc++-dev protobuf-compiler-grpc
cpp-bot:
	@if ! { command -v g++ && command -v grpc_cpp_plugin && command -v protoc \
	        && pkg-config --exists grpc++ protobuf; } >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(CPP_BOT_DEBS) (the C++ reference bot)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq $(CPP_BOT_DEBS) >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq $(CPP_BOT_DEBS) >/dev/null; } \
	      || echo "warning: apt-get could not install $(CPP_BOT_DEBS)"; \
	  fi; \
	fi
	@if pkg-config --exists grpc++ protobuf 2>/dev/null \
	    && command -v grpc_cpp_plugin >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory -s -C reference_bots/cpp; \
	else \
	  echo "warning: the C++ reference bot cannot be built (needs $(CPP_BOT_DEBS); run make as root to install them)"; \
	fi

# The Go stdio reference bot (reference_bots/stdio/random_bot.go, standard library only): as root,
# install Debian's Go when it is missing, then build it (again only when its source changed), with
# the build's cache under build/ so that it works as any user and offline. Without Go, a warning
# here and the Go stdio tests (tests/go_bot.py) fail saying why.
GO_BOT := reference_bots/stdio/build/random_bot_go
go-bot:
	@if ! command -v go >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing golang-go (the Go stdio reference bot)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq golang-go >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq golang-go >/dev/null; } \
	      || echo "warning: apt-get could not install golang-go"; \
	  fi; \
	fi
	@if command -v go >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory -s $(GO_BOT); \
	else \
	  echo "warning: the Go stdio reference bot cannot be built (needs golang-go; run make as root to install it)"; \
	fi
$(GO_BOT): reference_bots/stdio/random_bot.go
	@mkdir -p $(@D)
	cd $(<D) && CGO_ENABLED=0 GO111MODULE=off GOCACHE=$(CURDIR)/$(@D)/go-cache \
	  GOPATH=$(CURDIR)/$(@D)/go-path go build -o build/random_bot_go random_bot.go

# The gRPC bots in other languages that need big toolchains (docs/other-languages.md, tests marked
# languages): today Go on Debian's grpc-go, about 600 MB with Go itself. As root, install the
# packages when they are missing; the tests build the bot from the page's own commands.
GO_GRPC_DEBS := golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev \
  protoc-gen-go protoc-gen-go-grpc protobuf-compiler
go-grpc-tools:
	@if ! dpkg -s $(GO_GRPC_DEBS) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(GO_GRPC_DEBS) (the Go gRPC bot)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq $(GO_GRPC_DEBS) >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq $(GO_GRPC_DEBS) >/dev/null; } \
	      || echo "warning: apt-get could not install $(GO_GRPC_DEBS)"; \
	  else \
	    echo "warning: the Go gRPC bot needs $(GO_GRPC_DEBS): its tests will fail"; \
	  fi; \
	fi

test-languages: $(STAMP) bytecode go-grpc-tools
	$(BIN)/pytest -m languages --durations=10

# buf (proto/tools, the npm package @bufbuild/buf at its locked version): the .proto's lint and its
# breaking-change check against the last release's copy (tests/arena/protocol/test_proto_checks.py).
proto-tools:
	@if command -v npm >/dev/null 2>&1; then \
	  [ proto/tools/node_modules/.package-lock.json -nt proto/tools/package-lock.json ] \
	    || (cd proto/tools && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
	    || echo "warning: npm ci failed in proto/tools: the .proto checks will fail"; \
	else \
	  echo "warning: npm is missing: the .proto checks (buf) will fail"; \
	fi

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
	find arena engine reference_bots -name __pycache__ -type d -prune -exec rm -rf {} +

# Regenerate sdk/python/cardarena/_pb (messages, gRPC stubs, typed .pyi) from proto/cardarena/v1/arena.proto.
proto: $(STAMP)
	$(BIN)/python scripts/gen_proto.py

# The referee's law, copied from ../shared/rules/ into docs/rules/law/ (tests/engine/test_rules_law.py).
rules:
	python3 scripts/sync_rules.py

# The golden playthroughs, tests/engine/playthroughs/*.txt (tests/engine/test_playthroughs.py):
# rewritten only for a change of rules or of what the engine shows.
playthroughs: $(STAMP)
	$(BIN)/python scripts/playthroughs.py

# The golden text views, tests/engine/text/*.txt (tests/engine/test_text.py): a changed rendering
# is refused until engine/text/words.py's REVISION (so TEXT_VERSION) changes with it.
text-views: $(STAMP)
	$(BIN)/python scripts/text_views.py

# Wheels of the arena and its dependencies (pip's configured index) for the Docker image.
wheels: $(STAMP) web
	rm -rf build
	$(BIN)/pip wheel --quiet ./engine ./sdk/python '.[cluster]' -w build/wheels

# The Docker path for real, on a private Docker engine (needs root): docker/test-docker.sh.
test-docker: wheels
	docker/test-docker.sh

# Speed figures beside same-run references (benchmarks/, docs/performance.md): prints a table
# and writes out/bench/latest.json. The references and profilers are installed into the venv
# for the benchmark only (never project dependencies): OpenSpiel, pyinstrument, py-spy.
# The reference bots' ladder (docs/ladder.md): a tournament per game, resumed when rerun.
.PHONY: ladder
ladder: $(STAMP) bytecode sandbox-tools
	$(BIN)/python scripts/ladder.py --run

.PHONY: bench
bench: $(STAMP) bytecode
	@$(BIN)/python -c "import pyspiel" 2>/dev/null || $(BIN)/python -m pip install --quiet open-spiel \
	  || echo "warning: open-spiel did not install: the engine section runs without its reference"
	@$(BIN)/python -c "import pyinstrument" 2>/dev/null || $(BIN)/python -m pip install --quiet pyinstrument \
	  || echo "warning: pyinstrument did not install: no engine and ratings profiles"
	@test -x $(BIN)/py-spy || $(BIN)/python -m pip install --quiet py-spy \
	  || echo "warning: py-spy did not install: no arena profiles"
	$(BIN)/python -m benchmarks

# Fuzzing of the C reader of bots' bytes (arena/protocol/_wire.c) against the Python path, with
# atheris under AddressSanitizer and UBSan, for FUZZ_TIME seconds in one process (fuzz/,
# docs/fuzzing.md); exits non-zero on a finding. out/fuzz/ keeps the instrumented build, the
# corpus, the findings and the log. atheris goes into the venv for the fuzzer only (never a
# project dependency); clang builds the instrumented module, installed by apt-get as root.
FUZZ_TIME ?= 60
FUZZ_CC ?= clang
.PHONY: fuzz
fuzz: $(STAMP)
	@$(BIN)/python -c "import atheris" 2>/dev/null || $(BIN)/python -m pip install --quiet atheris \
	  || { echo "error: atheris did not install: make fuzz needs it"; exit 1; }
	@if ! command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	  if [ "$(FUZZ_CC)" = clang ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing clang (the fuzzer's instrumented build of arena/protocol/_wire.c)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq clang >/dev/null 2>&1 \
	      || { apt-get update -qq && apt-get install -y -qq clang >/dev/null; }; \
	  else \
	    echo "error: make fuzz needs clang (libFuzzer coverage, -fsanitize=fuzzer-no-link): apt-get install clang"; \
	    exit 1; \
	  fi; \
	fi
	FUZZ_CC=$(FUZZ_CC) $(BIN)/python fuzz/run.py --time $(FUZZ_TIME)

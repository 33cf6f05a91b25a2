#!/usr/bin/env bash
# `make test-docker`: the Docker path for real, on a private Docker engine.
#
#  1. installs docker.io and debootstrap from Debian if missing;
#  2. starts its own dockerd (no bridge network, no firewall changes, its own data root, exec
#     root, pidfile and socket; log in $run/dockerd.log) and stops it at the end, even on failure;
#  3. builds the minimal Debian base (docker/build-base.sh) and the arena image on it;
#     The image also hosts a competition (arena host) whose ladder plays two submitted bots;
#  4. runs the arena image with --network none and its state directory bind-mounted from the
#     host: the image's HEALTHCHECK turns healthy, `arena health` answers inside and, through the
#     Unix socket in the state directory, outside; four host bots play a lobby match through it;
#  5. plays a match with one bot in a container through the Docker SDK (arena/bots/docker.py),
#     and a tournament with a bot registered as an image (arena submit --image), and checks the
#     lockdown of a bot container (no network, read-only root, no capabilities, limits);
#  6. hosts a competition that takes images: a `docker save` tarball submitted over HTTP,
#     validated in a container and played on the ladder, its tag not restored on the engine;
#  7. brings deploy/compose.yaml's stack up (the host, a Dask scheduler, two workers), submits
#     two bots over HTTP and checks that the ladder's matches finish, played by the workers;
#     takes the stack down, even on failure.
#
# Needs root. The engine's data root (/var/lib/cardarena-test-docker) is kept between runs with
# the base image only, so that is built once; delete the directory to start from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
arena=$PWD/.venv/bin/arena
python=$PWD/.venv/bin/python
run=/tmp/cardarena-dockerd
data_root=/var/lib/cardarena-test-docker
base_tag=cardarena-base:bookworm
image=card-arena:test
bot_image=card-arena-bot:test
server=cardarena-test-server

say() { echo "test-docker: $*"; }
fail() { echo "test-docker: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (it starts its own dockerd)"

# --- 1. tools ------------------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
# Debian's docker-compose (1.29) for deploy/compose.yaml; it talks to $DOCKER_HOST as the CLI does.
command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- 2. a private engine -------------------------------------------------------------------------
mkdir -p "$run" "$data_root"
if [ -f "$run/dockerd.pid" ] && kill -0 "$(cat "$run/dockerd.pid")" 2>/dev/null; then
  say "stopping the engine a previous run left behind"
  kill "$(cat "$run/dockerd.pid")"
  for _ in $(seq 50); do kill -0 "$(cat "$run/dockerd.pid")" 2>/dev/null || break; sleep 0.2; done
fi
rm -f "$run/docker.sock" "$run/dockerd.pid"
export DOCKER_HOST="unix://$run/docker.sock"
# The legacy builder: Debian's engine and CLI need no buildx plugin for it.
export DOCKER_BUILDKIT=0
state=$(mktemp -d /tmp/cardarena-state.XXXXXX)
work=$(mktemp -d /tmp/cardarena-docker-test.XXXXXX)
dockerd_pid=""
# deploy/compose.yaml's stack, on the image built below, on ports free here (step 7).
compose_up=""
compose() {
  ARENA_IMAGE="$image" ARENA_CONFIG="$work/compose.toml" ARENA_HTTP="127.0.0.1:$compose_http" \
    ARENA_GRPC="127.0.0.1:$compose_grpc" DASK_PORT="$compose_dask" \
    docker-compose --ansi never -p cardarena-test -f deploy/compose.yaml "$@"
}

cleanup() {
  local status=$?
  set +e
  if [ -n "$compose_up" ]; then
    [ "$status" != 0 ] && compose logs --no-color --tail 30 >&2
    compose down -v --remove-orphans >/dev/null 2>&1
  fi
  if [ -n "$dockerd_pid" ]; then
    docker rm -f "$server" >/dev/null 2>&1
    ids=$(docker ps -aq --filter label=card-arena.bot 2>/dev/null)
    [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1
    # Keep only the base image in the engine's data root (it is what takes a minute to build).
    docker rmi -f "$bot_image" "$image" >/dev/null 2>&1
    stored=$(docker images -q cardarena/version 2>/dev/null | sort -u)
    [ -n "$stored" ] && docker rmi -f $stored >/dev/null 2>&1
    docker image prune -f >/dev/null 2>&1
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$dockerd_pid" 2>/dev/null
    wait "$dockerd_pid" 2>/dev/null
    say "engine stopped"
  fi
  rm -rf "$state" "$work"
  if [ "$status" != 0 ] && [ -f "$run/dockerd.log" ]; then
    echo "--- last lines of $run/dockerd.log ---" >&2
    tail -15 "$run/dockerd.log" >&2
  fi
  exit "$status"
}
trap cleanup EXIT

say "starting dockerd (log: $run/dockerd.log)"
dockerd --bridge=none --iptables=false --ip-masq=false --ip6tables=false \
  --data-root "$data_root" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
  --host "$DOCKER_HOST" >"$run/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 120); do
  docker version >/dev/null 2>&1 && break
  kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited"
  sleep 0.5
done
docker version >/dev/null 2>&1 || fail "dockerd did not answer within 60 s"
say "engine $(docker version --format '{{.Server.Version}}') up"

# --- 3. images -----------------------------------------------------------------------------------
docker/build-base.sh "$base_tag"
# The arena's wheel and the engine's (a distribution of its own since the arena depends on it).
{ [ -n "$(ls build/wheels/card_arena-*.whl 2>/dev/null)" ] \
  && [ -n "$(ls build/wheels/cardarena_engine-*.whl 2>/dev/null)" ]; } || make --no-print-directory wheels
say "building $image on $base_tag"
# The build's own chatter (the legacy builder's deprecation notice) only shows on failure.
docker build -q --build-arg BASE_IMAGE="$base_tag" -t "$image" . >/dev/null 2>"$work/build.err" \
  || { cat "$work/build.err" >&2; fail "docker build of $image"; }
printf 'FROM %s\nCMD ["arena", "bot", "random"]\n' "$image" \
  | docker build -q -t "$bot_image" - >/dev/null 2>"$work/build.err" \
  || { cat "$work/build.err" >&2; fail "docker build of $bot_image"; }
uid=$(docker run --rm --network none "$image" id -u)
[ "$uid" = 10001 ] || fail "the image runs as uid $uid, not the unprivileged 10001"
# The wheel built on the host carries the C encoder (arena/protocol/_wire.c); the image's Python
# loads it.
accel=$(docker run --rm --network none "$image" python3 -c \
  "from arena.protocol import wireformat; print(wireformat.accelerated())")
[ "$accel" = True ] || fail "the image's arena runs without its C encoder ($accel)"
# A whole tournament inside the image (bots as plain processes: the image has no bubblewrap),
# down to the rating fit (numpy, scipy).
docker run --rm --network none "$image" arena tournament --game tennis --option sets_to_win=1 \
  --bot random --bot rules --matches 2 --no-sandbox --out /tmp/t --quiet >"$work/inside.txt" \
  || fail "a tournament inside the image failed"
grep -q "rules" "$work/inside.txt" || fail "the tournament inside the image printed no table"
# A cluster inside the image: its Dask scheduler, an `arena worker` and a tournament sent to it
# (plain processes again; the tournament waits for the worker's slot, however late it joins).
cat >"$work/cluster.sh" <<'SCRIPT'
set -eu
cd /tmp
dask scheduler --host 127.0.0.1 --port 8786 --no-dashboard >/tmp/scheduler.log 2>&1 &
arena worker --scheduler tcp://127.0.0.1:8786 --no-sandbox --slots 1 --dir /tmp/w >/tmp/w.log 2>&1 &
arena tournament --game tennis --option sets_to_win=1 --bot random --bot rules --matches 2 \
  --no-sandbox --out /tmp/c --quiet --dask tcp://127.0.0.1:8786
SCRIPT
docker run --rm --network none -v "$work/cluster.sh:/tmp/cluster.sh:ro" "$image" \
  sh /tmp/cluster.sh >"$work/cluster.txt" 2>&1 \
  || { cat "$work/cluster.txt" >&2; fail "a tournament on a cluster inside the image failed"; }
grep -q "rules" "$work/cluster.txt" || fail "the cluster's tournament in the image printed no table"
# A competition inside the image: `arena host` (its HTTP API on loopback), an author added, two
# bots submitted with `arena remote`, validated and played on the ladder (bots as plain
# processes: the container is their box here).
cat >"$work/host.sh" <<'SCRIPT'
set -eu
cd /tmp
printf 'name = "cup"\ngame = "whist"\n[options]\npoints_to_win = 1\ngames_per_rubber = 1\n' > cup.toml
arena host cup.toml --no-sandbox --http 127.0.0.1:8080 --grpc 127.0.0.1:50061 --log-level error &
for i in $(seq 100); do [ -f cup/private/host.json ] && break; sleep 0.2; done
token=$(arena host add-author cup.toml alice --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
for b in one two; do
  mkdir -p "$b" && printf 'command = "python3 bot.py"\n' > "$b/cardarena.toml"
  printf 'from cardarena import RandomBot, run_bot\nrun_bot(RandomBot())\n# %s\n' "$b" > "$b/bot.py"
  arena remote submit "$b" "$b" --server http://127.0.0.1:8080 --token "$token" >/dev/null
done
for i in $(seq 300); do
  played=$(arena remote status --json --server http://127.0.0.1:8080 | python3 -c 'import json,sys; print(json.load(sys.stdin)["matches_played"])')
  [ "$played" -gt 2 ] && { echo "ladder matches: $played"; exit 0; }
  sleep 0.2
done
exit 1
SCRIPT
docker run --rm --network none -v "$work/host.sh:/tmp/host.sh:ro" "$image" sh /tmp/host.sh \
  >"$work/host.txt" 2>&1 || { cat "$work/host.txt" >&2; fail "arena host inside the image"; }
grep -q "ladder matches" "$work/host.txt" || fail "arena host inside the image played no match"
say "a competition inside the image: two submitted bots validated and on the ladder ($(cat "$work/host.txt"))"
size=$(docker image inspect --format '{{.Size}}' "$image" | numfmt --to=iec)
say "images built: $image is $size and runs as uid $uid"

# --- 4. the arena image, with no network, state on the host ---------------------------------------
chown 10001:10001 "$state"
docker run -d --name "$server" --network none -v "$state:/data" "$image" >/dev/null
for _ in $(seq 60); do
  docker exec "$server" arena health --server 127.0.0.1:50051 >/dev/null 2>&1 && break
  sleep 0.5
done
say "inside: $(docker exec "$server" arena health --server 127.0.0.1:50051)" \
  || fail "arena health fails inside the container"
[ -S "$state/arena.sock" ] || fail "no Unix socket in the state directory"
say "outside: $("$arena" health --server "unix:$state/arena.sock")"
pids=()
for _ in 1 2 3 4; do
  "$arena" bot random --server "unix:$state/arena.sock" --matches 1 --give-up 5 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a host bot failed against the served arena"; done
ls "$state"/records/*.jsonl.gz >/dev/null 2>&1 || fail "the served match left no record"
say "four host bots played a match through the socket; record in the state directory"
for _ in $(seq 40); do
  health=$(docker inspect --format '{{.State.Health.Status}}' "$server")
  [ "$health" = healthy ] && break
  sleep 1
done
[ "$health" = healthy ] || fail "HEALTHCHECK status is $health"
say "HEALTHCHECK: $health"
# docker stop sends the image's STOPSIGNAL (SIGINT): the server shuts down at once, exiting
# with the CLI's status for an interrupt (130), not killed after the grace period (137).
started=$(date +%s)
docker stop -t 20 "$server" >/dev/null
code=$(docker inspect --format '{{.State.ExitCode}}' "$server")
took=$(( $(date +%s) - started ))
[ "$code" = 130 ] && [ "$took" -lt 10 ] \
  || fail "docker stop: exit $code after $took s (want 130, promptly)"
docker logs "$server" 2>&1 | grep -q Traceback && fail "the server's log has a traceback"
say "docker stop: the server shut down in $took s"

# --- 5. bots as images through the Docker SDK ------------------------------------------------------
out=$("$arena" match tennis --option sets_to_win=1 --out "$work/match" \
  --bot "image:$image arena bot random" --bot "arena bot random")
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q '^faults:' && fail "the match with a containerised bot had faults"
[ -z "$(docker ps -aq --filter label=card-arena.bot)" ] || fail "bot containers were left behind"
say "match with a containerised bot: no faults, container removed"

# kill -9 of the arena mid-match: its reaper removes the run's bot containers.
"$arena" match tennis --option sets_to_win=1 --move-ms 60000 --out "$work/killed" \
  --bot "image:$image sleep 120" --bot "image:$image sleep 120" >/dev/null 2>&1 &
match_pid=$!
for _ in $(seq 150); do
  [ "$(docker ps -q --filter label=card-arena.bot | wc -l)" -ge 2 ] && break; sleep 0.2
done
[ "$(docker ps -q --filter label=card-arena.bot | wc -l)" -ge 2 ] || fail "the bot containers did not start"
kill -9 "$match_pid"; wait "$match_pid" 2>/dev/null || true
for _ in $(seq 100); do [ -z "$(docker ps -aq --filter label=card-arena.bot)" ] && break; sleep 0.2; done
[ -z "$(docker ps -aq --filter label=card-arena.bot)" ] || fail "kill -9 of the arena left bot containers"
say "kill -9 of the arena mid-match: its reaper removed the bot containers"

home="$work/home"
"$arena" submit dock --version 1 --image "$bot_image" --home "$home" >/dev/null
"$arena" tournament --game tennis --option sets_to_win=1 --matches 2 --bot dock --bot random \
  --home "$home" --out "$work/tournament" --quiet --json >"$work/standings.json"
"$python" - "$work/standings.json" <<'EOF'
import json, sys
standings = json.load(open(sys.argv[1]))
assert standings["matches_done"] == 2, standings
assert {r["bot"] for r in standings["ratings"]["ratings"]} == {"dock@1", "random"}, standings
assert standings["faults"] == {}, standings["faults"]
EOF
say "tournament with the registered image bot dock@1: 2 matches, no faults"

"$python" - "$image" <<'EOF'
import sys, tempfile
from pathlib import Path

import trio

from arena.bots.docker import docker_client, launch_container
from arena.bots.sandbox import Limits, prepare_socket_dir


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        prepare_socket_dir(Path(tmp))
        env = {"ARENA_ADDRESS": f"unix:{tmp}/arena.sock", "ARENA_TOKEN": "t", "ARENA_SEED": "1"}
        bot = await launch_container(
            sys.argv[1], env, Path(tmp) / "log", Path(tmp), Limits(), "sleep 30"
        )
        client = docker_client()
        attrs = client.containers.get(bot._container.id).attrs
        host, config = attrs["HostConfig"], attrs["Config"]
        checks = {
            "no network": host["NetworkMode"] == "none",
            "read-only root": host["ReadonlyRootfs"] is True,
            "no capabilities": host["CapDrop"] == ["ALL"],
            "no new privileges": "no-new-privileges" in host["SecurityOpt"],
            "uid nobody": config["User"] == "65534:65534",
            "memory limit": host["Memory"] == 1024 * 1024 * 1024,
            "pids limit": host["PidsLimit"] == 64,
            "socket dir read-only": any(
                m["Destination"] == "/arena" and not m["RW"] for m in attrs["Mounts"]
            ),
            "environment": "ARENA_ADDRESS=unix:/arena/arena.sock" in config["Env"],
        }
        await bot.stop()
        gone = not client.containers.list(all=True, filters={"id": bot._container.id})
        checks["removed at the end"] = gone
        client.close()
        bad = [name for name, ok in checks.items() if not ok]
        assert not bad, f"bot container lockdown: {bad}"
        print("test-docker: bot container: " + ", ".join(checks))


trio.run(main)
EOF

# --- 6. a competition that takes images: a docker save tarball submitted over HTTP ---------------
# The host (on this machine, its engine the private one) checks the tarball, keeps it under its
# image id without its tags, loads it, validates it in a container and plays it on the ladder.
docker save "$bot_image" -o "$work/bot-image.tar"
bot_id=$(docker image inspect --format '{{.Id}}' "$bot_image")
docker rmi "$bot_image" >/dev/null  # the upload must not bring this tag back
cat >"$work/images.toml" <<'TOML'
game = "tennis"
[options]
sets_to_win = 1
[submissions]
allow_images = true
max_upload_mib = 2048
max_unpacked_mib = 2048
TOML
mkdir -p "$work/plain"
printf 'command = "python3 bot.py"\n' >"$work/plain/cardarena.toml"
printf 'from cardarena import RandomBot, run_bot\nrun_bot(RandomBot())\n' >"$work/plain/bot.py"
PATH="$PWD/.venv/bin:$PATH" "$arena" host "$work/images.toml" --dir "$work/images" --no-sandbox \
  --http 127.0.0.1:0 --grpc 127.0.0.1:0 --log-level warning >"$work/images-host.log" 2>&1 &
host_pid=$!
for _ in $(seq 100); do [ -f "$work/images/private/host.json" ] && break; sleep 0.2; done
[ -f "$work/images/private/host.json" ] \
  || { cat "$work/images-host.log" >&2; fail "arena host (images) did not start"; }
url=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["http"])' \
  "$work/images/private/host.json")
token=$("$arena" host add-author "$work/images.toml" --dir "$work/images" alice --json \
  | "$python" -c 'import json,sys; print(json.load(sys.stdin)["token"])')
"$arena" remote submit imaged "$work/bot-image.tar" --server "$url" --token "$token" \
  >"$work/submit.txt" 2>&1 \
  || { cat "$work/submit.txt" "$work/images-host.log" >&2; fail "the image tarball was refused"; }
"$arena" remote submit plain "$work/plain" --server "$url" --token "$token" >/dev/null
grep -q "sha256: ${bot_id#sha256:}" "$work/submit.txt" \
  || { cat "$work/submit.txt" >&2; fail "the version is not named by its image id ($bot_id)"; }
docker image inspect "$bot_image" >/dev/null 2>&1 \
  && fail "the upload put its tag $bot_image back on the engine"
docker image inspect "cardarena/version:${bot_id#sha256:}" >/dev/null \
  || fail "the stored image is not tagged cardarena/version"
"$python" - "$url" "$token" "$work/images-host.log" <<'EOF'
import json, sys, time, urllib.request

url, token, log = sys.argv[1:]


def get(path):
    headers = {"Authorization": f"Bearer {token}"}
    return json.load(urllib.request.urlopen(urllib.request.Request(url + "/api/v1" + path, headers=headers)))


deadline = time.monotonic() + 240
while time.monotonic() < deadline:
    versions = {v["ref"]: v for b in get("/me")["bots"] for v in b["versions"]}
    if any(v["status"] == "failed" for v in versions.values()):
        sys.exit(f"a version failed validation: {versions}\n" + open(log).read())
    matches = get("/matches?phase=ladder")
    if len(matches) >= 2 and all(v["status"] == "validated" for v in versions.values()):
        break
    time.sleep(0.5)
else:
    sys.exit(f"no ladder matches within 240 s: {versions}\n" + open(log).read())
assert versions["imaged@1"]["kind"] == "image", versions
faults = [f for m in matches for f in m["faults"]]
assert not faults, faults
print(f"test-docker: image version imaged@1 validated in a container; {len(matches)} ladder matches, no faults")
EOF
kill -TERM "$host_pid"
wait "$host_pid" || fail "arena host did not stop cleanly on SIGTERM"
for _ in $(seq 50); do [ -z "$(docker ps -aq --filter label=card-arena.bot)" ] && break; sleep 0.2; done
[ -z "$(docker ps -aq --filter label=card-arena.bot)" ] || fail "the host left bot containers behind"
grep -q Traceback "$work/images-host.log" && fail "the host's log has a traceback"
say "a competition took a docker save tarball: stored by its image id, its tag not restored"

# --- 7. deploy/compose.yaml: the host, a Dask scheduler and two workers ---------------------------
# Its services use the machine's network (this engine has no bridge): free ports here, and the
# deploy config with them and one-deal matches.
free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
compose_http=$(free_port); compose_grpc=$(free_port); compose_dask=$(free_port)
sed -e "s|tcp://127.0.0.1:8786|tcp://127.0.0.1:$compose_dask|" \
  -e 's|^points_to_win = 5$|points_to_win = 1\ngames_per_rubber = 1|' \
  deploy/competition.toml >"$work/compose.toml"
chmod 0644 "$work/compose.toml"
grep -q "127.0.0.1:$compose_dask" "$work/compose.toml" || fail "deploy/competition.toml names no scheduler"
compose_up=1
compose up -d --no-build >"$work/compose-up.txt" 2>&1 \
  || { cat "$work/compose-up.txt" >&2; fail "docker-compose up"; }
compose_url="http://127.0.0.1:$compose_http"
for _ in $(seq 150); do
  "$arena" remote status --server "$compose_url" >/dev/null 2>&1 && break; sleep 0.4
done
"$arena" remote status --server "$compose_url" >/dev/null || fail "the compose stack's host did not answer"
token=$(compose exec -T host arena host add-author /etc/cardarena/cup.toml alice --dir /data/cup --json \
  | "$python" -c 'import json,sys; print(json.load(sys.stdin)["token"])')
for b in one two; do
  printf 'command = "python3 bot.py"\n' >"$work/plain/cardarena.toml"
  printf 'from cardarena import RandomBot, run_bot\nrun_bot(RandomBot())\n# %s\n' "$b" >"$work/plain/bot.py"
  "$arena" remote submit "$b" "$work/plain" --server "$compose_url" --token "$token" >/dev/null \
    || fail "submitting $b to the compose stack's host"
done
"$python" - "$arena" "$compose_url" <<'EOF'
import json, subprocess, sys, time

arena, url = sys.argv[1:]
deadline = time.monotonic() + 300
ladder = []
while time.monotonic() < deadline:
    out = subprocess.run([arena, "remote", "matches", "--server", url, "--json"], capture_output=True, text=True)
    ladder = [m for m in (json.loads(out.stdout) if out.returncode == 0 else []) if m["phase"] == "ladder"]
    if len(ladder) >= 4:
        break
    time.sleep(0.5)
else:
    sys.exit(f"the compose stack played {len(ladder)} ladder matches in 300 s")
faults = [f for m in ladder for f in m["faults"]]
assert not faults, faults
print(f"test-docker: the compose stack played {len(ladder)} ladder matches, no faults")
EOF
# The ladder's matches went to the workers: they fetched the versions' snapshots to play them.
fetched=$(compose logs --no-color worker1 worker2 | grep -c "snapshot fetched" || true)
[ "$fetched" -ge 1 ] || { compose logs --no-color --tail 20 worker1 worker2 >&2; fail "no worker fetched a bot"; }
compose logs --no-color host | grep -q Traceback && fail "the compose stack's host logged a traceback"
compose down -v --remove-orphans >/dev/null 2>&1 || fail "docker-compose down"
compose_up=""
[ -z "$(docker ps -aq --filter label=com.docker.compose.project=cardarena-test)" ] \
  || fail "docker-compose down left containers"
say "deploy/compose.yaml: host, scheduler, two workers; ladder matches played by the workers ($fetched snapshots fetched); down"

say "all Docker checks passed"

# The Card Arena server as an image.
#
#   make wheels && docker build -t card-arena .
#   docker run -d -p 50051:50051 -v arena-state:/data card-arena
#
# BASE_IMAGE defaults to the usual public Python image; where no image registry is reachable,
# build a local Debian base with docker/build-base.sh and pass --build-arg BASE_IMAGE=<that tag>.
# docs/docker.md has the details (state volume, Unix socket, health check, bots as images).
ARG BASE_IMAGE=python:3.11-slim

# --- build: a virtualenv with the arena and its dependencies ----------------------------------
FROM ${BASE_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
COPY . /src
# Wheels built on the host (make wheels) install with no network; without them pip installs
# from the source tree through its configured index. pip itself and the test suites of numpy
# and scipy (about 50 MB) are left out of the image.
RUN python3 -m venv /opt/arena \
 && if ls /src/build/wheels/card_arena-*.whl >/dev/null 2>&1; then \
      /opt/arena/bin/pip install --no-index --find-links /src/build/wheels 'card-arena[cluster]'; \
    else \
      /opt/arena/bin/pip install /src/engine /src/sdk/python '/src[cluster]'; \
    fi \
 && { /opt/arena/bin/pip uninstall --yes pip setuptools >/dev/null 2>&1 || true; } \
 && { find /opt/arena/lib/python3*/site-packages/scipy /opt/arena/lib/python3*/site-packages/numpy \
        -depth -type d -name tests -exec rm -rf {} + 2>/dev/null || true; }

# --- run: the virtualenv only, as an unprivileged user ---------------------------------------
FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ARENA_HOME=/data \
    PATH=/opt/arena/bin:$PATH
COPY --from=build /opt/arena /opt/arena
RUN (getent group arena >/dev/null || groupadd --system --gid 10001 arena) \
 && (getent passwd arena >/dev/null || useradd --system --uid 10001 --gid arena \
      --home-dir /data --no-create-home --shell /usr/sbin/nologin arena) \
 && mkdir -p /data && chown arena:arena /data && chmod 0700 /data

# Numeric, so orchestrators can check that the image does not run as root.
USER 10001:10001
WORKDIR /data
# The arena's state: the bot registry (arena submit), match records, the server's Unix socket.
VOLUME ["/data"]
# gRPC: bots (Arena.Play) and spectators (Spectator.*).
EXPOSE 50051

HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["arena", "health", "--server", "127.0.0.1:50051"]

# The same image runs a cluster's worker (docs/cluster.md):
#   docker run --network host card-arena arena worker --scheduler tcp://HOST:8786
# The server stops cleanly on SIGINT (Python's KeyboardInterrupt); as PID 1 it would ignore a
# SIGTERM it installs no handler for, and docker stop would wait for its SIGKILL.
STOPSIGNAL SIGINT
CMD ["arena", "serve", "--listen", "0.0.0.0:50051", "--unix", "/data/arena.sock", \
     "--out", "/data/records", "--home", "/data"]

#!/usr/bin/env bash
# Build a minimal Debian base image locally with debootstrap, for machines that reach no image
# registry: Debian's python3 (3.11 on bookworm) and venv, nothing else. The Debian mirror is read
# from this machine's apt sources at run time (never written into any file).
#
# Usage: docker/build-base.sh [IMAGE_TAG]   (default cardarena-base:bookworm)
# Needs root, debootstrap and a reachable Docker engine (DOCKER_HOST is honoured).
set -euo pipefail
tag=${1:-cardarena-base:bookworm}
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-base: $tag exists"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "build-base: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "build-base: debootstrap is not installed" >&2; exit 1; }
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

# The first Debian archive URI of the apt sources (deb822 .sources files, then one-line
# sources.list entries, whose "[option=...]" part is skipped); security mirrors are not archives.
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    mirror=$(awk '$1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($i !~ /security/) { print $i; exit }
      }' "$f")
    [ -n "$mirror" ] && break
  done
fi
[ -n "$mirror" ] || { echo "build-base: no Debian mirror found in the apt sources" >&2; exit 1; }

root=$(mktemp -d /tmp/cardarena-rootfs.XXXXXX)
log=/tmp/cardarena-debootstrap.log
trap 'rm -rf "$root"' EXIT
echo "build-base: debootstrap $suite (minbase + python3) into $root"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  "$suite" "$root" "$mirror" >"$log" 2>&1 \
  || { tail -20 "$log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* \
  "$root"/usr/share/doc/*/changelog* "$root"/usr/share/man/*
tar -C "$root" --numeric-owner -c . \
  | docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "build-base: built $tag"

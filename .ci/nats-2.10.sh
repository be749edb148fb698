#!/usr/bin/env bash
# Fetches nats-server 2.10.27 from Debian trixie into a cache directory, without touching the
# system's apt configuration: a private sources list, package lists and package cache under the
# cache directory. Idempotent: a binary already there that reports 2.10.27 is reused.
#
#   .ci/nats-2.10.sh            prints the binary's path on stdout (logs go to stderr)
#   source .ci/nats-2.10.sh     also exports NATS_SERVER_210
#
# The cluster tests and `deno task nemesis` read $NATS_SERVER_210; the single-server tests keep
# using the system's nats-server.

# The Debian archive this machine's apt already uses (a machine may only reach its own mirror):
# the URI of the source that serves the release's main component, else deb.debian.org.
nats210_mirror() {
  local codename uri
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(IDENTIFIER)' 2>/dev/null |
    awk -v c="$codename" '$2 == c && $3 == "main" && $4 == "Packages" { print $1; exit }')
  echo "${uri:-http://deb.debian.org/debian/}"
}

nats210_fetch() {
  local version=2.10.27 debver=2.10.27-1+b2
  local cache="${AGENTMEM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentmem}/nats-$version"
  local bin="$cache/root/usr/sbin/nats-server"
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "v$version"; then
    echo "$bin"
    return 0
  fi
  local apt="$cache/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$cache/deb" || return 1
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -f "$keyring" ] || { echo "nats-2.10: $keyring is missing (apt-get install debian-archive-keyring)" >&2; return 1; }
  local mirror
  mirror=$(nats210_mirror)
  echo "nats-2.10: Debian mirror $mirror (from this machine's apt sources)" >&2
  printf 'deb [signed-by=%s] %s trixie main\n' "$keyring" "$mirror" >"$apt/sources.list"
  local -a opts=(
    -o "Dir::Etc::sourcelist=$apt/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache"
    -o "Dir::Cache::pkgcache=$apt/cache/pkgcache.bin"
    -o "Dir::Cache::srcpkgcache=$apt/cache/srcpkgcache.bin"
    -o "APT::Get::List-Cleanup=0"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
    -q
  )
  echo "nats-2.10: apt-get update (private trixie list under $apt)" >&2
  apt-get "${opts[@]}" update >&2 || { echo "nats-2.10: apt-get update failed" >&2; return 1; }
  (cd "$cache/deb" && apt-get "${opts[@]}" download "nats-server=$debver") >&2 \
    || { echo "nats-2.10: apt-get download nats-server=$debver failed" >&2; return 1; }
  local deb
  deb=$(ls "$cache/deb"/nats-server_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { echo "nats-2.10: no .deb was downloaded" >&2; return 1; }
  rm -rf "$cache/root" && dpkg-deb -x "$deb" "$cache/root" || return 1
  "$bin" --version 2>/dev/null | grep -q "v$version" \
    || { echo "nats-2.10: $bin does not report v$version" >&2; return 1; }
  echo "$bin"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  nats210_fetch
else
  NATS_SERVER_210=$(nats210_fetch) && export NATS_SERVER_210
fi

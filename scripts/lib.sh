# Shared helpers for scripts/*. Sourced, not run.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VAR="$ROOT/var"
RUN="$VAR/run"
LOGS="$VAR/log"
mkdir -p "$RUN" "$LOGS"

say() { printf '\033[1m[bootstrap]\033[0m %s\n' "$*"; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

is_debian_root() { [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; }

APT_UPDATED=""
apt_install() {
  is_debian_root || die "$1 is missing; install it (as root on Debian: apt-get install $*)"
  if [ -z "$APT_UPDATED" ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >"$LOGS/apt.log" 2>&1 || die "apt-get update failed (see $LOGS/apt.log)"
    APT_UPDATED=1
  fi
  say "installing $* from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$LOGS/apt.log" 2>&1 \
    || die "apt-get install $* failed (see $LOGS/apt.log)"
}

# wait_for SECONDS CMD…: retry CMD until it succeeds or time runs out.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.3
  done
}

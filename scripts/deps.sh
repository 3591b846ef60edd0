#!/bin/sh
# deps.sh [build|test|ci|bench]: install the Debian 12 packages longpole needs for a
# purpose, with apt-get, only when some are missing (so it costs nothing once done).
# Run as root (or with sudo available).
set -eu
purpose=${1:-build}
pkgs="cmake make ninja-build gcc libc6-dev pkg-config zlib1g-dev libzstd-dev libxxhash-dev"
pkgs="$pkgs libsqlite3-dev libmicrohttpd-dev" # export --sqlite, serve (issue 6)
pkgs="$pkgs libbabeltrace2-dev" # LTTng CTF through libbabeltrace2 (issue 13): the fallback and differential test of the direct decoder
pkgs="$pkgs libopenmpi-dev" # `longpole dist` over Open MPI (issue 14)
case "$purpose" in
  build) ;;
  test) pkgs="$pkgs python3 jq" ;;
  ci) pkgs="$pkgs python3 jq clang libclang-rt-14-dev" ;;
  bench) pkgs="$pkgs python3 python3-networkx time babeltrace2" ;;
  *) echo "deps.sh: unknown purpose '$purpose'" >&2; exit 2 ;;
esac
case "$purpose" in test|ci) pkgs="$pkgs sqlite3 curl" ;; esac # SQLite and serve tests (issue 6)
# chromium: `longpole report` opened in a headless browser (tests/scripts/test_report_chromium.sh)
case "$purpose" in test|ci) pkgs="$pkgs chromium" ;; esac
# linux-perf: the recorder's call-stack source (`longpole record`, CrystalPerf, issue 16) and its tests
case "$purpose" in test|ci|bench) pkgs="$pkgs linux-perf" ;; esac
# openmpi-bin: mpirun for `longpole dist`, its tests (test_dist_*.sh) and bench/dist (issue 14)
case "$purpose" in test|ci|bench) pkgs="$pkgs openmpi-bin" ;; esac
missing=""
for p in $pkgs; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
echo "deps.sh: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "deps.sh: need root to install:$missing" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

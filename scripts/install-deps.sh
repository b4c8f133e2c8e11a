#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, only those that are missing.
# Runs as root (or with sudo available). Safe to run repeatedly.
# Usage: scripts/install-deps.sh [--bench]   (--bench: also what only ./bench.sh needs: Debian's
# golang-go, which builds the do-nothing Go extender of bench_throughput_bench; never the tests)
set -euo pipefail

packages=(build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev
          libboost-dev libboost-graph-dev rapidjson-dev libyaml-cpp-dev
          libfmt-dev catch2 libssl-dev openssl python3 curl)
if [[ ${1:-} == --bench ]]; then packages+=(golang-go); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# kubectl renders deploy/ in one test; Debian's kubernetes-client provides it when none is there.
if ! command -v kubectl >/dev/null 2>&1; then missing+=(kubernetes-client); fi

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

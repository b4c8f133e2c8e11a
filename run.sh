#!/usr/bin/env bash
# Installs what is missing, builds, and starts the extender on the bundled example cluster
# (deploy/examples/cluster.yaml: the seed-002 cluster) at http://127.0.0.1:8888.
# Extra arguments go to `capacity-extender serve` (e.g. --snapshot FILE, --port N).
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target capacity-extender capacity-sim
echo "capacity-extender serving the example cluster on 127.0.0.1:8888 (Ctrl-C to stop)"
echo "try: curl 127.0.0.1:8888/quotas"
exec ./build/extender/capacity-extender serve "$@"

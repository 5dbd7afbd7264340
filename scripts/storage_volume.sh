#!/usr/bin/env bash
# Storage at volume: writes REPORTS birth notices (default 100000) through the real server, with
# the simulated office acknowledging at once, and prints disk use against the payload, memory
# while writing, and the time and memory of the next three starts (benches/storage_volume.rs).
#
#   scripts/storage_volume.sh [REPORTS] [CACHE_MB]
#
# CACHE_MB sets the server's store.cache_capacity_mb; without it the server's default applies.
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_REPORTS="${1:-100000}"
if [[ -n "${2:-}" ]]; then
    export BENCH_CACHE_MB="$2"
fi
exec cargo bench --bench storage_volume

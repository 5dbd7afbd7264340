#!/usr/bin/env bash
# The figures of docs/performance.md in one command: builds the benches (release) and runs them
# one after the other, each appending its key figures to a file (BENCH_FIGURES, see
# benches/support/mod.rs), then prints the machine, the date and one table of every figure.
# Nothing is asserted on time; a bench that fails makes this script exit non-zero after the table
# of what the others measured.
#
#   scripts/bench.sh          sizes for some 10 minutes on 2 cores
#   scripts/bench.sh --full   the goals' sizes: 10,000 waiting deliveries, 100,000 stored
#                             reports (the default: 5,000 and 50,000), 1,000 reports per module
#                             through the form, 10,000 reports on one to three nodes (2,000)
#                             (also BENCH_FULL=1); takes some 20 minutes more
#
# Each bench's own output goes to the terminal as it runs; the table at the end collects them.
set -uo pipefail
cd "$(dirname "$0")/.."

full="${BENCH_FULL:-0}"
for arg in "$@"; do
    case "$arg" in
        --full) full=1 ;;
        -h | --help)
            sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "unknown argument: $arg (only --full)" >&2
            exit 2
            ;;
    esac
done

# Sizes: "default full" for each setting.
size() { if [[ "$full" == 1 ]]; then echo "$2"; else echo "$1"; fi; }
WAITING=$(size 5000 10000)
STORED=$(size 50000 100000)
ARCHIVE_MB=$(size 200 200)
MESSAGES=$(size 500 1000)
FORM_REPORTS=$(size 300 1000)
ROUNDS=$(size 5 10)
NODE_REPORTS=$(size 2000 10000)
if [[ "$full" == 1 ]]; then sizes="full"; else sizes="default (--full for the goals' sizes)"; fi

figures_dir=$(mktemp -d)
trap 'rm -rf "$figures_dir"' EXIT
failed=()

echo "== building the benches (release)"
if ! cargo bench --no-run; then
    echo "the benches do not build" >&2
    exit 1
fi

# run NAME [VAR=VALUE...]: one bench with its settings; its figures land in NAME.tsv.
run() {
    local name="$1"
    shift
    echo
    echo "== $name $*"
    if ! env "$@" BENCH_FIGURES="$figures_dir/$name.tsv" cargo bench --quiet --bench "$name"; then
        echo "!! $name failed" >&2
        failed+=("$name")
    fi
}

started=$(date +%s)
run http_throughput BENCH_ROUNDS="$ROUNDS" BENCH_SLICE_MS=1000
run form_pipeline BENCH_REPORTS="$FORM_REPORTS"
run pipeline BENCH_OPEN_FIRST=1 BENCH_REPORTS=$((FORM_REPORTS * 10))
run labreport_pipeline BENCH_REPORTS=$((FORM_REPORTS * 5))
run bedreport_direct BENCH_SECONDS=5
run hospreport_slow BENCH_USERS=200 BENCH_LATENCY_MS=2000
run ack_backlog BENCH_REPORTS="$WAITING" BENCH_IDLE_SECS=$(size 10 20)
run storage_volume BENCH_REPORTS="$STORED" BENCH_IDLE_SECS=$(size 5 30)
run guardianship BENCH_MESSAGES="$MESSAGES" BENCH_ARCHIVE_MB="$ARCHIVE_MB" BENCH_ROUNDS=$(size 2 3)
run nodes BENCH_REPORTS="$NODE_REPORTS" BENCH_ROUNDS=$(size 1 3)
took=$(($(date +%s) - started))

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
memory=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
echo
echo "== meldewerk figures"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC') (the benches took $((took / 60)) min $((took % 60)) s)"
echo "commit:   $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with changes)')"
echo "machine:  $(nproc) cores, $memory, ${cpu_model:-unknown CPU}"
echo "rustc:    $(rustc --version)"
echo "sizes:    $sizes: $WAITING waiting deliveries, $STORED stored reports, ${ARCHIVE_MB} MB archive, $FORM_REPORTS reports per module through the form, $NODE_REPORTS reports per node configuration"
echo
{
    printf 'bench\tfigure\tvalue\tunit\twhat it means\n'
    for file in "$figures_dir"/*.tsv; do
        [[ -e "$file" ]] || continue
        bench=$(basename "$file" .tsv)
        sed "s/^/$bench\t/" "$file"
    done
} | awk -F'\t' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > width[i]) width[i] = length($i) } }
    END {
        for (r = 1; r <= NR; r++) {
            printf "| %-*s | %-*s | %*s | %-*s | %s |\n", width[1], cell[r, 1], width[2], cell[r, 2],
                width[3], cell[r, 3], width[4], cell[r, 4], cell[r, 5]
            if (r == 1) {
                printf "|"; for (i = 1; i <= 4; i++) { printf "%s|", sprintf("%*s", width[i] + 2, "") }
                print "---|"
            }
        }
    }' | sed '2s/ /-/g'

if ((${#failed[@]})); then
    echo
    echo "failed: ${failed[*]} (their figures are missing above; their output says why)" >&2
    exit 1
fi

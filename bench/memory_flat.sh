#!/usr/bin/env bash
# Memory stays flat over a long run: runs `iolab run` for DURATION (default 10 minutes) with a mixed random
# workload on a scratch file (4 workers x qd 32, 70 % reads, 4K/64K blocks, a time-series point every
# INTERVAL, default 1s; INTERVAL=100ms takes the series past its 4,096-point cap), samples the resident set
# (VmRSS in /proc/PID/status) every SAMPLE_S seconds, prints a table, and the growth from the end of the
# first minute to the last sample.
#
# Usage: bench/memory_flat.sh [DURATION] [SAMPLE_S]            e.g. bench/memory_flat.sh 10m 10
# Environment: IOLAB (the binary; default target/release/iolab, or $CARGO_TARGET_DIR/release/iolab),
#              IOLAB_SCRATCH_DIR (where the 1 GiB scratch file goes; default a temporary directory under .),
#              INTERVAL (the time-series interval, default 1s),
#              OUT (a directory for the result JSON, the CSV and the table; default a temporary directory).
# Exit code: 0 when the growth is at most 5 % (and 8 MiB), 1 otherwise, 2 when iolab itself failed.
set -euo pipefail

duration=${1:-10m}
sample_s=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
iolab=${IOLAB:-${CARGO_TARGET_DIR:-$root/target}/release/iolab}
if [[ ! -x $iolab ]]; then
    echo "memory_flat: no binary at $iolab; build it with: cargo build --release -p iolab" >&2
    exit 2
fi
out=${OUT:-$(mktemp -d -t iolab-memory-XXXXXX)}
mkdir -p "$out"
scratch=${IOLAB_SCRATCH_DIR:-$(mktemp -d -p . iolab-memory-scratch-XXXXXX)}
export IOLAB_SCRATCH_DIR=$scratch

args=(run --rw randrw --read-pct 70 --bs 4k/80:64k/20 --workers 4 --qd 32 --size 1G
      --duration "$duration" --ramp 0 --interval "${INTERVAL:-1s}"
      --json "$out/result.json" --csv "$out/series.csv" -q --no-save)

echo "memory_flat: $iolab ${args[*]}"
echo "memory_flat: scratch in $scratch, output in $out"
"$iolab" "${args[@]}" >"$out/stdout.txt" 2>"$out/stderr.txt" &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true' INT TERM

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

table=$out/rss.tsv
printf 'elapsed_s\trss_kib\n' >"$table"
printf '%10s  %12s  %10s\n' "elapsed" "VmRSS" "MiB"
start=$(date +%s)
last_hwm=0
while kill -0 "$pid" 2>/dev/null; do
    sleep "$sample_s"
    rss=$(rss_kib "$pid" || true)
    [[ -n $rss ]] || break
    hwm=$(hwm_kib "$pid" || true)
    [[ -n $hwm ]] && last_hwm=$hwm
    t=$(($(date +%s) - start))
    printf '%s\t%s\n' "$t" "$rss" >>"$table"
    awk -v t="$t" -v r="$rss" 'BEGIN { printf "%9ss  %9s KiB  %10.1f\n", t, r, r / 1024 }'
done
set +e
wait "$pid"
code=$?
set -e
rmdir "$scratch" 2>/dev/null || true
if [[ $code -ne 0 ]]; then
    echo "memory_flat: iolab exited with $code; stderr:" >&2
    cat "$out/stderr.txt" >&2
    exit 2
fi

# Growth: the first sample at or after 60 s (after the fill, the first minute of intervals and the ring and
# buffer set-up) against the last sample.
status=0
awk -F'\t' -v hwm="$last_hwm" '
    NR == 1 { next }
    { t = $1; r = $2; if (first == "" && t >= 60) { first = r; ft = t } last = r; lt = t; n++ }
    END {
        if (first == "") { first = last; ft = lt }
        g = last - first; pct = first > 0 ? 100 * g / first : 0
        printf "\nsamples %d; VmRSS at %ds: %.1f MiB; at %ds: %.1f MiB; growth %+.1f MiB (%+.2f %%); peak (VmHWM) %.1f MiB\n",
            n, ft, first / 1024, lt, last / 1024, g / 1024, pct, hwm / 1024
        exit (g > 8192 && pct > 5) ? 1 : 0
    }' "$table" || status=$?
iops=$(grep -o '"iops": *[0-9.]*' "$out/result.json" | tail -1 | grep -o '[0-9.]*$' || true)
points=$(($(wc -l <"$out/series.csv") - 1))
echo "run: total IOPS ${iops:-?}; time-series CSV rows $points; table in $table"
exit $status

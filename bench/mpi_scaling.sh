#!/usr/bin/env bash
# Scaling over MPI ranks: `iolab run` under `mpirun -np N` for N = 1, 2 and 4 on this machine, on `null:`
# (iolab's own overhead: completes at once, copies nothing) and `mem:` (an in-process RAM disk), each rank
# with WORKERS workers at QD 32, 4 KiB random reads, DURATION each. Prints the merged (aggregate) IOPS, the
# per-rank IOPS, the start skew, and the scaling efficiency (aggregate IOPS / (N x the 1-rank IOPS)).
#
# On a machine with fewer cores than ranks x workers the ranks share the cores, so aggregate IOPS cannot grow
# with N: the efficiency then shows the cost of sharing, not of MPI (docs/BENCHMARKS.md).
#
# Usage: bench/mpi_scaling.sh [DURATION] [WORKERS]             e.g. bench/mpi_scaling.sh 5s 1
# Environment: IOLAB (the binary; default target/release/iolab, built with: cargo build --release -p iolab
#              --features mpi), OUT (a directory for the result JSON files; default a temporary directory).
set -euo pipefail

duration=${1:-5s}
workers=${2:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
iolab=${IOLAB:-${CARGO_TARGET_DIR:-$root/target}/release/iolab}
if [[ ! -x $iolab ]] || ! "$iolab" --version | grep -q "MPI: compiled in"; then
    echo "mpi_scaling: no MPI build at $iolab; build it with: cargo build --release -p iolab --features mpi" >&2
    exit 2
fi
out=${OUT:-$(mktemp -d -t iolab-mpi-XXXXXX)}
mkdir -p "$out"
echo "# $("$iolab" --version), $(nproc) cores, $duration per run, $workers worker(s) per rank, qd 32, 4k randread"
printf '%-10s %5s %14s %40s %12s %10s\n' target ranks "IOPS (all)" "IOPS per rank" "start skew" efficiency
for target in null:1G mem:1G; do
    base=""
    for np in 1 2 4; do
        json="$out/${target%%:*}-$np.json"
        mpirun --allow-run-as-root --oversubscribe -np "$np" "$iolab" run --target "$target" --rw randread \
            --bs 4k --qd 32 --workers "$workers" --duration "$duration" --ramp 1s --no-save -q --json "$json"
        python3 - "$json" "$target" "$np" "${base:-0}" >"$out/row" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
np, base = int(sys.argv[3]), float(sys.argv[4])
iops = r["total"]["all"]["iops"]
per = "/".join(f"{h['total']['all']['iops']:,.0f}" for h in r["hosts"])
skew = r["ranks"]["start_skew_s"] * 1e6
eff = iops / (np * base) if base else 1.0
print(f"{sys.argv[2]:<10} {np:>5} {iops:>14,.0f} {per:>40} {skew:>9.1f} µs {eff:>9.0%}|{iops}")
EOF
        row=$(cat "$out/row")
        echo "${row%|*}"
        if [[ -z $base ]]; then base=${row##*|}; fi
    done
done
echo "# results in $out"

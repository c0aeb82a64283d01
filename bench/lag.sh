#!/usr/bin/env bash
# iolab's own delay in open loop (docs/BENCHMARKS.md, "Open-loop lag"): on the mem: RAM disk, whose reads take
# about a microsecond, every microsecond between an arrival and its completion beyond the service time is iolab's.
# Prints, per offered rate, the lag (submit - scheduled arrival) p50/p99 and the response p50 minus the service
# p50. Usage: bash bench/lag.sh [IOLAB_BINARY] [SECONDS]
set -euo pipefail
bin=${1:-./target/release/iolab}
secs=${2:-5}
printf '%-8s %12s %12s %22s %10s\n' rate "lag p50" "lag p99" "resp p50 - svc p50" "cpu cores"
for rate in 100 1k 10k 100k; do
  "$bin" run --target mem:64M --rate "$rate" -d "${secs}s" --ramp 1s --no-save -q --json - | python3 -c '
import json, sys
r = json.load(sys.stdin)
lag = (r.get("rate") or {}).get("lag_ns") or {}
a = r["total"]["all"]
us = lambda ns: "-" if ns is None else "%.2f us" % (ns / 1e3)
diff = a["lat_ns"]["p50"] - a["service_lat_ns"]["p50"]
print("%-8s %12s %12s %22s %10.2f" % (sys.argv[1], us(lag.get("p50")), us(lag.get("p99")), us(diff), r["cpu"]["cores_used"]))
' "$rate"
done

#!/usr/bin/env bash
# iolab's own delay in open loop (docs/BENCHMARKS.md, "Open-loop lag"), beside the least a program can do on
# the same machine. For each arrival process (fixed, poisson) and offered rate (10 to 100k IOPS), one worker on
# the mem: RAM disk (a read takes about a microsecond, so the lag is iolab's): the lag (submit - scheduled
# arrival) p50/p99/max, the CPU in cores and the margin iolab chose; then bench/pacer.c (built here into a
# temporary directory) at the same rate, arrivals and margin, so at about the same CPU; then fio's CPU at
# the same rate (io_uring on a 64 MiB file in /dev/shm), the ceiling iolab's CPU is held to; and, when a
# second binary is given (an iolab from before), its lag and CPU too.
#
# Usage: bash bench/lag.sh [IOLAB_BINARY] [SECONDS] [BEFORE_BINARY]
# Each run lasts SECONDS (default 5), or long enough for 300 arrivals at low rates, after a 1 s ramp.
set -euo pipefail
bin=${1:-./target/release/iolab}
secs=${2:-5}
before=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/pacer" "$here/pacer.c" -lm
fio_file=/dev/shm/iolab-lag-fio
trap 'rm -rf "$tmp" "$fio_file"' EXIT

# iolab's figures: "lag p50 p99 max (us) cores margin_us cap_us", from its JSON on stdin.
iolab_figures() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
rate = r.get("rate") or {}
lag = rate.get("lag_ns") or {}
p = rate.get("pacing") or {}
us = lambda ns: "-" if ns is None else "%.1f" % (ns / 1e3)
print(us(lag.get("p50")), us(lag.get("p99")), us(lag.get("max")), "%.3f" % r["cpu"]["cores_used"],
      us(p.get("margin_ns")), us(p.get("margin_cap_ns")))
'
}

run_iolab() { # BINARY RATE ARRIVALS SECONDS
  "$1" run --target mem:64M --rate "$2" --arrival "$3" -d "${4}s" --ramp 1s --seed 1 --no-save -q --json - \
    | iolab_figures
}

fio_cores() { # RATE ARRIVALS SECONDS
  local process=linear
  [ "$2" = poisson ] && process=poisson
  fio --name=lag --filename="$fio_file" --size=64m --rw=randread --bs=4k --ioengine=io_uring \
    --rate_iops="$1" --rate_process="$process" --time_based --runtime="$3" --ramp_time=1 \
    --output-format=json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print("%.3f" % ((j["usr_cpu"] + j["sys_cpu"]) / 100))
'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '| offered | arrivals | margin (cap) | iolab lag p50 / p99 / max | iolab CPU | pacer lag p50 / p99 / max | pacer CPU | fio CPU |'
[ -n "$before" ] && printf ' before: lag p50 / p99 / max | before: CPU |'
printf '\n|---|---|---|---|---|---|---|---|'
[ -n "$before" ] && printf -- '---|---|'
printf '\n'
for arrivals in fixed poisson; do
  for rate in 10 100 1000 10000 100000; do
    s=$(( secs > 300 / rate ? secs : 300 / rate ))
    read -r l50 l99 lmax cores margin cap < <(run_iolab "$bin" "$rate" "$arrivals" "$s")
    [ "$margin" = - ] && margin=0
    read -r _ _ _ _ _ _ _ _ _ p50 _ p99 _ pmax _ _ _ pcores \
      < <("$tmp/pacer" "$rate" "$s" "$arrivals" "$margin" 1)
    fcores=$(fio_cores "$rate" "$arrivals" "$s")
    us() { python3 -c "print('%.1f' % ($1 / 1e3))"; }
    printf '| %s | %s | %s µs (%s) | %s / %s / %s µs | %s | %s / %s / %s µs | %.3f | %s |' "$rate" "$arrivals" \
      "$margin" "$cap" "$l50" "$l99" "$lmax" "$cores" "$(us "$p50")" "$(us "$p99")" "$(us "$pmax")" "$pcores" "$fcores"
    if [ -n "$before" ]; then
      read -r b50 b99 bmax bcores _ _ < <(run_iolab "$before" "$rate" "$arrivals" "$s")
      printf ' %s / %s / %s µs | %s |' "$b50" "$b99" "$bmax" "$bcores"
    fi
    printf '\n'
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

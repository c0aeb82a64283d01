#!/usr/bin/env bash
# mem: at the memory's speed (issue 15, item 3): iolab's `mem:1G` 4 KiB random reads against a bare loop of
# random 4 KiB copies out of a 1 GiB buffer (crates/device/examples/mem_copy.rs), in the same sitting.
# Usage: bash bench/mem_speed.sh [SECONDS]   (release build; run on a quiet machine)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-5}"
target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet -p iolab -p iolab-device --example mem_copy
echo "== bare loop (copies per CPU second)"
"$target_dir/release/examples/mem_copy" "$secs"
echo "== iolab run --target mem:1G --rw randread --bs 4k -d ${secs}s --ramp 1s --seed 1 --no-save"
"$target_dir/release/iolab" run --target mem:1G --rw randread --bs 4k -d "${secs}s" --ramp 1s --seed 1 --no-save \
  | grep -E '^(target|read|cpu)'
echo "(iolab's ceiling on one core is 1e9 / the cpu line's ns per I/O; compare it with the huge-page plain copy)"

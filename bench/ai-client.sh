#!/usr/bin/env bash
# The client's own cost of `iolab ai train` per simulated accelerator (issue 38, item 7), on the shape of the
# DLIO anchor in docs/BENCHMARKS.md: 64 npz files of 4 MiB, batch 7, 0.323 s of computation a step, one
# epoch, 1 and 4 accelerators. Prints iolab's own figures (the document's client block: CPU seconds while
# training and peak RSS) and the whole process's (GNU time: generation included).
# Usage: bench/ai-client.sh [IOLAB] [DIR]   (default: target/release/iolab, a scratch directory in .)
set -euo pipefail
IOLAB=${1:-target/release/iolab}
DIR=${2:-.}
for n in 1 4; do
  out=$(mktemp)
  /usr/bin/time -f '%e s wall, %U+%S CPU-s, %M KiB max RSS' "$IOLAB" ai train unet3d \
    --param dataset.num_files_train=64 --param dataset.record_length_bytes=4194304 \
    --param dataset.record_length_bytes_stdev=0 --param train.epochs=1 --param workflow.checkpoint=False \
    --num-accelerators "$n" --data-dir "$DIR/iolab-ai-bench-$$" --seed 1 --no-save -q --json "$out" 2>&1 |
    sed "s/^/$n accelerator(s), whole process: /"
  python3 - "$out" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c, t = d["client"], d["training"]
print(f"{sys.argv[2]} accelerator(s), training: AU {t['au_pct']:.2f} %, {t['samples_per_s']:.1f} samples/s, "
      f"{t['mib_per_s']:.1f} MiB/s, {c['cpu_s']:.3f} CPU-s ({c['cpu_s_per_accelerator']:.3f} per accelerator), "
      f"peak RSS {c['peak_rss_bytes'] / 2**20:.1f} MiB; generation {d['dataset']['generate_cpu_s']:.2f} CPU-s")
PY
  rm -f "$out"
done

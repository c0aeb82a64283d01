#!/bin/sh
# MRC speed (issue 18): references per second of exact LRU and SHARDS on one core, in release.
# Usage: bench/mrc_speed.sh [REFERENCES] [OBJECTS]   (defaults 20000000 1000000)
# Goals: exact LRU >= 2 M references/s, SHARDS >= 20 M references/s. Figures go to docs/BENCHMARKS.md.
set -e
cd "$(dirname "$0")/.."
exec taskset -c 0 cargo run --release -q -p iolab-trace --example mrc_speed -- "$@"

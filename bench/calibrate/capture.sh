#!/bin/bash
# The captures behind docs/PROFILES.md, "Checked against real databases": tpcc, tpch and copy on SQLite and
# PostgreSQL with their block I/O captured, and tpcc's read share against the memory it had. Root.
#
#   bash bench/calibrate/capture.sh /mnt/a /mnt/b [OUT]
#
# /mnt/a and /mnt/b: two empty file systems on block devices (the docs used ext4 on loop devices made with
# `losetup --direct-io=on` over files on the machine's disk); OUT (default ./calibrate-out) gets the traces,
# the JSON results and shape.txt, one line of bench/calibrate/shape.py per capture. About 15 minutes.
set -euo pipefail
A=${1:?first file system}; B=${2:?second file system}; OUT=${3:-calibrate-out}
IOLAB=${IOLAB:-iolab}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"; cd "$OUT"
tpcc() { "$IOLAB" db tpcc --dir "$A/db" --warehouses 2 --users 4 --ramp 5s --duration 30s --seed 7 -q --no-save "$@"; }
tpcc --memory 32M --capture sqlite-tpcc.iolabtrace --json sqlite-tpcc.json
tpcc --database postgres --memory 64M --capture pg-tpcc.iolabtrace --json pg-tpcc.json
"$IOLAB" db tpch --dir "$A/db" --scale 0.1 --memory 32M --seed 7 --capture sqlite-tpch.iolabtrace --json sqlite-tpch.json -q --no-save
"$IOLAB" db tpch --database postgres --dir "$A/db" --scale 0.1 --memory 64M --seed 7 --capture pg-tpch.iolabtrace --json pg-tpch.json -q --no-save
"$IOLAB" db copy --dir "$A/db" --to "$B/copy" --warehouses 4 --seed 7 --json sqlite-copy.json -q --no-save
"$IOLAB" db copy --database postgres --dir "$A/db" --to "$B/copy" --warehouses 4 --seed 7 --json pg-copy.json -q --no-save
for t in sqlite-tpcc pg-tpcc sqlite-tpch pg-tpch; do
  "$IOLAB" trace convert $t.iolabtrace -o - | python3 "$HERE/shape.py" $t >> shape.txt
done
# The read share against the memory the database had.
for m in 16M 32M 64M 128M none; do
  mem=(); [ $m != none ] && mem=(--memory $m)
  tpcc "${mem[@]}" --capture sw-sqlite-$m.iolabtrace
  "$IOLAB" trace convert sw-sqlite-$m.iolabtrace -o - | python3 "$HERE/shape.py" sqlite-tpcc-$m >> shape.txt
done
for m in 48M 64M 128M 256M none; do
  mem=(); [ $m != none ] && mem=(--memory $m)
  tpcc --database postgres "${mem[@]}" --capture sw-pg-$m.iolabtrace
  "$IOLAB" trace convert sw-pg-$m.iolabtrace -o - | python3 "$HERE/shape.py" pg-tpcc-$m >> shape.txt
done
echo "done: $OUT/shape.txt"

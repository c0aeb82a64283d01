#!/bin/bash
# The worked what-if of docs/DB.md ("The what-if, closed"): tpcc on a file system, free and throttled,
# captured and compared; the capture's miss-ratio curve; the capture replayed on emulated arrays, with and
# without a cache. Root.
#
#   bash bench/calibrate/whatif.sh /mnt/test [OUT]
#
# /mnt/test: an empty file system on a block device (the docs used ext4 on a loop device made with
# `losetup --direct-io=on` over a file on the machine's disk). OUT (default ./whatif-out) gets the texts,
# JSON results, traces and a catalog of its own. About 10 minutes.
set -euo pipefail
FS=${1:?a file system}; OUT=${2:-whatif-out}
IOLAB=${IOLAB:-iolab}
mkdir -p "$OUT"; cd "$OUT"
DB=$PWD/whatif.db
rm -f "$DB"
tpcc() { "$IOLAB" db tpcc --dir "$FS/db" --warehouses 2 --users 4 --ramp 5s --duration 30s --memory 32M --seed 7 --db "$DB" "$@"; }
tpcc --capture free.iolabtrace --json free.json --tag whatif=free > free.txt
tpcc --throttle riops=1000,wiops=1000 --capture held.iolabtrace --json held.json --tag whatif=held > held.txt
"$IOLAB" compare tag:whatif=free tag:whatif=held --db "$DB" > compare.txt
"$IOLAB" mrc free.iolabtrace --writes install > mrc.txt
replay() { "$IOLAB" replay free.iolabtrace --clock virtual --seed 7 --db "$DB" "$@"; }
replay --target sim:array,size=6G --tag whatif=array > replay-array.txt
replay --target sim:array,size=6G --cache 256M --tag whatif=array-cache > replay-cache.txt
replay --target sim:array,size=6G --cache 256M --cache-mode write-back --tag whatif=array-wb > replay-wb.txt
replay --target sim:array,size=6G,disks=24,raid=10 --tag whatif=array-r10 > replay-r10.txt
"$IOLAB" compare tag:whatif=array tag:whatif=array-cache tag:whatif=array-r10 --db "$DB" > compare-replay.txt
echo "done: $OUT"

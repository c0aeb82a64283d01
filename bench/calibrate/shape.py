#!/usr/bin/env python3
"""The I/O shape of a block trace, for calibrating iolab's built-in profiles (docs/PROFILES.md, "Checked
against real databases").

    iolab trace convert TRACE -o - | python3 bench/calibrate/shape.py NAME

Reads iolab's CSV (start_ns,submit_ns,complete_ns,op,offset,len,...) on stdin and prints one JSON object:
ops and bytes per op, the read share, IOPS, the size mix per direction, the sequential share per direction,
and flushes per second and per write.

Sequential, here, is what a database's streams look like when several are interleaved on one device: an op
is sequential when it starts where one of the last 16 ops in its direction ended, or rewrites the block one
of them started at (a log rewriting its last, partly filled page). fio's per-worker rule (the previous op's
end) calls every op of two interleaved streams random; iolab's `profiles derive` uses that rule.

Not measured: the hot spot (a capture of seconds touches too few of a database's blocks to tell an 80/20
skew from a flatter one).
"""
import collections
import json
import sys

RECENT = 16


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "trace"
    ops = collections.Counter()
    nbytes = collections.Counter()
    sizes = {"read": collections.Counter(), "write": collections.Counter()}
    seq = collections.Counter()
    ends = {"read": collections.deque(maxlen=RECENT), "write": collections.deque(maxlen=RECENT)}
    starts = {"read": collections.deque(maxlen=RECENT), "write": collections.deque(maxlen=RECENT)}
    first = last = None
    header = sys.stdin.readline()
    assert header.startswith("start_ns,"), header
    for line in sys.stdin:
        f = line.rstrip("\n").split(",")
        start, op, offset, length = int(f[0]), f[3], int(f[4]), int(f[5])
        first = start if first is None else first
        last = start
        ops[op] += 1
        nbytes[op] += length
        if op not in sizes:
            continue
        sizes[op][length] += 1
        if offset in ends[op] or offset in starts[op]:
            seq[op] += 1
        ends[op].append(offset + length)
        starts[op].append(offset)
    seconds = max((last or 0) - (first or 0), 1) / 1e9
    out = {"name": name, "seconds": round(seconds, 1), "ops": dict(ops), "bytes": dict(nbytes)}
    rw = ops["read"] + ops["write"]
    out["read_pct_ops"] = round(100 * ops["read"] / rw, 1) if rw else None
    out["read_pct_bytes"] = round(100 * nbytes["read"] / max(nbytes["read"] + nbytes["write"], 1), 1)
    out["iops"] = round(rw / seconds)
    out["flushes_per_s"] = round(ops["flush"] / seconds, 1)
    out["writes_per_flush"] = round(ops["write"] / ops["flush"], 2) if ops["flush"] else None
    for d in ("read", "write"):
        n = ops[d]
        if not n:
            continue
        top = sizes[d].most_common(6)
        out[d] = {
            "mean_kib": round(nbytes[d] / n / 1024, 1),
            "sizes_pct": {f"{s // 1024}k": round(100 * c / n, 1) for s, c in top},
            "sequential_pct": round(100 * seq[d] / n, 1),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A/B of two iolab builds: the same workloads, alternating rounds, whole-process CPU per I/O.

Used to show that a change costs nothing per I/O (issue 13's refactor: "the bench shows no regression in CPU
per I/O"). Each round runs every workload once with binary A, then once with binary B (the order flips every
round, so drift in a shared VM hits both alike). CPU per I/O is iolab's own `cpu.cpu_ns_per_io` (whole-process
user + sys over the measurement window). The table gives the median over rounds and [min-max].

Usage: python3 bench/ab.py A_BINARY B_BINARY [--rounds 7] [--seconds 5] [--markdown FILE]
Example: git worktree add /tmp/base OLD && (cd /tmp/base && cargo build --release) &&
         python3 bench/ab.py /tmp/base/target/release/iolab target/release/iolab
"""
import argparse, json, statistics, subprocess, sys

WORKLOADS = [
    ("null:1G randread 4K qd32", ["--target", "null:1G", "--rw", "randread"]),
    ("mem:1G randread 4K qd32", ["--target", "mem:1G", "--rw", "randread"]),
    ("mem:1G randrw 70/30 4K qd32", ["--target", "mem:1G", "--rw", "randrw", "--read-pct", "70"]),
]


def one(binary, extra, seconds):
    cmd = [binary, "run", "--bs", "4k", "--qd", "32", "--duration", f"{seconds}s",
           "--ramp", "1s", "--no-save", "--json", "-", "-q", *extra]
    j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return j["total"]["all"]["iops"], j["cpu"]["cpu_ns_per_io"]


def fmt(values, digits=0):
    med = statistics.median(values)
    return f"{med:,.{digits}f} [{min(values):,.{digits}f}-{max(values):,.{digits}f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    got = {(w, s): ([], []) for w, _ in WORKLOADS for s in "ab"}
    for r in range(args.rounds):
        order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
        for name, extra in WORKLOADS:
            for side, binary in order:
                iops, cpu = one(binary, extra, args.seconds)
                got[(name, side)][0].append(iops)
                got[(name, side)][1].append(cpu)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    lines = ["| workload | build | IOPS | CPU per I/O (ns) | B/A CPU per I/O |", "|---|---|---|---|---|"]
    for name, _ in WORKLOADS:
        a_cpu = statistics.median(got[(name, "a")][1])
        for side, label in (("a", "A"), ("b", "B")):
            iops, cpu = got[(name, side)]
            ratio = f"{statistics.median(cpu) / a_cpu:.3f}x" if side == "b" else ""
            lines.append(f"| {name} | {label} | {fmt(iops)} | {fmt(cpu)} | {ratio} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""iolab vs fio, same machine, same sitting, alternating trials.

Workloads (issue 2):
  (a) 4K random read, QD32, O_DIRECT, one worker, 1 GiB file in /dev/shm (CPU-bound: measures software cost);
  (b) the same on a 1 GiB file on the main disk (device-bound: both tools should match);
  (c) iolab null: and mem: against fio's null engine (iolab's own overhead per I/O).

For each workload every tool runs once per round, rounds alternate the tools, and the table shows the median
over rounds (min-max in brackets). CPU is whole-process user+sys from getrusage(RUSAGE_CHILDREN) around each
run, so io_uring's io-wq worker threads count for both tools (fio's own cpu line leaves them out). CPU per
I/O = process CPU time / I/Os completed. Every run has no ramp, so CPU and I/O cover the same span.

The disk of a shared virtual machine drifts by +-20 % from minute to minute, so each table also gives the
*paired* ratios: iolab against each row within the same round (back to back), median over rounds.

Usage: python3 bench/vs_fio.py [--rounds 5] [--seconds 5] [--only abc] [--disk-dir DIR] [--markdown FILE]
Needs fio (apt-get install fio) and a release build (cargo build --release).
"""
import argparse, atexit, json, os, resource, shutil, signal, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The release binary where cargo put it: $CARGO_TARGET_DIR when set, else the repository's target/.
IOLAB = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "iolab")


def run_child(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def iolab(target, seconds, extra=()):
    cmd = [IOLAB, "run", "--target", target, "--rw", "randread", "--bs", "4k", "--qd", "32",
           "--duration", f"{seconds}s", "--ramp", "0", "--json", "-", "-q", "--no-save", *extra]
    out, cpu = run_child(cmd)
    j = json.loads(out)
    r = j["total"]["read"]
    ios = r["ops"]
    return {"iops": r["iops"], "lat_us": r["lat_ns"]["mean"] / 1e3, "cpu_ns_per_io": cpu * 1e9 / max(ios, 1)}


def fio(target, seconds, extra=(), engine="io_uring"):
    cmd = ["fio", "--name=bench", f"--filename={target}", "--rw=randread", "--bs=4k", "--iodepth=32",
           f"--ioengine={engine}", f"--runtime={seconds}", "--time_based", "--output-format=json", *extra]
    if engine != "null":
        cmd.append("--direct=1")
    else:
        cmd.append("--size=1g")
    out, cpu = run_child(cmd)
    j = json.loads(out[out.index("{"):])
    r = j["jobs"][0]["read"]
    ios = r["total_ios"]
    return {"iops": r["iops"], "lat_us": r["lat_ns"]["mean"] / 1e3, "cpu_ns_per_io": cpu * 1e9 / max(ios, 1)}


TUNED = ("--fixedbufs", "--registerfiles", "--iodepth_batch_submit=32", "--iodepth_batch_complete_max=32")


def make_file(path, size=1 << 30):
    if os.path.exists(path) and os.path.getsize(path) >= size:
        return
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size >> 20):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def summarize(samples):
    med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    lo = {k: min(s[k] for s in samples) for k in samples[0]}
    hi = {k: max(s[k] for s in samples) for k in samples[0]}
    return med, lo, hi


def bench(name, contenders, rounds):
    results = {label: [] for label, _ in contenders}
    for r in range(rounds):
        order = contenders if r % 2 == 0 else list(reversed(contenders))
        for label, fn in order:
            results[label].append(fn())
            print(f"  {name} round {r + 1}: {label}: {results[label][-1]['iops']:,.0f} IOPS", file=sys.stderr)
    return {label: (*summarize(s), s) for label, s in results.items()}


def remove_files(paths):
    for p in paths:
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--disk-dir", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--only", default="abc", help="which workloads to run: any of a, b, c")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio not found: apt-get install fio")
    if not os.path.exists(IOLAB):
        sys.exit("build first: cargo build --release")
    os.makedirs(a.disk_dir, exist_ok=True)
    shm = "/dev/shm/iolab-bench.dat"
    disk = os.path.join(a.disk_dir, "iolab-bench.dat")
    # The two 1 GiB files go whatever ends the script (an error, Ctrl-C): they are the benchmark's, not data.
    atexit.register(remove_files, [shm, disk])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    make_file(shm)
    make_file(disk)
    s = a.seconds
    sections = []
    if "a" in a.only: sections.append(("(a) 4K randread QD32 O_DIRECT, 1 GiB file in /dev/shm", bench("a", [
        ("iolab", lambda: iolab(shm, s)),
        ("fio io_uring (default)", lambda: fio(shm, s)),
        ("fio io_uring + fixedbufs, registerfiles, batch 32", lambda: fio(shm, s, TUNED)),
    ], a.rounds), "iolab"))
    if "b" in a.only: sections.append(("(b) 4K randread QD32 O_DIRECT, 1 GiB file on the main disk", bench("b", [
        ("iolab", lambda: iolab(disk, s)),
        ("fio io_uring (default)", lambda: fio(disk, s)),
        ("fio io_uring + fixedbufs, registerfiles, batch 32", lambda: fio(disk, s, TUNED)),
    ], a.rounds), "iolab"))
    if "c" in a.only: sections.append(("(c) own overhead: no I/O (iolab null:, mem:; fio null engine)", bench("c", [
        ("iolab null:1G", lambda: iolab("null:1G", s)),
        ("iolab mem:1G", lambda: iolab("mem:1G", s)),
        ("fio null", lambda: fio("/dev/null", s, engine="null")),
    ], a.rounds), "iolab null:1G"))

    lines = []
    kernel = os.uname().release
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    fio_v = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    lines.append(f"Machine: {os.cpu_count()} CPUs ({cpu}), Linux {kernel}, {fio_v}; {a.rounds} alternating rounds of {s} s, median [min-max].")
    lines.append("")
    for title, res, ref in sections:
        lines.append(f"### {title}")
        lines.append("")
        lines.append("| tool | IOPS | mean latency | whole-process CPU per I/O | iolab IOPS ratio | iolab CPU/IO ratio "
                     "| paired IOPS ratio | paired latency ratio |")
        lines.append("|---|---|---|---|---|---|---|---|")
        rmed, rs = res[ref][0], res[ref][3]
        for label, (med, lo, hi, ss) in res.items():
            ratio = rmed["iops"] / med["iops"] if med["iops"] else float("nan")
            cratio = med["cpu_ns_per_io"] / rmed["cpu_ns_per_io"] if rmed["cpu_ns_per_io"] else float("nan")
            # Same round, back to back: iolab / this row (IOPS) and this row / iolab (latency: > 1 = iolab lower).
            p_iops = statistics.median(x["iops"] / y["iops"] for x, y in zip(rs, ss) if y["iops"])
            p_lat = statistics.median(y["lat_us"] / x["lat_us"] for x, y in zip(rs, ss) if x["lat_us"])
            lines.append(
                f"| {label} | {med['iops']:,.0f} [{lo['iops']:,.0f}-{hi['iops']:,.0f}] | {med['lat_us']:.1f} µs "
                f"| {med['cpu_ns_per_io']:,.0f} ns | {ratio:.2f}x | {cratio:.2f}x | {p_iops:.2f}x | {p_lat:.2f}x |")
        lines.append("")
        if title.startswith("(c)"):
            io_null = res["iolab null:1G"][0]
            fio_null = res["fio null"][0]
            lines.append(f"iolab null: IOPS per CPU-second: {1e9 / io_null['cpu_ns_per_io']:,.0f}; fio null: "
                         f"{1e9 / fio_null['cpu_ns_per_io']:,.0f} ({fio_null['cpu_ns_per_io'] / io_null['cpu_ns_per_io']:.1f}x).")
            lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

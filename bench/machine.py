#!/usr/bin/env python3
"""Machine-state helpers for bench/core.sh (Linux /proc only, standard library only).

machine.py idle MAX_SECONDS     wait until other processes use < 0.25 core (checked over 1 s
                                windows), at most MAX_SECONDS; prints the busy cores seen last
machine.py snap PID             prints "wall busy_ticks total_ticks children_ticks": the machine's
                                busy and total CPU ticks, and the CPU ticks of PID's waited-for
                                children (cutime + cstime), for working out how much CPU *other*
                                processes used while a section of the benchmark ran
machine.py other START END      given two "snap" lines, prints the average cores used by
                                processes other than PID's children between them
machine.py env                  prints a JSON object describing the machine
"""

import json
import os
import platform
import subprocess
import sys
import time

from common import HZ, busy_cores, cpu_ticks


def children_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); cutime and cstime are fields 16 and 17.
    return int(fields[13]) + int(fields[14])


def idle(max_seconds):
    started = time.time()
    busy = busy_cores()
    while busy > 0.25 and time.time() - started < max_seconds:
        time.sleep(2)
        busy = busy_cores()
    print(f"{busy:.2f}")


def snap(pid):
    busy, total = cpu_ticks()
    print(f"{time.time():.3f} {busy} {total} {children_ticks(pid)}")


def other(start, end):
    w0, b0, t0, c0 = (float(x) for x in start.split())
    w1, b1, t1, c1 = (float(x) for x in end.split())
    ncpu = os.cpu_count() or 1
    machine = (b1 - b0) / max(1.0, t1 - t0) * ncpu
    own = (c1 - c0) / HZ / max(1e-9, w1 - w0)
    print(f"{max(0.0, machine - own):.2f}")


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def env():
    model = ""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1]
    except OSError:
        pass
    mem_gb = 0.0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem_gb = int(line.split()[1]) / 1e6
    except OSError:
        pass
    info = {
        "cpu": model,
        "cores": os.cpu_count(),
        "avx2": " avx2 " in flags,
        "mem_gb": round(mem_gb, 1),
        "kernel": platform.release(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "zstd": run(["zstd", "--version"]),
        "lz4": run(["lz4", "--version"]),
        "rustc": run(["rustc", "--version"]),
        "python": platform.python_version(),
    }
    print(json.dumps(info, indent=2))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "idle":
        idle(float(sys.argv[2]) if len(sys.argv) > 2 else 60)
    elif cmd == "snap":
        snap(int(sys.argv[2]))
    elif cmd == "other":
        other(sys.argv[2], sys.argv[3])
    elif cmd == "env":
        env()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

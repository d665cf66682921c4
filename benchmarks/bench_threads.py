"""Threads on a shared CPU: torch's default OpenMP threads vs ``OMP_WAIT_POLICY=PASSIVE`` vs one thread.

OpenMP threads spin while they wait for each other; when other work holds a core, a spinning thread steals
the time its partner needs, and a 2-thread training step can run 10x slower than a 1-thread one. With
``OMP_WAIT_POLICY=PASSIVE`` waiting threads sleep instead. The policy is read when the OpenMP runtime starts,
so every setting runs in a fresh process; settings alternate, ``--repeats`` rounds, best of each. Prints
training images/s of small_resnet18 and small_resnet50 (channels_last, batch 128, SGD), the ratio to the
default setting measured in the same run, and the load average (which decides the outcome: on an idle machine
the default spins profitably). The settings change no result: thread count and partitioning stay the same.

A fourth setting, "two 1-thread processes", runs two copies at once with one thread each and reports their
summed images/s: what the book runner gains by running two chapters side by side instead of one with two
threads. ``--load`` starts a process that keeps one core busy (a user's other work) during every measurement.

Run: python benchmarks/bench_threads.py [--seconds 10] [--repeats 2] [--load]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

SETTINGS = {
    "default (2 threads, spinning)": {},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "GOMP_SPINCOUNT=10000 (the book runner's)": {"GOMP_SPINCOUNT": "10000"},
    "1 thread": {"OMP_NUM_THREADS": "1"},
    "two 1-thread processes": {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE", "PAIR": "1"},
}
BUSY = "import time\nt = time.time()\nwhile time.time() - t < 3600: pass\n"

CHILD = """
import sys, time, torch, torch.nn.functional as F
from invlib import models
from invlib.train import TrainConfig, make_optimizer
name, seconds = sys.argv[1], float(sys.argv[2])
m = models.create(name, seed=0).to(memory_format=torch.channels_last)
opt = make_optimizer(m, TrainConfig())
x = torch.rand(128, 3, 28, 28).contiguous(memory_format=torch.channels_last)
y = torch.randint(0, 10, (128,))
def step():
    loss = F.cross_entropy(m(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
step()
t0, n = time.perf_counter(), 0
while time.perf_counter() - t0 < seconds:
    step()
    n += 1
print(n * 128 / (time.perf_counter() - t0))
"""


def run(model: str, env: dict, seconds: float) -> float:
    """Images/s of one child process, or the sum of two started together when ``env`` has ``PAIR``."""
    env = {**os.environ, **env}
    cmd = [sys.executable, "-c", CHILD, model, str(seconds)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2 if env.pop("PAIR", None) else 1)]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(f"benchmark child failed: {outs}")
    return sum(float(o.strip().splitlines()[-1]) for o in outs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["small_resnet18", "small_resnet50"])
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds per process")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--load", action="store_true", help="keep one core busy with another process meanwhile")
    args = parser.parse_args()
    busy = subprocess.Popen([sys.executable, "-c", BUSY]) if args.load else None
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    for model in args.models:
        best = dict.fromkeys(SETTINGS, 0.0)
        for _ in range(args.repeats):
            for label, env in SETTINGS.items():
                best[label] = max(best[label], run(model, env, args.seconds))
        base = best[next(iter(SETTINGS))]
        print(f"\n{model}: training images/s (x default)")
        for label, value in best.items():
            print(f"  {label:30s} {value:7.0f}  {value / base:6.2f}x")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end" + (" (one core kept busy)" if busy else ""))
    if busy:
        busy.kill()


if __name__ == "__main__":
    main()

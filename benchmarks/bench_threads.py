"""Threads on a shared CPU: torch's default OpenMP threads vs ``OMP_WAIT_POLICY=PASSIVE`` vs one thread.

OpenMP threads spin while they wait for each other; when other work holds a core, a spinning thread steals
the time its partner needs, and a 2-thread training step can run 10x slower than a 1-thread one. With
``OMP_WAIT_POLICY=PASSIVE`` waiting threads sleep instead. The policy is read when the OpenMP runtime starts,
so every setting runs in a fresh process; settings alternate, ``--repeats`` rounds, best of each. Prints
training images/s of small_resnet18 and small_resnet50 (channels_last, batch 128, SGD), the ratio to the
default setting measured in the same run, and the load average (which decides the outcome: on an idle machine
the default spins profitably). The settings change no result: thread count and partitioning stay the same.

Run: python benchmarks/bench_threads.py [--seconds 10] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

SETTINGS = {
    "default (2 threads, spinning)": {},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "1 thread": {"OMP_NUM_THREADS": "1"},
}

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
    out = subprocess.run([sys.executable, "-c", CHILD, model, str(seconds)], env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["small_resnet18", "small_resnet50"])
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds per process")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
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
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

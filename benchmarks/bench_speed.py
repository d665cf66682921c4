"""Training throughput of the zoo's small nets on CPU: which switches pay?

For each model, one training step loop (forward, cross-entropy, backward, SGD step) on random 28 px images,
timed under several switches against the bare model in the same run (eager, contiguous memory, fp32,
float input made beforehand, batch 128, ``--threads`` threads). Every variant after ``channels_last`` is
channels_last plus one more change:

| variant          | what changes                                                                    |
|------------------|---------------------------------------------------------------------------------|
| bare             | the baseline                                                                    |
| channels_last    | model and batches in channels_last memory format (what invlib.train.fit does)   |
| uint8 input      | + batches indexed from uint8 images and converted per step (the zoo's data)     |
| batch 32/64/256  | + another batch size (images/s only: the optimisation changes with it)          |
| 1 thread         | + ``torch.set_num_threads(1)`` (when ``--threads`` > 1)                          |
| bf16 autocast    | + ``torch.autocast("cpu", torch.bfloat16)`` (fast only with AVX512-BF16/AMX)     |
| compile          | + ``torch.compile(model)``; its compile seconds printed apart                    |
| invlib fit       | :func:`invlib.train.fit` with its defaults and crops.standard()                  |
| eval b1024/128/64| :func:`invlib.train.evaluate` (forward only) at three batch sizes; ratio to b1024 |

Variants run interleaved, ``--repeats`` rounds, best of each (robust to other load on the machine).
On a machine shared with other work, ``--threads 1`` gives steadier ratios: two OpenMP threads stall whenever
the other load takes one of the cores (measured: 44 vs 692 img/s for small_resnet18 at load 2.4 on 2 cores).
Run: python benchmarks/bench_speed.py [--models small_resnet18 small_resnet50] [--steps 12] [--repeats 2]
     [--threads 2] [--skip compile ...]
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.nn.functional as F

from invlib import models
from invlib.crops import standard
from invlib.train import TrainConfig, evaluate, fit, make_optimizer

VARIANTS = ("bare", "channels_last", "uint8 input", "batch 32", "batch 64", "batch 256", "1 thread", "bf16 autocast",
            "compile", "invlib fit", "eval b1024", "eval b128", "eval b64")


def _step_loop(model, images, labels, batch, steps, channels_last=False, uint8=False, bf16=False) -> float:
    """Images/s of ``steps`` training steps (after one untimed warm-up step)."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model.to(memory_format=fmt).train()
    opt = make_optimizer(model, TrainConfig(lr=0.01))
    src = images if uint8 else images.float().div(255)

    def step(i):
        idx = torch.arange(i * batch, (i + 1) * batch) % len(src)
        x = src[idx]
        x = (x.float().div_(255) if uint8 else x).contiguous(memory_format=fmt)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(x), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step(0)
    t0 = time.perf_counter()
    for i in range(1, steps + 1):
        step(i)
    return steps * batch / (time.perf_counter() - t0)


def measure(name: str, variant: str, images, labels, steps: int, compiled: dict) -> float:
    make = lambda: models.create(name, num_classes=10, in_chans=3, img_size=28, seed=0)
    if variant.startswith("eval"):
        n = steps * 256
        model = make().to(memory_format=torch.channels_last)
        evaluate(model, (images[:256], labels[:256]), 256)  # warm-up
        t0 = time.perf_counter()
        evaluate(model, (images[:n], labels[:n]), int(variant[6:]))
        return n / (time.perf_counter() - t0)
    if variant == "invlib fit":
        n = steps * 128
        t0 = time.perf_counter()
        fit(make(), (images[:n], labels[:n]), TrainConfig(epochs=1, batch_size=128, lr=0.01, device="cpu"),
            augment=standard(), progress=False)
        return n / (time.perf_counter() - t0)
    if variant == "1 thread":
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return _step_loop(make(), images, labels, 128, steps, channels_last=True)
        finally:
            torch.set_num_threads(threads)
    if variant == "compile":
        if name not in compiled:  # compile once per model; later rounds reuse it
            model = make()
            t0 = time.perf_counter()
            model = torch.compile(model.to(memory_format=torch.channels_last))
            _step_loop(model, images, labels, 128, 1, channels_last=True)  # compiles forward and backward
            compiled[name] = (model, time.perf_counter() - t0)
        return _step_loop(compiled[name][0], images, labels, 128, steps, channels_last=True)
    batch = int(variant.split()[1]) if variant.startswith("batch") else 128
    return _step_loop(make(), images, labels, batch, steps * 128 // batch, channels_last=variant != "bare",
                      uint8=variant == "uint8 input", bf16=variant == "bf16 autocast")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["small_resnet18", "small_resnet50"])
    parser.add_argument("--steps", type=int, default=12, help="timed steps of batch 128 per variant")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--skip", nargs="*", default=[], choices=VARIANTS[1:])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    variants = [v for v in VARIANTS if v not in args.skip and not (v == "1 thread" and args.threads == 1)]
    gen = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (args.steps * 256 + 512, 3, 28, 28), dtype=torch.uint8, generator=gen)
    labels = torch.randint(0, 10, (len(images),), generator=gen)
    load = os.getloadavg()[0]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs, "
          f"load average {load:.2f} at start; {args.steps} steps of 128 images per variant, best of {args.repeats}")
    for name in args.models:
        best, compiled = {v: 0.0 for v in variants}, {}
        for _ in range(args.repeats):
            for v in variants:
                best[v] = max(best[v], measure(name, v, images, labels, args.steps, compiled))
        print(f"\n{name}")
        print(f"  {'variant':15s} {'img/s':>8s} {'x bare':>7s}  (eval rows: x eval b1024)")
        for v in variants:
            extra = f"  (compile: {compiled[name][1]:.0f} s once)" if v == "compile" and name in compiled else ""
            base = best["eval b1024"] if v.startswith("eval") else best["bare"]
            print(f"  {v:15s} {best[v]:8.0f} {best[v] / base:7.2f}{extra}")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

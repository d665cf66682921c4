"""Probe pipeline throughput: invlib.papers.a.probes.extract (sample two views per image, crop + resize + colour op,
forward with every conv layer hooked and pooled, differences, feature statistics) in pairs/s, against the
same backbone's bare forward in images/s on pre-made channels-last batches.

A pair needs two forwards, so 0.5 pairs per bare image is the ceiling; the target is >= 0.4.
The speed of a shared 2-core machine drifts by tens of percent within a minute, so each round times the bare
forward on n images and the pipeline on n/2 pairs (the same number of forwards) back to back, takes their
ratio, and the median over rounds is reported.
Run: python benchmarks/bench_probes.py [--model small_resnet18] [--size 28] [--n 1024] [--rounds 7]
     [--tasks zoom_in hue ...] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from invlib import data, models
from invlib.papers.a import probes
from invlib.utils import resolve_device


def bare_forward(model, x: torch.Tensor, batch_size: int) -> float:
    """Images/s of ``model(x)`` alone, under inference_mode (bf16 autocast on CUDA, as the pipeline)."""
    device = x.device
    t0 = time.perf_counter()
    with torch.inference_mode(), torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
        for i in range(0, len(x), batch_size):
            model(x[i:i + batch_size])
    if device.type == "cuda":
        torch.cuda.synchronize()
    return len(x) / (time.perf_counter() - t0)


def pipeline(featurizer, images, boxes, task: str, size: int, batch_size: int, device) -> float:
    """Pairs/s of ``probes.extract`` (no cache), views rendered on ``device``."""
    t0 = time.perf_counter()
    feats = probes.extract(featurizer, images, boxes, task, size, batch_size=batch_size, device=device, cache=False)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return len(feats) / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="small_resnet18")
    ap.add_argument("--size", type=int, default=28, help="backbone input side")
    ap.add_argument("--n", type=int, default=1024, help="bare images per round (the pipeline makes n/2 pairs)")
    ap.add_argument("--batch", type=int, default=128, help="images per forward, both runs")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tasks", nargs="+", default=list(probes.TASKS))
    ap.add_argument("--device", default="auto")
    args = ap.parse_args(argv)
    device = resolve_device(args.device)
    torch.manual_seed(0)
    ds = data.load("fashion_mnist_color", "train", n=args.n, seed=0)
    images, boxes = probes.add_margin(ds.images, ds.boxes, 1.5)
    model = models.create(args.model).to(device).eval()
    featurizer = probes.Backbone(model)
    x = torch.rand(args.n, 3, args.size, args.size, device=device)
    if device.type == "cpu":
        model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    bare_forward(model, x[: args.batch], args.batch)  # warm-up
    print(f"{args.model} at {args.size} px on {device}, {torch.get_num_threads()} threads, batch {args.batch}, "
          f"{args.n} images per round, {args.rounds} rounds, layers probed: {len(probes.conv_layers(model))}")
    worst = 1.0
    half = args.n // 2
    for task in args.tasks:
        bare, piped, ratios = [], [], []
        pipeline(featurizer, images[: args.batch], boxes[: args.batch], task, args.size, args.batch, device)
        for r in range(args.rounds):
            pick = slice((r * half) % (len(images) - half + 1), None)  # other images each round
            bare.append(bare_forward(model, x, args.batch))
            piped.append(pipeline(featurizer, images[pick][:half], boxes[pick][:half], task, args.size, args.batch,
                                  device))
            ratios.append(piped[-1] / bare[-1])
        b, p, ratio = statistics.median(bare), statistics.median(piped), statistics.median(ratios)
        worst = min(worst, ratio)
        print(f"  {task:12s} bare forward {b:8.0f} img/s | probe pipeline {p:8.0f} pairs/s | "
              f"ratio {ratio:.2f} (ceiling 0.50, target >= 0.40)")
    print("PASS" if worst >= 0.4 else "FAIL", f"worst ratio {worst:.2f}")
    return 0 if worst >= 0.4 else 1


if __name__ == "__main__":
    sys.exit(main())

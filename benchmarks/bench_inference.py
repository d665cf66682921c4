"""Forward passes of a measurement: ``models.batched`` on an eval-mode model as it is, against the same model with
its BatchNorms folded into the convolutions (``models.for_inference``, what ``batched`` and ``features`` run).

Each model is warmed up first (the first few thousand images of a process run slower), then the two are timed
alternately, ``--repeats`` times each, on one thread; prints images/s (best run), their ratio and the largest
difference of the logits.
Run: python benchmarks/bench_inference.py [--n 2048] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import torch

from invlib import models

CASES = (("small_resnet18", 28), ("small_resnet18_s4", 56), ("small_resnet50_s2", 28), ("conv4", 32),
         ("small_vit_p14_cls", 56))


def images_per_s(fn, x: torch.Tensor) -> float:
    t0 = time.perf_counter()
    models.batched(fn, x)
    return len(x) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"{'model':20s} {'px':>3s} {'as is':>9s} {'folded':>9s} {'ratio':>6s} {'max |diff|':>10s}")
    for name, px in CASES:
        net = models.create(name, img_size=px).eval()
        x = torch.randint(0, 256, (args.n, 3, px, px), dtype=torch.uint8)
        as_is = lambda b, net=net: net(b)  # a lambda is run as it is
        images_per_s(as_is, x), images_per_s(net, x)  # warm-up of both
        plain, folded = [], []
        for _ in range(args.repeats):
            plain.append(images_per_s(as_is, x))
            folded.append(images_per_s(net, x))
        diff = (models.batched(as_is, x[:256]) - models.batched(net, x[:256])).abs().max().item()
        print(f"{name:20s} {px:3d} {max(plain):9.0f} {max(folded):9.0f} {max(folded) / max(plain):6.2f} {diff:10.1e}")


if __name__ == "__main__":
    main()

"""Forward passes of a measurement: ``models.batched`` on an eval-mode model as it is, against the same model with
its BatchNorms folded into the convolutions (``models.for_inference``, what ``batched`` and ``features`` run), and,
for an architecture the book trains under bf16 autocast on a CPU with bf16 instructions (``zoo.BF16_ARCHS``), the
folded model marked bf16 (``models.mark_precision``: measured under the autocast it trained in).

Each model is warmed up first (the first few thousand images of a process run slower), then the two are timed
alternately, ``--repeats`` times each, on one thread; prints images/s (best run), their ratio and the largest
difference of the logits.
Run: python benchmarks/bench_inference.py [--n 2048] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from invlib import models
from invlib.train import cpu_has_bf16
from invlib.zoo import BF16_ARCHS

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
    print(f"capability: {torch.backends.cpu.get_cpu_capability()}, bf16 instructions: {cpu_has_bf16()}")
    print(f"{'model':20s} {'px':>3s} {'as is':>9s} {'folded':>9s} {'ratio':>6s} {'max |diff|':>10s} "
          f"{'bf16':>9s} {'bf16/fold':>9s} {'max |diff|':>10s}")
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
        line = f"{name:20s} {px:3d} {max(plain):9.0f} {max(folded):9.0f} {max(folded) / max(plain):6.2f} {diff:10.1e}"
        if name in BF16_ARCHS:  # the same weights, marked: measured under bf16 autocast
            marked = models.mark_precision(copy.deepcopy(net), "bf16")
            images_per_s(marked, x)
            half = []
            for _ in range(args.repeats):  # alternated with the float32 folded model, as above
                folded.append(images_per_s(net, x))
                half.append(images_per_s(marked, x))
            d16 = (models.batched(net, x[:256]) - models.batched(marked, x[:256])).abs().max().item()
            line += f" {max(half):9.0f} {max(half) / max(folded):9.2f} {d16:10.1e}"
        print(line)


if __name__ == "__main__":
    main()

"""Training-loop overhead: invlib.train.fit (uint8 data indexing, float conversion, batched RRC + flip
augmentation, LR schedule, metrics, progress) vs a bare forward/backward/step loop on pre-made tensors.

Prints images/s for both and their ratio (target >= 0.85). Same model, optimizer, batch and images.
Run: python benchmarks/bench_train.py [--model small_resnet18] [--n 3072] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from invlib import models
from invlib.crops import standard
from invlib.train import TrainConfig, fit, make_optimizer


def bare_loop(model, x, y, cfg) -> float:
    """Images/s of the minimal loop: pre-made float channels_last batches, forward, backward, step."""
    opt = make_optimizer(model, cfg)
    batches = [(x[i:i + cfg.batch_size].contiguous(memory_format=torch.channels_last), y[i:i + cfg.batch_size])
               for i in range(0, len(x) - cfg.batch_size + 1, cfg.batch_size)]
    model.train()
    t0 = time.perf_counter()
    for xb, yb in batches:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return len(batches) * cfg.batch_size / (time.perf_counter() - t0)


def invlib_loop(model, images_u8, y, cfg) -> float:
    t0 = time.perf_counter()
    hist = fit(model, (images_u8, y), cfg, augment=standard(), progress=True)
    steps = len(images_u8) // cfg.batch_size
    return steps * cfg.batch_size / (time.perf_counter() - t0) if hist else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="small_resnet18")
    parser.add_argument("--n", type=int, default=3072)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    images = torch.randint(0, 256, (args.n, 3, 28, 28), dtype=torch.uint8)
    labels = torch.randint(0, 10, (args.n,))
    x = images.float() / 255
    cfg = TrainConfig(epochs=1, batch_size=128, device="cpu")
    make = lambda: models.create(args.model, img_size=28).to(memory_format=torch.channels_last)
    bare_loop(make(), x[:512], labels[:512], cfg)  # warm-up (allocator, kernels)
    bare, ours = [], []
    for _ in range(args.repeats):  # interleaved, best of each: robust to other load on the machine
        bare.append(bare_loop(make(), x, labels, cfg))
        ours.append(invlib_loop(make(), images, labels, cfg))
    print(f"bare loop      : {max(bare):7.1f} img/s  (runs: {', '.join(f'{v:.0f}' for v in bare)})")
    print(f"invlib fit     : {max(ours):7.1f} img/s  (runs: {', '.join(f'{v:.0f}' for v in ours)})")
    print(f"train: invlib fit (uint8 loading + RRC/flip augmentation) runs at {max(ours) / max(bare):.2f}x "
          f"the bare loop ({args.model}, batch {cfg.batch_size}, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()

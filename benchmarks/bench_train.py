"""Training-loop overhead: invlib.train.fit (uint8 data indexing, float conversion, batched RRC + flip
augmentation, LR schedule, metrics, progress) vs a bare forward/backward/step loop on pre-made tensors.

Prints images/s for both and their ratio (target >= 0.85). Same model, optimizer, batch and images.
``--scenes``: also the bare step on ``scenes`` canvases (56 px) with ``small_resnet18_s4`` (torchvision's stem:
paper B's cpu models), ``small_resnet18_s2`` (stride-2 stem), ``small_vit_p14`` beside ``small_vit`` at 28 px and,
for scale, plain ``small_resnet18`` at 56 px, each as a ratio of cost to the 28 px step in the same run.
``--book-step``: also the same bare loop on one thread under bf16 autocast (where the CPU has bf16 instructions), the
step most of the book's training takes: the float32 two-thread loop is the budgets' yardstick, but between sessions
the two have moved by different amounts (benchmarks/measurements/foundation.md), so a build's note gives both.
Run: python benchmarks/bench_train.py [--model small_resnet18] [--n 3072] [--repeats 2] [--scenes] [--book-step]
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


def book_step(model, x, y, cfg, repeats: int) -> float:
    """Best images/s of :func:`bare_loop` on one thread under bf16 autocast (the book's chapters train on one thread,
    its ResNets under bf16 where the CPU has it); the thread count is restored."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return max(bare_loop(model(), x, y, cfg) for _ in range(repeats))
    finally:
        torch.set_num_threads(threads)


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
    parser.add_argument("--scenes", action="store_true", help="also compare the step on 56 px scenes")
    parser.add_argument("--book-step", action="store_true", help="also the bare loop on one thread under bf16")
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
    if args.book_step:
        from invlib.train import cpu_has_bf16

        if cpu_has_bf16():
            v = book_step(make, x[:1536], labels[:1536], cfg, args.repeats)
            print(f"book step      : {v:7.1f} img/s  (the bare loop on 1 thread under bf16 autocast; "
                  f"{v / max(bare):.2f}x the two-thread float32 loop)")
        else:
            print("book step      : not measured (this CPU has no bf16 instructions: the book trains in float32)")
    if args.scenes:
        scene_steps(x[:, :, :28, :28], labels, cfg, args.repeats)


def scene_steps(x28, labels, cfg, repeats: int) -> None:
    """Bare-loop images/s on real ``scenes`` images vs the 28 px step, interleaved, best of ``repeats``."""
    from invlib import data

    scenes = data.load("scenes", "train", n=len(labels), seed=0).float()
    runs = {"small_resnet18 @ 28 px (today)": ("small_resnet18", x28),
            "small_resnet18_s4 @ 56 px scenes": ("small_resnet18_s4", scenes),
            "small_resnet18_s2 @ 56 px scenes": ("small_resnet18_s2", scenes),
            "small_resnet18 @ 56 px scenes": ("small_resnet18", scenes),
            "small_vit @ 28 px": ("small_vit", x28),
            "small_vit_p14 @ 56 px scenes": ("small_vit_p14", scenes)}
    best = {k: 0.0 for k in runs}
    for _ in range(repeats):
        for key, (arch, x) in runs.items():
            net = models.create(arch).to(memory_format=torch.channels_last)
            best[key] = max(best[key], bare_loop(net, x, labels, cfg))
    base = best["small_resnet18 @ 28 px (today)"]
    for key, v in best.items():
        print(f"{key:34s}: {v:7.1f} img/s, cost per image {base / v:.2f}x today's 28 px step")


if __name__ == "__main__":
    main()

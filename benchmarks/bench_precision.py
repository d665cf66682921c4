"""bf16 autocast against float32 on the CPU, for every architecture the book trains (issue 58, item 7).

For each family (architecture, input side, channels), the bare training step (forward, loss, backward, SGD step on
pre-made batches, as ``bench_train.bare_loop``) in float32 and under ``torch.autocast("cpu", torch.bfloat16)``,
the two alternated ``--repeats`` times and the best of each kept, on the threads the book's chapters use (1). The
ratio bf16 / float32 is what a family would gain; it depends on the CPU's bf16 instructions, so the script prints
``torch.backends.cpu.get_cpu_capability()``. Run it again with ``ATEN_CPU_CAPABILITY=avx2`` to see a machine
without them.

Run: python benchmarks/bench_precision.py [--repeats 3] [--steps 6] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from invlib import models

# (architecture, side, channels, classes, batch[, widths]): the families of the book's cpu profile; the narrow
# conv4 of chapters D1 (32 px), D3 (16 px) and E1 (Fashion-MNIST, 28 px, one channel) with its widths
FAMILIES = [
    ("small_resnet18", 28, 3, 10, 128),
    ("small_resnet50", 28, 3, 10, 128),
    ("small_vit", 28, 3, 10, 64),
    ("small_resnet18_s4", 56, 3, 10, 128),
    ("small_resnet18_s2", 64, 3, 10, 128),
    ("small_vit_p14", 56, 3, 10, 64),
    ("conv4", 32, 3, 10, 128),
    ("conv4", 32, 3, 4, 64, (8, 16, 32, 64)),
    ("conv4", 16, 3, 10, 64, (8, 16, 32, 64)),
    ("conv4", 28, 1, 4, 128, (8, 16, 32, 64)),
    ("signal_cnn", 1000, 1, 4, 128),
    ("signal_mlp", 1000, 1, 4, 128),
]


def step_rate(model, batches, bf16: bool) -> float:
    """Images/s of forward, loss, backward and SGD step over ``batches``."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.train()
    t0 = time.perf_counter()
    for xb, yb in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return sum(len(y) for _, y in batches) / (time.perf_counter() - t0)


def measure(arch: str, side: int, channels: int, classes: int, batch: int, widths: tuple | None = None, *,
            steps: int, repeats: int) -> dict:
    torch.manual_seed(0)
    signal = arch.startswith("signal")
    shape = (channels, side) if signal else (channels, side, side)
    kwargs = {} if signal or arch in ("conv4",) else {"img_size": side}
    kwargs.update({"widths": widths} if widths else {})
    model = models.create(arch, num_classes=classes, in_chans=channels, **kwargs)
    layout = torch.contiguous_format if signal else torch.channels_last
    model = model.to(memory_format=layout)
    batches = [(torch.rand(batch, *shape).contiguous(memory_format=layout), torch.randint(0, classes, (batch,)))
               for _ in range(steps)]
    step_rate(model, batches[:2], False), step_rate(model, batches[:2], True)  # warm-up both paths
    f32, b16 = [], []
    for _ in range(repeats):  # alternated, so a drift in the machine's speed touches both alike
        f32.append(step_rate(model, batches, False))
        b16.append(step_rate(model, batches, True))
    name = f"{arch} {tuple(widths)}" if widths else arch
    return dict(arch=name, side=side, f32=max(f32), bf16=max(b16), ratio=max(b16) / max(f32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="architectures to measure (default: every family)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"cpu capability {torch.backends.cpu.get_cpu_capability()}, torch {torch.__version__}, "
          f"{args.threads} thread(s)")
    print("| architecture | side | float32 img/s | bf16 img/s | bf16 / float32 |")
    print("|---|---:|---:|---:|---:|")
    for fam in FAMILIES:
        if args.only and fam[0] not in args.only:
            continue
        r = measure(*fam, steps=args.steps, repeats=args.repeats)
        print(f"| {r['arch']} | {r['side']} | {r['f32']:.0f} | {r['bf16']:.0f} | {r['ratio']:.2f} |", flush=True)


if __name__ == "__main__":
    main()

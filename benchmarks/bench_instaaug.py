"""InstaAug's training step against a random-crop step and the bare classifier, in one run (paper D, App. D.3).

Chapter D2's setting: ``scenes`` at 56 px, ``small_resnet18_s4``, batch 128, SGD. Three steps are timed with
:func:`invlib.train.fit` on the same images (one epoch each, after a one-epoch warm-up):

- **bare**: the classifier, no augmentation;
- **random crop**: :class:`invlib.learned.instaaug.RandomCrop` (area 0.1 to 1);
- **InstaAug**: the location-related parameterisation (246 crops) with the objective's REINFORCE step.

Printed: images/s of each and the ratios InstaAug / random crop (the paper: 0.25 s vs 0.15 s per iteration on a
1080Ti, 1.7x) and InstaAug / bare. Absolute speeds depend on the machine; ratios within one run do not. Run with
nothing else on the machine.

Run: python benchmarks/bench_instaaug.py [--n 2048] [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import torch

from invlib import data, models
from invlib import train as _train
from invlib.learned import instaaug


def epoch_seconds(make, images, augment=None, loss=None) -> float:
    cfg = _train.TrainConfig(epochs=1, batch_size=128, lr=0.05, aug_lr=0.05)
    _train.fit(make(), images, cfg, augment=augment, loss=loss, progress=False)  # warm-up
    net = make()
    t0 = time.perf_counter()
    _train.fit(net, images, cfg, augment=augment, loss=loss, progress=False)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    ds = data.load("scenes", "train", n=args.n, size=56)
    k = len(ds.classes)

    def bare():
        return models.create("small_resnet18_s4", num_classes=k, seed=0)

    def insta():
        return instaaug.instaaug(bare(), instaaug.LRPCrops(56, sides=(0.43, 0.86)))

    out = dict(bare=epoch_seconds(bare, ds), random_crop=epoch_seconds(bare, ds, instaaug.RandomCrop((0.1, 1.0))),
               instaaug=epoch_seconds(insta, ds, loss=instaaug.objective(instaaug.EntropyBand(3.0, 3.5), 5)))
    for name, s in out.items():
        print(f"{name:12s} {args.n / s:8.1f} img/s")
    print(f"InstaAug / random crop: {out['instaaug'] / out['random_crop']:.2f}x time per step (paper: 1.7x)")
    print(f"InstaAug / bare:        {out['instaaug'] / out['bare']:.2f}x")
    return out


if __name__ == "__main__":
    main()

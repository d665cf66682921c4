"""How steady chapter D2's timed cost ratio is (App. D.3's claim ``appD3/cost``): the statistic at a number of rounds.

Fresh models at D2's settings (InstaAug with its objective, the tuned random crop) take turns on the same batches
through :func:`invlib.train.step_seconds`, as :func:`invlib.papers.d.cropping.step_costs` steps the trained ones;
each repeat prints both statistics: the ratio of the arms' median seconds per step, and the median of each round's
own ratio (what the claim reads since 2026-12-01). Run it once alone and once beside another process to see what
a busy machine does to each. One thread, as the book's chapters run.

Run: python benchmarks/bench_step_cost.py [--rounds 32] [--repeats 4] [--profile cpu]
"""

from __future__ import annotations

import argparse

import torch

from invlib import train as T
from invlib.learned import instaaug
from invlib.papers.d import cropping as C


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=C.COST_ROUNDS)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--profile", default="cpu")
    args = ap.parse_args()
    torch.set_num_threads(1)
    S = C.settings(args.profile, progress=False)
    train_set = C.scene_data(S)[0]
    steps = T.steps_per_epoch(S.n_train, S.batch_size)
    for rep in range(args.repeats):
        arms = {"instaaug": (C.model(S, "instaaug", 10, rep)[0], None, C.recipe(S).objective(steps)),
                "random_crop": (C.model(S, "none", 10, rep)[0], instaaug.RandomCrop(S.scales[0]), None)}
        t = T.step_seconds(arms, train_set, C._config(S, rep), rounds=args.rounds, warmup=C.COST_WARMUP)
        c = C.cost_of(t)
        print(f"repeat {rep}, {args.rounds} rounds: InstaAug {c['instaaug'] * 1e3:.1f} ms, random crop "
              f"{c['random_crop'] * 1e3:.1f} ms a step; ratio of medians {c['instaaug'] / c['random_crop']:.3f}, "
              f"median of the rounds' ratios (the claim's) {c['ratio']:.3f}", flush=True)


if __name__ == "__main__":
    main()

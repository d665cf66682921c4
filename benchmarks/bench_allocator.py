"""The memory allocator the book's processes run under: glibc's malloc against tcmalloc and jemalloc.

PyTorch on a CPU allocates and frees tensors at every operation of a training step. glibc's malloc hands large
blocks back to the system when they are freed and asks for them again at the next step; tcmalloc and jemalloc keep
them. The book's training phase and its chapters' kernels start under the first one installed
(:func:`invlib.utils.allocator_env`). An allocator decides where memory comes from, not what is computed: each run
here prints a hash of the trained weights, which must be the same under every allocator.

Each measurement trains one of the book's own zoo models from scratch, as the training phase does (one thread, the
precision the book trains it in, a fresh cache), in a fresh process started under the allocator (it is preloaded at
start: ``LD_PRELOAD``). The allocators alternate, ``--repeats`` rounds, best of each; the ratio is to glibc's in the
same run, with the load average beside it. The models: one of paper B's (small_resnet18_s4 on 56 px scenes, 2,000 x
14 epochs), one of paper C's (small_resnet18 on Fashion-MNIST, 3,000 x 3) and S1's ViT (small_vit_p14_cls on scenes,
cut to 1 epoch: ``--full`` trains its 8).

Run: python benchmarks/bench_allocator.py [--repeats 2] [--full]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from invlib.utils import ALLOCATORS, allocator_env

# (label, chapter, which of its zoo specs, epochs or None for the spec's own)
MODELS = [("paper B: small_resnet18_s4/rrc", "b1_rrc_decomposition", 0, None),
          ("paper C: small_resnet18/none", "c1_invariance_equivariance", 0, None),
          ("S1: small_vit_p14_cls/none", "s1_measures_agree", 43, 1)]

CHILD = """
import hashlib, os, sys, time, torch
from invlib import papers, zoo
chapter, index, epochs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = papers.zoo_specs(chapter, "cpu", {})[index]
s = s if epochs == "None" else s.replace(epochs=int(epochs))
t0 = time.perf_counter()
model = zoo.get(s, progress=False)
seconds = time.perf_counter() - t0
weights = b"".join(v.detach().float().numpy().tobytes() for v in model.state_dict().values())
print(f"{seconds:.3f} {hashlib.sha1(weights).hexdigest()[:12]} {s.n_train * s.epochs}")
"""


def run(chapter: str, index: int, epochs: int | None, env: dict) -> tuple[float, str, int]:
    """(seconds, weights' hash, images) of one model trained in a fresh process with ``env`` added."""
    with tempfile.TemporaryDirectory() as cache:
        base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        out = subprocess.run([sys.executable, "-c", CHILD, chapter, str(index), str(epochs)], check=True, text=True,
                             capture_output=True, env={**base, "INVLIB_CACHE": cache, "OMP_NUM_THREADS": "1",
                                                       "OMP_WAIT_POLICY": "PASSIVE", "INVLIB_PROGRESS": "0", **env})
    seconds, digest, images = out.stdout.split()[-3:]
    return float(seconds), digest, int(images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="train the ViT's 8 epochs, not 1")
    args = parser.parse_args()
    settings = {"glibc malloc": {}}
    for name in ALLOCATORS:
        try:
            settings[name] = allocator_env(name)
        except RuntimeError as err:
            print(f"{name}: not measured ({err})")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    for label, chapter, index, epochs in MODELS:
        epochs = None if args.full else epochs
        best, digests, images = {}, {}, 0
        for _ in range(args.repeats):
            for name, env in settings.items():
                seconds, digest, images = run(chapter, index, epochs, env)
                best[name] = min(best.get(name, float("inf")), seconds)
                digests.setdefault(name, set()).add(digest)
        base = best["glibc malloc"]
        same = len(set().union(*digests.values())) == 1
        print(f"\n{label} ({images:,} training images): seconds, best of {args.repeats} (x glibc's speed)")
        for name, seconds in best.items():
            print(f"  {name:14s} {seconds:7.2f} s  {base / seconds:5.2f}x  weights {'/'.join(sorted(digests[name]))}")
        print(f"  the same weights under every allocator: {'yes' if same else 'NO'}")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

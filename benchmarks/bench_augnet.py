"""One epoch of chapter E1 at the paper's size: our AugNet against the authors' code, in one run.

The setting is section 4.1 of the AugNet paper: 10,000 sprites of 32 px, batch 128, the 4-conv trunk of
width 32 and one layer of the five affine ops. Training uses Adam with weight decay on every parameter.
Four things are timed, each on the images/s of one epoch:

- **authors**: their ``trainer`` from ``experiments/mario_iggy/augnet_training.py``, run in a subprocess
  with ``--authors-python`` (an environment for their code; see ``benchmarks/authors/README.md``).
- **ours**: :func:`invlib.train.fit` on :func:`invlib.papers.e.experiments.sprite_augnet`.
- **trunk alone**: our trunk, bare forward, backward and Adam step on pre-made float batches in
  channels_last, after two warm-up steps. This is the floor that any AugNet step pays.
- **per op**: forward and backward of each op of our layer on one batch, to show where the layer's time goes.

The ratios are our speed over theirs (target >= 3) and our time over the trunk alone's. Absolute
seconds depend on the machine; the ratios in one run do not. Run with nothing else on the machine.

Run: python benchmarks/bench_augnet.py --repo ~/augnet --authors-python ~/augnet-venv/bin/python
     [--n 10000] [--width 32] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from invlib import models
from invlib import train as _train
from invlib.learned import augnet
from invlib.papers.e import experiments as E

AUTHORS_EPOCH = """
import json, sys, time, contextlib, io
import torch
sys.path.insert(0, {repo!r})
torch.set_num_threads({threads})
from augnet import losses, models
from augnet.utils import set_global_rngs
from experiments.mario_iggy.augnet_training import create_augnet_layer, trainer
from experiments.mario_iggy.generate_data import generate_mario_data
set_global_rngs(0)
loader, _ = generate_mario_data(ntrain={n}, ntest=128, batch_size=128, dpath={data!r})
model = models.AugAveragedModel(models.SimpleConv(c={width}, num_classes=4), create_augnet_layer(1 / 8), ncopies=1)
t0 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    trainer(model=model, trainloader=loader, reg=0.5, criterion=losses.aug_layer_loss, epochs=1, lr=5e-4,
            decay=1.0, device="cpu")
print(json.dumps(dict(seconds=time.perf_counter() - t0, torch=torch.__version__)))
"""


def authors_epoch(python: str, repo: Path, n: int, width: int, threads: int) -> dict:
    code = AUTHORS_EPOCH.format(repo=str(repo), threads=threads, n=n, width=width,
                                data=str(repo / "experiments" / "mario_iggy") + "/")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, cwd=str(repo))
    return json.loads(out.stdout.strip().splitlines()[-1])


def ours_epoch(n: int, width: int) -> float:
    S = E.settings("cpu", experiment="sprites", n_train=n, n_test=1, epochs=1, widths=[width * 2**i for i in range(4)])
    train, _ = E.sprite_data(S)
    net = E.sprite_augnet(S, models.create("conv4", num_classes=4, in_chans=3, widths=S.widths, seed=0))
    t0 = time.perf_counter()
    _train.fit(net, train, E.sprite_config(S), progress=False)
    return time.perf_counter() - t0


def trunk_epoch(n: int, width: int) -> float:
    net = models.create("conv4", num_classes=4, in_chans=3, widths=[width * 2**i for i in range(4)], seed=0)
    net = net.to(memory_format=torch.channels_last).train()
    opt = torch.optim.Adam(net.parameters(), lr=5e-4, weight_decay=1.0)
    g = torch.Generator().manual_seed(0)
    batches = [(torch.rand(128, 3, 32, 32, generator=g).contiguous(memory_format=torch.channels_last),
                torch.randint(0, 4, (128,), generator=g)) for _ in range(4)]
    steps = -(-n // 128)
    t0 = 0.0
    for i in range(-2, steps):  # two warm-up steps first (oneDNN builds its kernels), then one epoch
        if i == 0:
            t0 = time.perf_counter()
        x, y = batches[i % len(batches)]
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return time.perf_counter() - t0


def per_op_ms(repeats: int = 5) -> dict[str, float]:
    x = torch.rand(128, 3, 32, 32)
    out = {}
    for name in augnet.GROUPS["geometric"]:
        layer = augnet.AugLayer([name], init_magnitude=0.5)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            layer(x).sum().backward()
            best = min(best, time.perf_counter() - t0)
        out[name] = 1000 * best
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", type=Path, help="a checkout of github.com/cedricrommel/augnet (omit: ours only)")
    p.add_argument("--authors-python", default=sys.executable, help="python of an environment for their code")
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = {}
    if args.repo:
        theirs = authors_epoch(args.authors_python, args.repo.expanduser(), args.n, args.width, args.threads)
        rows[f"authors (torch {theirs['torch']})"] = theirs["seconds"]
    rows[f"ours (torch {torch.__version__})"] = ours_epoch(args.n, args.width)
    rows["trunk alone (ours)"] = trunk_epoch(args.n, args.width)
    print(f"one epoch of E1: {args.n} sprites, 32 px, batch 128, trunk width {args.width}, {args.threads} threads")
    for name, s in rows.items():
        print(f"  {name:28s} {s:7.1f} s  {args.n / s:7.0f} img/s")
    names = list(rows)
    if args.repo:
        print(f"ours / authors (speed): {rows[names[0]] / rows[names[1]]:.2f}x (target >= 3)")
    print(f"ours / trunk alone (time): {rows[names[-2]] / rows[names[-1]]:.2f}x: what the layer, data and "
          "bookkeeping add to the trunk's own step")
    print("our layer's ops, forward + backward on one batch of 128 (ms): "
          + ", ".join(f"{k} {v:.1f}" for k, v in per_op_ms().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

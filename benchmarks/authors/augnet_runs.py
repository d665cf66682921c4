"""Run the AugNet authors' own code on this machine and record what it learns, as facts for chapters E1-E3.

Paper E (Rommel, Moreau, Gramfort, 2022) has public code: https://github.com/cedricrommel/augnet. Chapters
E1-E3 compare our AugNet with it on the same seeds. This script imports *their* modules from a checkout of
their repository and calls their data generators, layers and training loops. Nothing of theirs is copied into
``invlib``. What it writes are numbers: one record per run in ``invlib/papers/e/authors_augnet.json``, which
the chapters read through :func:`invlib.papers.e.experiments_reports.authors_runs`.

Every record holds the code's commit, the date, the torch version, the wall seconds and, for each epoch, the
weight of every operation and its largest value. Values are in the units of :data:`invlib.learned.UNITS`
(radians for rotate, fractions of the side for translations, Hz for frequency shift).

Experiments (their scripts' settings, see ``experiments/*/run_experiments.sh`` in their repository):

- ``sprites`` (section 4.1, their ``mario_iggy/augnet_training.py``): 10,000 Mario/Iggy sprites, 32 px, batch
  128, their 5-op layer, Adam lr 5e-4 with weight decay 1 on every parameter, reg 0.5, initial magnitude 1/8.
  ``--trunk shared`` keeps their script's behaviour: the trunk is built after the data under their fixed
  data seed, so every seed shares one initialisation and the seed changes only the data order and the
  augmentation draws. ``--trunk seed`` seeds the trunk's initialisation with the run's seed as well.
- ``sinusoids`` (section 4.2, their ``sinusoids/train_augnet.py``): the 3-op layer, CNN trunk (2 filters,
  2 layers), lr 0.01, reg 0.2, noise 0.5, 50 epochs. Their seed sets the data, the trunk and the draws.
- ``capacity`` (section 4.3): their MLP trunk with ``--trunks DEPTHxWIDTH``, frequency shift alone, C = 10,
  initial magnitude 0.05, reg 0.8, plus the baseline (no augmentation) and the oracle (their ``--augment``).

Set-up (a separate environment: their code needs braindecode, scikit-learn and pandas): see README.md here.

Run:
    python benchmarks/authors/augnet_runs.py sprites --repo ~/augnet --seeds 0 1 2 3 4 5 --epochs 3 \
        --trunk shared seed
    python benchmarks/authors/augnet_runs.py sinusoids --repo ~/augnet --seeds 0 1 2 3 4 5
    python benchmarks/authors/augnet_runs.py capacity --repo ~/augnet --trunks 1x16 2x64 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import glob
import io
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "invlib" / "papers" / "e" / "authors_augnet.json"
SPRITE_OPS = ["translate_x", "translate_y", "rotate", "shear_x", "shear_y"]  # their layer's order
# what one unit of an op's reported magnitude is, in our units (their Rotate reports degrees)
TO_OURS = {"rotate": math.pi / 180}
SIGNAL_OPS = {"DiffFrequencyShift": "frequency_shift", "DiffFTSurrogate": "ft_surrogate",
              "DiffGaussianNoise": "gaussian_noise"}


def _commit(repo: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return (repo / "COMMIT").read_text().strip() if (repo / "COMMIT").exists() else "unknown"


def _meta(repo: Path) -> dict:
    import torch

    return dict(code="authors", repository="github.com/cedricrommel/augnet", commit=_commit(repo),
                date=datetime.date.today().isoformat(), torch=torch.__version__, threads=torch.get_num_threads())


def _leader(weights: dict) -> tuple[str, float]:
    name = max(weights, key=weights.get)
    return name, weights[name]


def _save(records: list[dict], out: Path) -> None:
    """Add ``records`` to ``out``, replacing earlier records of the same run (experiment, variant, seed)."""
    def key(r):
        return r["experiment"], r.get("variant"), r["seed"]

    old = json.loads(out.read_text())["runs"] if out.exists() else []
    new = {key(r) for r in records}
    runs = [r for r in old if key(r) not in new] + records
    runs.sort(key=lambda r: (r["experiment"], str(r.get("variant")), r["seed"]))
    doc = dict(about="Runs of the AugNet authors' code on this project's machine, written by "
                     "benchmarks/authors/augnet_runs.py; numbers only (their code is not part of invlib).",
               runs=runs)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(records)} record(s) to {out}")


# ----------------------------------------------------------------------------- sprites (section 4.1)
def sprites(repo: Path, seed: int, epochs: int, trunk: str, n_train: int = 10_000, width: int = 32,
            images: Path | None = None) -> dict:
    import torch
    from augnet import losses, models
    from augnet.utils import set_global_rngs
    from experiments.mario_iggy.augnet_training import create_augnet_layer, trainer
    from experiments.mario_iggy.generate_data import generate_mario_data

    set_global_rngs(seed)  # as their main(): data order from the seed, sprite angles from their data seed
    folder = images.parent if images else repo / "experiments" / "mario_iggy"  # their loader reads images.npz
    loader, _ = generate_mario_data(ntrain=n_train, ntest=128, batch_size=128, dpath=str(folder) + "/")
    layer = create_augnet_layer(1 / 8, freeze_weights=False)
    if trunk == "seed":
        torch.manual_seed(seed)
    net = models.SimpleConv(c=width, num_classes=4)
    model = models.AugAveragedModel(net, layer, ncopies=1)
    set_global_rngs(seed)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        log = trainer(model=model, trainloader=loader, reg=0.5, criterion=losses.aug_layer_loss, epochs=epochs,
                      lr=5e-4, decay=1.0, device="cpu")
    seconds = time.perf_counter() - t0
    steps = len(loader)
    per_epoch = []
    for e in range(epochs):
        row = log.iloc[(e + 1) * steps - 1]
        w = {n: float(row[f"w.{i}"]) for i, n in enumerate(SPRITE_OPS)}
        top = {n: float(row[f"mag.{i}"]) * TO_OURS.get(n, 1.0) for i, n in enumerate(SPRITE_OPS)}
        name, weight = _leader(w)
        per_epoch.append(dict(epoch=e + 1, step=(e + 1) * steps, leader=name, weight=weight, weights=w,
                              max_values=top))
    first = log.iloc[steps - 1]  # also the leader after one epoch and the earliest step a leader passed 0.5
    w_steps = log[[f"w.{i}" for i in range(5)]].to_numpy()
    over = (w_steps.max(1) > 0.5).nonzero()[0]
    last = per_epoch[-1]
    sprite_set = "ours" if images else "theirs"
    variant = f"{sprite_set} sprites, {n_train} images, width {width}, trunk {trunk}, {epochs} epochs"
    return dict(experiment="sprites", variant=variant, sprites=sprite_set, trunk=trunk, seed=seed, epochs=epochs,
                steps_per_epoch=steps, n_train=n_train, width=width, batch_size=128, seconds=round(seconds, 1),
                selected=last["leader"], weight=last["weight"], max_value=last["max_values"][last["leader"]],
                rotate_max_value=last["max_values"]["rotate"],
                leader_over_half_at_step=int(over[0]) + 1 if len(over) else None,
                train_acc_last_epoch=float(log["acc"].iloc[-steps:].mean()),
                first_epoch_max_weight=float(max(first[f"w.{i}"] for i in range(5))), per_epoch=per_epoch)


# ----------------------------------------------------------------------------- sinusoids (4.2) and capacity (4.3)
def _their_sinusoid_run(argv: list[str]) -> tuple[object, float, float]:
    """Run their ``train_augnet.main`` with ``argv``; return (metrics DataFrame, median invariance, seconds)."""
    import pandas as pd
    import torch
    from experiments.sinusoids import train_augnet as ta

    with tempfile.TemporaryDirectory() as tmp:
        args = ta.make_parser().parse_args(argv + ["--dir", tmp, "-d", "cpu"])
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            ta.main(args)
        seconds = time.perf_counter() - t0
        metrics = pd.read_pickle(glob.glob(f"{tmp}/*metrics.pkl")[0])
        inv = torch.load(glob.glob(f"{tmp}/*model_invariance.pt")[0])
        return metrics, float(torch.as_tensor(inv).median()), seconds


def _signal_epochs(metrics) -> list[dict]:
    """Per epoch: weights and largest values (their magnitude in [0, 1] times the top of its range)."""
    tops = {"frequency_shift": 2.0, "ft_surrogate": 0.1, "gaussian_noise": 0.1}  # their mag_range upper ends
    out = []
    for _, row in metrics.iterrows():
        w, top = {}, {}
        for col in row.index:
            if col.startswith("weight-l0-"):
                op = SIGNAL_OPS[col.removeprefix("weight-l0-")]
                w[op] = float(row[col])
                top[op] = float(row[f"magnitude-l0-{col.removeprefix('weight-l0-')}"]) * tops[op]
        rec = dict(epoch=int(row["epoch"]) + 1, test_acc=float(row["epoch_test_acc"]), weights=w, max_values=top)
        if w:
            rec["leader"], rec["weight"] = _leader(w)
        out.append(rec)
    return out


def sinusoids(repo: Path, seed: int, epochs: int) -> dict:
    argv = ["--lr", "0.01", "--seed", str(seed), "--method", "augnet", "--n_aug_layers", "1", "--noise", "0.5",
            "--backbone", "cnn", "--num_channels", "2", "--num_layers", "2", "--reg", "0.2", "--epochs", str(epochs)]
    metrics, inv, seconds = _their_sinusoid_run(argv)
    per_epoch = _signal_epochs(metrics)
    last = per_epoch[-1]
    return dict(experiment="sinusoids", variant="3 ops", seed=seed, epochs=epochs, seconds=round(seconds, 1),
                selected=last["leader"], weight=last["weight"], max_value=last["max_values"][last["leader"]],
                shift_hz=last["max_values"]["frequency_shift"], test_acc=last["test_acc"], invariance_median=inv,
                per_epoch=per_epoch)


def capacity(repo: Path, seed: int, epochs: int, depth: int, width: int) -> list[dict]:
    common = ["--lr", "0.01", "--seed", str(seed), "--noise", "0.5", "--backbone", "mlp", "--num_channels",
              str(width), "--num_layers", str(depth), "--epochs", str(epochs)]
    runs = {"baseline": ["--method", "none"], "oracle augmentation": ["--method", "none", "--augment"],
            "AugNet": ["--method", "augnet", "--l_types", "freq", "--init-mag", "0.05", "--reg", "0.8",
                       "--ncopies", "10"]}
    out = []
    for method, extra in runs.items():
        metrics, inv, seconds = _their_sinusoid_run(common + extra)
        per_epoch = _signal_epochs(metrics)
        rec = dict(experiment="capacity", variant=f"d{depth} w{width} {method}", depth=depth, width=width,
                   method=method, seed=seed, epochs=epochs, seconds=round(seconds, 1),
                   test_acc=per_epoch[-1]["test_acc"], invariance_median=inv)
        if method == "AugNet":
            rec["shift_hz"] = per_epoch[-1]["max_values"]["frequency_shift"]
            rec["shift_hz_per_epoch"] = [e["max_values"]["frequency_shift"] for e in per_epoch]
        out.append(rec)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("experiment", choices=["sprites", "sinusoids", "capacity"])
    p.add_argument("--repo", type=Path, required=True, help="a checkout of github.com/cedricrommel/augnet")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    p.add_argument("--epochs", type=int, help="default: their script's (sprites 20, sinusoids 50)")
    p.add_argument("--trunk", nargs="+", choices=["shared", "seed"], default=["shared", "seed"],
                   help="sprites: their shared trunk initialisation, or one per seed")
    p.add_argument("--n-train", type=int, default=10_000, help="sprites: training images (theirs: 10,000)")
    p.add_argument("--width", type=int, default=32, help="sprites: their trunk's width c (theirs: 32)")
    p.add_argument("--images", type=Path, help="sprites: an images.npz of two other sprites (our colour sprites: "
                   "benchmarks/authors/our_sprites.py writes one); default: their Mario and Iggy")
    p.add_argument("--trunks", nargs="+", default=["1x16", "2x64"], help="capacity: DEPTHxWIDTH MLP trunks")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    repo = args.repo.expanduser().resolve()
    if not (repo / "augnet" / "models" / "augnet.py").exists():
        p.error(f"{repo} is not a checkout of github.com/cedricrommel/augnet (git clone it; see README.md here)")
    sys.path.insert(0, str(repo))
    meta = _meta(repo)
    for seed in args.seeds:
        if args.experiment == "sprites":
            recs = [sprites(repo, seed, args.epochs or 20, t, args.n_train, args.width, args.images)
                    for t in args.trunk]
        elif args.experiment == "sinusoids":
            recs = [sinusoids(repo, seed, args.epochs or 50)]
        else:
            recs = [r for t in args.trunks for r in capacity(repo, seed, args.epochs or 50,
                                                            *map(int, t.lower().split("x")))]
        recs = [dict(r, **meta) for r in recs]
        for r in recs:
            print(json.dumps({k: r[k] for k in r if k not in ("per_epoch", "shift_hz_per_epoch")}), flush=True)
        _save(recs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

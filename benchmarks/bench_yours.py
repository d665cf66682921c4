"""Chapter Y1's measure of a reader's model, cold and warm: every paper's measure (``invlib.papers.s.yours.measure``)
of a randomly initialised timm ResNet-18 read from a weights file, at 224 px on a folder of 256 images of mixed,
non-square sizes, at the model's stages, with the default transformations and no references (issue 51's setting:
<= 5 minutes cold on 2 cores, <= 30 s warm).

It writes the weights file and the folder (``invlib.streaming.demo_folder``, shapes of 4 classes, 40-320 px a side)
to a temporary directory and uses a fresh cache there, so "cold" means nothing cached. Printed: the seconds of the
check that reads the images, of the cold and of the warm call, the cold call's seconds per paper (A's probe, B's
sweep, C's maps) and where they go (the cumulative seconds of the functions that do the work, from a profile of the
cold call), and the bare training loop's images/s in the same run (``benchmarks/bench_book.py``), to scale the
seconds to another machine.

Run: python benchmarks/bench_yours.py [--model resnet18] [--n 256] [--side 224] [--layers layer1 ... pre_logits]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

WORK = Path(tempfile.mkdtemp(prefix="bench_yours-"))
os.environ["INVLIB_CACHE"] = str(WORK / "cache")  # before invlib reads it: a cold cache

import timm  # noqa: E402
import torch  # noqa: E402

from invlib import streaming  # noqa: E402
from invlib.papers.s import yours  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_book import bare_loop_speed  # noqa: E402

# where a measure's seconds go: (label, file, function) as cProfile records them; cumulative seconds, so a line
# includes the lines indented under it
WORK_DONE_IN = (("layers read in forward passes (models.features)", "invlib/models.py", "features"),
                ("A: its views' features (probes.extract)", "papers/a/probes.py", "extract"),
                ("A: probes trained (probes.train_probe)", "papers/a/probes.py", "train_probe"),
                ("B: the sweep (similarity.sweep)", "papers/b/similarity.py", "sweep"),
                ("C: features of every layer (equivariance.layer_features)", "papers/c/equivariance.py",
                 "layer_features"),
                ("C: maps M_g fitted (metrics.fit_maps)", "invlib/metrics.py", "fit_maps"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--side", type=int, default=224)
    parser.add_argument("--layers", nargs="*", default=None, help="default: the model's stages")
    args = parser.parse_args()
    weights = WORK / f"{args.model}.pt"
    torch.save(timm.create_model(args.model, num_classes=1000).state_dict(), weights)
    folder = streaming.demo_folder(WORK / "images", n=args.n, classes=4, sizes=(40, 320), shapes=True)
    S = yours.settings("cpu", model=f"{args.model}@{weights}", data=folder, side=args.side, n_images=args.n,
                       layers=args.layers, references=(), progress=False)
    t0 = time.perf_counter()
    found = yours.check(S)  # reads the folder's images (the measure below reuses them) and checks the model
    check_s = time.perf_counter() - t0
    print(f"{found['model']} at {found['side']} px, {found['images']} images, layers {', '.join(found['layers'])}, "
          f"{torch.get_num_threads()} threads; accuracies: {'measured' if found['accuracy'] is None else 'left out'}")
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    cold = yours.measure(S)
    profile.disable()
    cold_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    yours.measure(S)
    warm_s = time.perf_counter() - t0
    papers = {k: round(v, 1) for k, v in cold.attrs["seconds"].items() if k != "total"}
    print(f"check (model loaded, images read, decoded and resized): {check_s:.1f} s")
    print(f"cold: {cold_s:.1f} s  (per paper: {papers})")
    print(f"warm: {warm_s:.1f} s")
    stats = pstats.Stats(profile).stats
    for label, file, name in WORK_DONE_IN:
        seconds = sum(v[3] for k, v in stats.items() if k[0].endswith(file) and k[2] == name)
        print(f"  {label:<60s} {seconds:7.1f} s")
    img_s = bare_loop_speed()
    print(f"bare training loop: {img_s:.1f} img/s; cold at the book's reference speed (500 img/s): "
          f"about {cold_s * img_s / 500:.0f} s")


if __name__ == "__main__":
    main()

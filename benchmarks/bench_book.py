"""Book timings against their budgets, at this machine's speed: each chapter's seconds in the last book run and
the last whole build's wall time (its set-up where `make book` recorded it, training phase, chapters two at once,
site), beside the budgets.

Budgets are stated at the reference speed, 500 img/s of the bare training loop of ``benchmarks/bench_train.py``
(small_resnet18, 28 px, batch 128, 2 threads) on 2 CPU cores (:data:`invlib.book.REFERENCE_IMG_S`): ``smoke`` <= 60 s
per chapter; ``cpu`` <= 120 s per chapter, <= 300 s for a chapter that trains a model family, the whole build <= 4,320
s (:data:`invlib.book.BOOK_BUDGET`: the main job's 40 minutes at about 900 img/s). This script measures the bare loop
here (or takes ``--img-s``) and scales every budget by ``500 / measured`` ("budget here"): a machine twice as fast
gets half the seconds. Scaling by the bare loop is strict for the book: its chapters run on one thread each, two at
once, and spend part of their time outside training (kernels, imports, figures), which a faster training step does not
speed up as much.

The training phase trains the zoo's models and the families that some chapters train themselves (D1-D5, B6,
E1: :attr:`invlib.papers.ChapterFacts.family`), before any chapter runs; a chapter's seconds are its own, as they are
for a chapter whose zoo family the phase trains (B1), and each family's seconds in the phase are listed under it.

Nothing here runs a chapter: it reads what the runner left. A chapter's seconds are ``book_seconds`` in
``results/<profile>/<chapter>.json`` (``$INVLIB_RESULTS`` when set), else the ``seconds`` in the executed
notebook's metadata (``book/_generated/<chapter>.ipynb``) when it was run at that profile; the build's wall time
is ``results/build-<profile>.json`` (written by a whole build). ``over`` marks a ratio above 1; on a busy machine
that is expected, so the script reports and exits 0 (``--strict``: exit 1 when something is over).

Run: python benchmarks/bench_book.py [--profile cpu smoke] [--img-s 943] [--results DIR] [--book-dir DIR] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from invlib import book
from invlib.chapters import GENERATED, toc_notebooks
from invlib.profiles import PROFILES
from invlib.utils import REPO


def chapter_seconds(profile: str, results: Path, root: Path = REPO) -> list[dict]:
    """One row per chapter of ``_toc.yml`` run at ``profile``: ``{name, seconds, date, source}``."""
    import nbformat

    rows = []
    for name in toc_notebooks(root):
        file = results / profile / f"{name}.json"
        record = json.loads(file.read_text()) if file.exists() else {}
        if "book_seconds" in record:
            rows.append(dict(name=name, seconds=record["book_seconds"], date=str(record.get("finished", ""))[:10],
                             source="results"))
            continue
        executed = root / GENERATED / f"{name}.ipynb"
        meta = nbformat.read(executed, as_version=4).metadata.get("invlib", {}) if executed.exists() else {}
        if meta.get("profile") == profile and "seconds" in meta:
            rows.append(dict(name=name, seconds=meta["seconds"], date="", source="notebook"))
    return rows


def bare_loop_speed(repeats: int = 2) -> float:
    """Images/s of ``benchmarks/bench_train.py``'s bare loop here (small_resnet18, 28 px, batch 128, 2 threads, best
    of ``repeats``): the speed every budget is scaled by."""
    import importlib.util

    import torch

    from invlib import models
    from invlib.train import TrainConfig

    spec = importlib.util.spec_from_file_location("bench_train", Path(__file__).with_name("bench_train.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    torch.set_num_threads(2)
    torch.manual_seed(0)
    x, y = torch.rand(3072, 3, 28, 28), torch.randint(0, 10, (3072,))
    cfg = TrainConfig(epochs=1, batch_size=128, device="cpu")
    make = lambda: models.create("small_resnet18", img_size=28).to(memory_format=torch.channels_last)
    bench.bare_loop(make(), x[:512], y[:512], cfg)  # warm-up
    return max(bench.bare_loop(make(), x, y, cfg) for _ in range(repeats))


def table(profiles: list[str], results: Path, root: Path = REPO, img_s: float = book.REFERENCE_IMG_S
          ) -> tuple[list[str], int]:
    """The printed lines and the number of rows over their budget; budgets scaled to ``img_s`` of bare loop."""
    scale = book.REFERENCE_IMG_S / img_s
    lines = [f"{'profile':8s} {'chapter':36s} {'seconds':>8s} {'budget@500':>10s} {'here':>6s} {'ratio':>6s}  run"]
    over = 0

    def row(profile, name, seconds, limit, note):
        nonlocal over
        here = limit * scale if limit else None
        ratio = seconds / here if here else None
        over += bool(ratio and ratio > 1)
        shown = f"{limit:10d} {here:6.0f} {ratio:6.2f}" if limit else f"{'—':>10s} {'':6s} {'':6s}"
        lines.append(f"{profile:8s} {name:36s} {seconds:8.1f} {shown}  {note}"
                     + ("  over" if ratio and ratio > 1 else ""))

    for profile in profiles:
        rows = chapter_seconds(profile, results, root)
        for r in rows:
            row(profile, r["name"], r["seconds"], book.budget(r["name"], profile), r["date"] or r["source"])
        file = results / f"build-{profile}.json"
        if file.exists():
            b = json.loads(file.read_text())
            if b.get("zoo_phase") is not None:
                row(profile, book.ZOO_PHASE, b["zoo_phase"], None, b["finished"][:10])
            for name, seconds in b.get("families", {}).items():  # process time within the phase, no budget of its own
                row(profile, f"  of which {name}'s family", seconds, None, "trained in the phase")
            setup = b.get("setup")  # recorded by `make book`: the limit counts the set-up too
            what = "with set-up" if setup is not None else "without its set-up"
            row(profile, f"(whole build {what}, {b['jobs']} at once)", b["wall"] + (setup or 0.0),
                book.BOOK_BUDGET.get(profile), b["finished"][:10])
        if not rows:
            lines.append(f"{profile:8s} no chapter timings: run `python -m invlib book --profile {profile}` first")
    return lines, over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", nargs="+", choices=list(PROFILES),
                        help="profiles to report (default: every profile with results)")
    parser.add_argument("--results", type=Path, default=Path(os.environ.get("INVLIB_RESULTS") or REPO / "results"))
    parser.add_argument("--book-dir", type=Path, default=REPO, help="the book folder (_toc.yml, book/_generated)")
    parser.add_argument("--img-s", type=float, help="bare-loop images/s of this machine (default: measure it)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a chapter or the build is over budget")
    args = parser.parse_args(argv)
    profiles = args.profile or [p for p in PROFILES if (args.results / p).is_dir()] or ["cpu"]
    img_s = args.img_s or bare_loop_speed()
    lines, over = table(profiles, args.results, args.book_dir, img_s)
    print("\n".join(lines))
    print(f"bare loop here: {img_s:.0f} img/s (budgets are at {book.REFERENCE_IMG_S} img/s on 2 free cores; x"
          f"{book.REFERENCE_IMG_S / img_s:.2f} here); this machine has {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.1f}); {over} over budget")
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    sys.exit(main())

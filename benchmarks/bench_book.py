"""Book timings against their budgets: each chapter's seconds in the last book run, and the model zoo's
training seconds, beside the budgets for 2 CPU cores (:data:`invlib.book.BUDGETS`: ``smoke`` <= 60 s per
chapter; ``cpu`` <= 120 s per chapter, <= 300 s for a chapter that trains a model family, the whole zoo
<= 300 s).

Nothing here runs a chapter: it reads what the runner left. A chapter's seconds are ``book_seconds`` in
``results/<profile>/<chapter>.json`` (the runner adds them after the chapter ran; ``$INVLIB_RESULTS`` when set),
else the ``seconds`` in the executed notebook's metadata (``book/_generated/<chapter>.ipynb``) when it was run
at that profile. The zoo's seconds are the training seconds stored in its checkpoints (``$INVLIB_CACHE/zoo``).
The ratio column is seconds / budget; ``over`` marks a ratio above 1. On a machine slower or busier than
2 free cores that is expected, so the script reports and exits 0 (``--strict``: exit 1 when something is over).

Run: python benchmarks/bench_book.py [--profile cpu smoke] [--results DIR] [--book-dir DIR] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from invlib import book
from invlib.profiles import PROFILES
from invlib.utils import REPO


def chapter_seconds(profile: str, results: Path, root: Path = REPO) -> list[dict]:
    """One row per chapter of ``_toc.yml`` run at ``profile``: ``{name, seconds, date, source}``."""
    import nbformat

    rows = []
    for name in book.toc_notebooks(root):
        file = results / profile / f"{name}.json"
        record = json.loads(file.read_text()) if file.exists() else {}
        if "book_seconds" in record:
            rows.append(dict(name=name, seconds=record["book_seconds"], date=str(record.get("finished", ""))[:10],
                             source="results"))
            continue
        executed = root / book.GENERATED / f"{name}.ipynb"
        meta = nbformat.read(executed, as_version=4).metadata.get("invlib", {}) if executed.exists() else {}
        if meta.get("profile") == profile and "seconds" in meta:
            rows.append(dict(name=name, seconds=meta["seconds"], date="", source="notebook"))
    return rows


def zoo_seconds(profile: str) -> dict | None:
    """``{seconds, trained, entries}``: training seconds summed over the zoo entries cached for ``profile``
    (``invlib.zoo.path``, under ``$INVLIB_CACHE/zoo``); None when none is cached."""
    from invlib import zoo
    from invlib.models import CheckpointError, read_checkpoint

    names, seconds = zoo.available(), []
    for name in names:
        file = zoo.path(name, profile)
        try:
            seconds.append(float(read_checkpoint(file)["meta"]["seconds"]) if file.exists() else None)
        except (CheckpointError, KeyError, TypeError, ValueError):
            continue  # unreadable, or no training seconds stored: not counted
    done = [s for s in seconds if s is not None]
    return dict(seconds=sum(done), trained=len(done), entries=len(names)) if done else None


def table(profiles: list[str], results: Path, root: Path = REPO) -> tuple[list[str], int]:
    """The printed lines and the number of rows over their budget."""
    lines = [f"{'profile':8s} {'chapter':36s} {'seconds':>8s} {'budget':>7s} {'ratio':>6s}  run"]
    over = 0

    def row(profile, name, seconds, limit, note):
        nonlocal over
        ratio = seconds / limit if limit else None
        over += bool(ratio and ratio > 1)
        shown = f"{limit:7d} {ratio:6.2f}" if limit else f"{'—':>7s} {'':6s}"
        lines.append(f"{profile:8s} {name:36s} {seconds:8.1f} {shown}  {note}"
                     + ("  over" if ratio and ratio > 1 else ""))

    for profile in profiles:
        rows = chapter_seconds(profile, results, root)
        for r in rows:
            row(profile, r["name"], r["seconds"], book.budget(r["name"], profile), r["date"] or r["source"])
        zoo = zoo_seconds(profile)
        if zoo:
            row(profile, f"(model zoo: {zoo['trained']} of {zoo['entries']} cached)", zoo["seconds"],
                book.ZOO_BUDGET.get(profile), "checkpoints")
        if not rows and not zoo:
            lines.append(f"{profile:8s} no chapter timings: run `python -m invlib book --profile {profile}` first")
    return lines, over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", nargs="+", choices=list(PROFILES),
                        help="profiles to report (default: every profile with results)")
    parser.add_argument("--results", type=Path, default=Path(os.environ.get("INVLIB_RESULTS") or REPO / "results"))
    parser.add_argument("--book-dir", type=Path, default=REPO, help="the book folder (_toc.yml, book/_generated)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a chapter or the zoo is over budget")
    args = parser.parse_args(argv)
    profiles = args.profile or [p for p in PROFILES if (args.results / p).is_dir()] or ["cpu"]
    lines, over = table(profiles, args.results, args.book_dir)
    print("\n".join(lines))
    print(f"budgets are for 2 free CPU cores; this machine has {os.cpu_count()} "
          f"(load average {os.getloadavg()[0]:.1f}); {over} over budget")
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    sys.exit(main())

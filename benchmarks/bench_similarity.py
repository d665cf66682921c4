"""Similarity search throughput: invlib.papers.b.similarity.search over the AutoAugment pool (pair same-class images,
embed
both sides once, then per entry transform every second image, embed it and take the cosine change) in pairs/s,
against the bare forward of the same embedding (invlib.papers.b.similarity.embedding) in images/s.

Two rates for the search: "entry-pairs/s" counts every (entry, pair) result, 63 per pair for the whole pool;
"forwards/s" counts only the images the search embeds: both untransformed sides once, plus one transformed
second image per pair for each distinct entry (operations without a magnitude, such as equalize/1 and
equalize/9, are computed once: 50 of the 63 entries). The bare forward is the ceiling of forwards/s, so its ratio
is the share of the time spent in the forward; the target is >= 0.45 for entry-pairs/s and reported for both.
Both run in batches of the search's own size (all pairs, at most --batch): on a CPU a small batch is faster
per image than a large one (batches of 80 about 1.5x batches of 256 for small_resnet18 at 28 px).
The speed of a shared 2-core machine drifts by tens of percent within a minute, so each round sandwiches the
search between two bare forwards (each on half as many images as the search embeds), takes the ratio of the
search's rate to the mean bare rate, and the median over rounds is reported. With another busy process on the
machine, ``--threads 1`` is steadier (two threads wait on each other whenever one of them loses its core).
The time of apply_entry alone per operation type comes last, to find slow transforms.
Run: python benchmarks/bench_similarity.py [--model small_resnet18] [--n 1000] [--max-pairs 8] [--rounds 5]
     [--batch 256] [--threads 2] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict

import torch

from invlib import data, models
from invlib.papers.b import similarity
from invlib.utils import resolve_device

TARGET = 0.45


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def bare_forward(embed, x: torch.Tensor, batch_size: int) -> float:
    """Images/s of ``embed(x)`` alone, in batches, under inference_mode (as the search runs it)."""
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(x), batch_size):
            embed(x[i:i + batch_size])
    sync(x.device)
    return len(x) / (time.perf_counter() - t0)


def run_search(embed, x, labels, entries, max_pairs: int, seed: int, batch_size: int, device):
    """``(seconds, Search)`` of one :func:`invlib.papers.b.similarity.search`."""
    t0 = time.perf_counter()
    s = similarity.search(embed, x, labels, entries, max_pairs=max_pairs, seed=seed, batch_size=batch_size,
                          device=device)
    sync(device)
    return time.perf_counter() - t0, s


def per_op_times(x: torch.Tensor, entries, repeats: int = 5) -> dict[str, float]:
    """Milliseconds per 1000 images of ``apply_entry`` alone, per operation type (mean over its entries, best of
    ``repeats``), on ``x`` where the search has it (the CPU)."""
    out = defaultdict(list)
    for entry in entries:
        best = float("inf")
        for r in range(repeats):
            g = torch.Generator().manual_seed(r)
            t0 = time.perf_counter()
            similarity.apply_entry(entry, x, g)
            best = min(best, time.perf_counter() - t0)
        out[similarity.op_type(entry)].append(1000 * best * 1000 / len(x))
    return {op: statistics.mean(v) for op, v in out.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="small_resnet18")
    ap.add_argument("--n", type=int, default=1000, help="images loaded (10 classes)")
    ap.add_argument("--max-pairs", type=int, default=8, help="pairs per class in each search")
    ap.add_argument("--batch", type=int, default=256, help="most images per forward, both runs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    torch.manual_seed(0)
    ds = data.load("fashion_mnist_color", "train", n=args.n, seed=0)
    x, labels = ds.float(), ds.labels
    model = models.create(args.model, num_classes=int(labels.max()) + 1).to(device).eval()
    embed = similarity.embedding(model)
    entries = list(similarity.POOL)

    # warm-up, and the size of a search: how many images it embeds
    _, s = run_search(embed, x, labels, entries, args.max_pairs, 0, args.batch, device)
    pairs, evaluated = s.meta["pairs"], s.meta["evaluated"]
    forwards = (evaluated + 2) * pairs
    probe = x[torch.arange(forwards // 2) % len(x)].to(device)  # two bare forwards embed as many images
    batch = min(pairs, args.batch)  # the search embeds the transformed second images of all pairs in one batch
    bare_forward(embed, probe[:batch], batch)
    print(f"{args.model} at {x.shape[-1]} px on {device}, {torch.get_num_threads()} threads, batch {batch}; "
          f"{len(entries)} entries ({evaluated} distinct), {pairs} pairs ({args.max_pairs} per class), "
          f"{forwards} forwards per search, {args.rounds} rounds")

    bare, entry_pairs, fwd, ratios, fwd_ratios = [], [], [], [], []
    for r in range(args.rounds):  # another pair draw each round
        before = bare_forward(embed, probe, batch)
        seconds, s = run_search(embed, x, labels, entries, args.max_pairs, r + 1, args.batch, device)
        bare.append((before + bare_forward(embed, probe, batch)) / 2)
        entry_pairs.append(len(entries) * s.meta["pairs"] / seconds)
        fwd.append((s.meta["evaluated"] + 2) * s.meta["pairs"] / seconds)
        ratios.append(entry_pairs[-1] / bare[-1])
        fwd_ratios.append(fwd[-1] / bare[-1])
        print(f"  round {r}: bare {bare[-1]:7.0f} img/s | search {seconds:5.2f} s, "
              f"{entry_pairs[-1]:7.0f} entry-pairs/s, {fwd[-1]:7.0f} forwards/s | "
              f"ratios {ratios[-1]:.2f}, {fwd_ratios[-1]:.2f}")
    ratio, fwd_ratio = statistics.median(ratios), statistics.median(fwd_ratios)
    print(f"median: bare forward {statistics.median(bare):7.0f} img/s | search {statistics.median(entry_pairs):7.0f} "
          f"entry-pairs/s ({ratio:.2f} of bare, target >= {TARGET}, ceiling {len(entries) / (evaluated + 2):.2f}), "
          f"{statistics.median(fwd):7.0f} forwards/s ({fwd_ratio:.2f} of bare, ceiling 1.00)")

    times = per_op_times(x[: min(len(x), 512)], entries)
    typical = statistics.median(times.values())
    print("apply_entry alone, ms per 1000 images (mean over the type's entries; * = over 3x the median type):")
    for op, ms in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"  {op:12s} {ms:8.1f}{'  *' if ms > 3 * typical else ''}")
    print("PASS" if ratio >= TARGET else "FAIL", f"ratio {ratio:.2f} (forwards {fwd_ratio:.2f})")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

"""Images from disk: the decoders, the streaming loader alone, and a training epoch streamed vs in memory.

On one generated ImageNet-style folder (``invlib.data.write_imagenet_folder``: JPEGs of 64-300 px), all in
this run:
1. decode + resize, one process: PIL (with JPEG draft mode) vs torchvision.io, images/s at ``--size``;
2. the streaming loader alone (``invlib.streaming.batches``), images/s for each number of workers;
3. one training epoch of ``--model`` through ``invlib.train.fit``, streamed (each worker count) vs the same
   images decoded into memory first, as a ratio to the in-memory epoch; beside it the bare loop's images/s on
   the same batches (``benchmarks/bench_train.py``'s loop), the speed every absolute number here depends on.
Run: python benchmarks/bench_streaming.py [--per-class 200] [--size 64] [--model small_resnet18_s4]
     [--workers 0 1 2] [--folder DIR (reuse a folder)]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch
from bench_train import bare_loop  # noqa: E402 - run from benchmarks/ or with it on the path

from invlib import data, models, streaming
from invlib.train import TrainConfig, fit


def rate(n: int, seconds: float) -> float:
    return n / seconds


def decoders(files: list[str], size: int) -> dict[str, float]:
    out = {}
    for name in streaming.DECODERS:
        streaming.decode(files[0], size, name)  # warm-up (imports, libjpeg)
        t0 = time.perf_counter()
        for f in files:
            streaming.decode(f, size, name)
        out[name] = rate(len(files), time.perf_counter() - t0)
    return out


def loader_alone(images, batch: int, workers: int) -> float:
    t0 = time.perf_counter()
    n = sum(len(b) for b in streaming.batches(images, batch, workers=workers))
    return rate(n, time.perf_counter() - t0)


def epoch(model_name: str, ds, size: int, batch: int) -> float:
    model = models.create(model_name, num_classes=len(ds.classes), img_size=size, seed=0)
    cfg = TrainConfig(epochs=1, batch_size=batch, device="cpu")
    t0 = time.perf_counter()
    fit(model, ds, cfg, progress=False)
    return rate(len(ds) // batch * batch, time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-class", type=int, default=200, help="training images per class (10 classes)")
    parser.add_argument("--size", type=int, default=64, help="side the images are decoded to")
    parser.add_argument("--model", default="small_resnet18_s4")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--folder", help="an ImageNet-style folder to reuse (default: write one to a temp dir)")
    args = parser.parse_args()
    root = Path(args.folder) if args.folder else data.write_imagenet_folder(
        tempfile.mkdtemp(prefix="bench_streaming_"), train_per_class=args.per_class, test_per_class=1)
    on_disk = data.load("imagenet", "train", root=root, size=args.size, stream=True)
    files = on_disk.images.paths
    print(f"{len(files)} JPEGs in {root}, decoded to {args.size} px; {os.cpu_count()} CPU cores, "
          f"{torch.get_num_threads()} torch threads")

    dec = decoders(files[:400], args.size)
    for name, v in dec.items():
        print(f"decode+resize  {name:12s}: {v:7.1f} img/s (one process)")
    print(f"decoders: torchvision.io / PIL = {dec['torchvision'] / dec['pil']:.2f}")

    for w in args.workers:
        print(f"loader alone   {w} workers  : {loader_alone(on_disk.images, args.batch, w):7.1f} img/s")

    t0 = time.perf_counter()
    in_memory = data.load("imagenet", "train", root=root, size=args.size, stream=False)
    print(f"decode into memory first  : {time.perf_counter() - t0:7.1f} s for {len(in_memory)} images")
    x, y = in_memory.float(), in_memory.labels
    model = models.create(args.model, num_classes=10, img_size=args.size, seed=0).to(memory_format=torch.channels_last)
    bare_loop(model, x[:2 * args.batch], y[:2 * args.batch], TrainConfig(batch_size=args.batch))  # warm-up
    bare = bare_loop(models.create(args.model, num_classes=10, img_size=args.size, seed=0).to(
        memory_format=torch.channels_last), x, y, TrainConfig(batch_size=args.batch))
    memory = epoch(args.model, in_memory, args.size, args.batch)
    print(f"bare loop (in memory)     : {bare:7.1f} img/s")
    print(f"fit epoch, in memory      : {memory:7.1f} img/s  ({memory / bare:.2f}x the bare loop)")
    for w in args.workers:
        os.environ["INVLIB_LOADER_WORKERS"] = str(w)
        streamed = epoch(args.model, on_disk, args.size, args.batch)
        print(f"fit epoch, streamed, {w} workers: {streamed:7.1f} img/s  ({streamed / memory:.2f}x in memory)")


if __name__ == "__main__":
    main()

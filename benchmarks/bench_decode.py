"""Decoding a folder of images: torchvision.io (deprecated since 0.29), TorchCodec (the replacement its warning
names), Pillow (with and without libjpeg's reduced-scale decoding of JPEGs) and simplejpeg (JPEG only; Pillow for
the rest), each followed by the book's resize (``invlib.streaming.resize``); beside them ``invlib.streaming.decode``
with each of its decoders, to check that the library adds nothing to the bare calls.

It writes its own folder to a temporary directory: ``--n`` images (default 300) of mixed, non-square sizes from
200x150 to 800x600, half RGB JPEGs and most of the rest RGB PNGs, with a few greyscale JPEGs and PNGs and a few
RGBA and palette PNGs; the pictures are smooth colour fields with stripes and a little noise (PNGs of pure noise
would time zlib, not a decoder). ``--large`` JPEGs of 4032x3024 (a phone's photos) are timed apart. Every candidate
decodes every file to a ``(3, H, W)`` uint8 RGB tensor and resizes it to ``--size`` (224): images/s on one thread,
each file's best of ``--repeats`` (3) passes, the candidates taking turns file by file so that a loaded machine
slows them alike; then each candidate's largest pixel difference to torchvision's output (what the book decoded
with until issue 51). A candidate that cannot be imported or cannot decode a file is reported with its error.

Run: python benchmarks/bench_decode.py [--n 300] [--large 10] [--size 224] [--repeats 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread for every library, set before they load

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from invlib import streaming  # noqa: E402

KINDS = (("rgb", "jpg", 0.5), ("rgb", "png", 0.4), ("grey", "jpg", 0.025), ("grey", "png", 0.025),
         ("rgba", "png", 0.025), ("palette", "png", 0.025))  # (mode, format, share of the files)


def picture(w: int, h: int, gen: torch.Generator) -> np.ndarray:
    """``(h, w, 3)`` uint8: a smooth random colour field, stripes at a random angle and a little noise."""
    field = torch.nn.functional.interpolate(torch.rand(1, 3, 6, 8, generator=gen) * 255, size=(h, w),
                                            mode="bicubic", align_corners=False)[0]
    yy, xx = torch.meshgrid(torch.arange(h).float(), torch.arange(w).float(), indexing="ij")
    angle, period = torch.rand(2, generator=gen)
    stripes = 40 * torch.sin((xx * angle.cos() + yy * angle.sin()) / (4 + 30 * period))
    noise = 6 * torch.randn(3, h, w, generator=gen)
    return (field + stripes + noise).clamp(0, 255).round().to(torch.uint8).permute(1, 2, 0).numpy()


def write_folder(root: Path, n: int, seed: int = 0) -> list[Path]:
    """``n`` images of the :data:`KINDS` in ``root``, sizes 200-800 x 150-600; returns their paths."""
    gen = torch.Generator().manual_seed(seed)
    counts = [max(1, round(share * n)) for *_, share in KINDS]
    counts[0] += n - sum(counts)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for (mode, fmt, _), count in zip(KINDS, counts):
        for k in range(count):
            w, h = int(torch.randint(200, 801, (1,), generator=gen)), int(torch.randint(150, 601, (1,), generator=gen))
            img = Image.fromarray(picture(w, h, gen))
            if mode == "grey":
                img = img.convert("L")
            elif mode == "rgba":
                img.putalpha(Image.fromarray(picture(w, h, gen)[..., 0]))
            elif mode == "palette":
                img = img.quantize(64)
            path = root / f"{mode}_{k:03d}.{fmt}"
            img.save(path, **({"quality": 90} if fmt == "jpg" else {}))
            paths.append(path)
    return paths


# ------------------------------------------------------------------ the candidates: path -> (3, H, W) uint8 RGB


def _torchvision(path: Path, size: int) -> torch.Tensor:
    from torchvision.io import ImageReadMode, decode_image

    with warnings.catch_warnings():  # measured on purpose: the warning is the reason for this benchmark
        warnings.simplefilter("ignore", DeprecationWarning)
        return decode_image(str(path), mode=ImageReadMode.RGB)


def _torchcodec(path: Path, size: int) -> torch.Tensor:
    from torchcodec.decoders import decode_image

    return decode_image(str(path), mode="RGB")


def _pil_array(im: Image.Image) -> torch.Tensor:
    """An open Pillow image -> ``(3, H, W)`` uint8 RGB (channels-last in memory), as ``invlib.streaming`` reads it."""
    return torch.from_numpy(np.array(im if im.mode == "RGB" else im.convert("RGB"))).permute(2, 0, 1)


def _pil(path: Path, size: int) -> torch.Tensor:
    with Image.open(path) as im:
        return _pil_array(im)


def _pil_draft(path: Path, size: int) -> torch.Tensor:
    with Image.open(path) as im:
        if im.format == "JPEG":
            im.draft("RGB", (2 * size, 2 * size))  # libjpeg's DCT-domain downscale, still >= 2 x size
        return _pil_array(im)


def _simplejpeg_pil(path: Path, size: int) -> torch.Tensor:
    import simplejpeg

    raw = path.read_bytes()
    if simplejpeg.is_jpeg(raw):  # its own DCT-domain downscale, still >= 2 x size
        rgb = simplejpeg.decode_jpeg(raw, colorspace="RGB", min_height=2 * size, min_width=2 * size)
        return torch.from_numpy(rgb).permute(2, 0, 1)
    with Image.open(io.BytesIO(raw)) as im:
        return _pil_array(im)


def _library(decoder: str):
    return lambda path, size: streaming.decode(path, size, decoder)[0]  # already resized


CANDIDATES = {"torchvision": _torchvision, "torchcodec": _torchcodec, "pil": _pil, "pil, JPEG draft": _pil_draft,
              "simplejpeg+pil": _simplejpeg_pil,
              **{f"invlib {name}": _library(name) for name in ("torchcodec", "pil")}}


def decode_resize(fn, path: Path, size: int) -> torch.Tensor:
    x = fn(path, size)
    return x if x.shape[-2:] == (size, size) else streaming.resize(x[None], size)[0]


def timed(fns: dict, groups: dict[str, list[Path]], size: int, repeats: int) -> dict[str, dict[str, float]]:
    """``{candidate: {group: images/s}}``: each file's best time of ``repeats`` passes, summed over a group. The
    candidates take turns file by file (in a rotating order), so that a burst of load on a shared machine slows
    them alike, and the per-file best drops the slow passes."""
    paths = list(dict.fromkeys(p for ps in groups.values() for p in ps))
    best = {name: dict.fromkeys(paths, float("inf")) for name in fns}
    names = list(fns)
    for r in range(repeats):
        for k, p in enumerate(paths):
            for name in names[(k + r) % len(names):] + names[:(k + r) % len(names)]:
                t0 = time.perf_counter()
                decode_resize(fns[name], p, size)
                best[name][p] = min(best[name][p], time.perf_counter() - t0)
    return {name: {g: len(ps) / sum(best[name][p] for p in ps) for g, ps in groups.items()} for name in fns}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300, help="images in the generated folder")
    parser.add_argument("--large", type=int, default=10, help="4032x3024 JPEGs (phone photos), timed apart")
    parser.add_argument("--size", type=int, default=224, help="side the images are resized to")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the folder; the best is kept")
    parser.add_argument("--folder", help="write the folder here (default: a temporary directory)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(args.folder or tempfile.mkdtemp(prefix="bench_decode_"))
    paths = write_folder(root / "mixed", args.n)
    large = []
    gen = torch.Generator().manual_seed(1)
    (root / "large").mkdir(parents=True, exist_ok=True)
    for k in range(args.large):
        large.append(root / "large" / f"photo_{k:02d}.jpg")
        Image.fromarray(picture(4032, 3024, gen)).save(large[-1], quality=90)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    print(f"{datetime.date.today()}; {cpu}; {os.cpu_count()} cores, 1 thread; torch {torch.__version__}")
    print(f"{len(paths)} files in {root / 'mixed'} ({sum(p.stat().st_size for p in paths) / 2**20:.1f} MiB): "
          + ", ".join(f"{sum(p.name.startswith(m) and p.suffix == '.' + f for p in paths)} {m} {f.upper()}"
                      for m, f, _ in KINDS) + f"; {len(large)} JPEGs of 4032x3024 apart")

    decoded, usable = {}, {}
    for name, fn in CANDIDATES.items():  # can it decode every kind of file? (and warm-up: imports, libraries)
        try:
            decoded[name] = {p: decode_resize(fn, p, args.size) for p in paths + large}
            usable[name] = fn
        except Exception as err:  # noqa: BLE001 - a report, not a failure
            print(f"{name:17s}: not usable here: {type(err).__name__}: {err}")
    groups = {"all": paths, "JPEG": [p for p in paths if p.suffix == ".jpg"],
              "PNG": [p for p in paths if p.suffix == ".png"], "4032x3024 JPEG": large}
    best = timed(usable, groups, args.size, args.repeats)
    ref = "torchvision" if "torchvision" in decoded else next(iter(decoded))
    print(f"decode + resize to {args.size} px, images/s (each file's best of {args.repeats}); ratio to {ref} on all "
          f"{len(paths)} files; largest pixel difference to {ref} (0-255) on the mixed files and on the large JPEGs:")
    print(f"  {'':17s}  " + "  ".join(f"{g:>14s}" for g in groups) + "     ratio  max|diff| (large)")
    for name, rates in best.items():
        diff = [max([int((decoded[name][p].int() - decoded[ref][p].int()).abs().max()) for p in ps] or [0])
                for ps in (paths, large)]
        print(f"  {name:17s}: " + "  ".join(f"{rates[g]:14.1f}" for g in groups)
              + f"  {rates['all'] / best[ref]['all']:7.2f}x  {diff[0]:5d} ({diff[1]})")


if __name__ == "__main__":
    main()

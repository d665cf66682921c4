"""Batched registry vs the per-image PIL path through torchvision.transforms.v2.functional.

A batch of 256 structured RGB 32x32 images (gradients, stripes, discs and noise) and one random magnitude
per image for every op. The batched side times ``invlib.transforms.apply`` on the whole float batch; the
PIL side applies the same op with the same magnitudes image by image to PIL images prepared beforehand.
Both take the best of several repeats, with torch's default thread count.

Run: ``python benchmarks/bench_transforms.py``
"""

from __future__ import annotations

import math
import time

import torch
import torchvision.transforms.v2.functional as F

from invlib import transforms as T

B, SIZE, REPEATS = 256, 32, 5
BILINEAR = F.InterpolationMode.BILINEAR


def structured_images(b: int = B, size: int = SIZE, seed: int = 0) -> torch.Tensor:
    """``(b, 3, size, size)`` images in [0, 1]: colour gradients, stripes and a disc, plus a little noise."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    freq = torch.randint(1, 6, (b, 1, 1, 1), generator=g).float()
    phase = torch.rand(b, 3, 1, 1, generator=g) * 2 * math.pi
    angle = torch.rand(b, 1, 1, 1, generator=g) * math.pi
    coord = xx * torch.cos(angle) + yy * torch.sin(angle)
    stripes = 0.5 + 0.5 * torch.sin(2 * math.pi * freq * coord + phase)
    cx, cy = torch.rand(2, b, 1, 1, 1, generator=g) * 0.6 + 0.2  # a disc: centre and radius
    rad = torch.rand(b, 1, 1, 1, generator=g) * 0.3 + 0.1
    disc = (((xx - cx) ** 2 + (yy - cy) ** 2) < rad**2).float() * torch.rand(b, 3, 1, 1, generator=g)
    x = 0.6 * stripes * torch.rand(b, 3, 1, 1, generator=g) + 0.4 * disc
    x = x + 0.05 * torch.randn(b, 3, size, size, generator=g)
    return (x.clamp(0, 1) * 255).round() / 255  # uint8-valued, as decoded images are


def _blur_pil(img, s):
    if s < 1e-3:
        return img
    k = 2 * min(math.ceil(3 * s), SIZE - 1) + 1
    return F.gaussian_blur(img, [k, k], [s, s])


def _noise_pil(img, s):
    img = F.to_dtype(F.to_image(img), torch.float32, scale=True)
    return F.to_pil_image(F.gaussian_noise(img, sigma=s, clip=True))


def _affine(img, angle=0.0, translate=(0.0, 0.0), scale=1.0, shear=(0.0, 0.0)):
    kw = dict(interpolation=BILINEAR, fill=0)
    return F.affine(img, angle=angle, translate=list(translate), scale=scale, shear=list(shear), **kw)


# op -> f(pil_image, magnitude as a Python float): the same transformation through torchvision on PIL
PIL_OPS = {
    "rotate": lambda im, m: F.rotate(im, m, interpolation=BILINEAR, fill=0),
    "translate_x": lambda im, m: _affine(im, translate=(m * SIZE, 0.0)),
    "translate_y": lambda im, m: _affine(im, translate=(0.0, m * SIZE)),
    "shear_x": lambda im, m: _affine(im, shear=(m, 0.0)),
    "shear_y": lambda im, m: _affine(im, shear=(0.0, m)),
    "zoom_in": lambda im, m: _affine(im, scale=m),
    "zoom_out": lambda im, m: _affine(im, scale=m),
    "hflip": lambda im, m: F.horizontal_flip(im) if m >= 0.5 else im,
    "vflip": lambda im, m: F.vertical_flip(im) if m >= 0.5 else im,
    "brightness": lambda im, m: F.adjust_brightness(im, m),
    "contrast": lambda im, m: F.adjust_contrast(im, m),
    "saturation": lambda im, m: F.adjust_saturation(im, m),
    "hue": lambda im, m: F.adjust_hue(im, m),
    "posterize": lambda im, m: F.posterize(im, round(m)) if round(m) else F.adjust_brightness(im, 0.0),
    "solarize": lambda im, m: F.solarize(im, min(255, int(round(m * 255)))),
    "equalize": lambda im, m: F.equalize(im) if m >= 0.5 else im,  # PIL has no blend: switch at 0.5
    "autocontrast": lambda im, m: F.autocontrast(im) if m >= 0.5 else im,
    "invert": lambda im, m: F.invert(im) if m >= 0.5 else im,
    "sharpness": lambda im, m: F.adjust_sharpness(im, m),
    "gaussian_blur": _blur_pil,
    "gaussian_noise": _noise_pil,
}


def best_time(fn, repeats: int = REPEATS, budget_s: float = 0.25, max_repeats: int = 50) -> float:
    """Best wall time of ``fn()`` in milliseconds: at least ``repeats`` runs after one warm-up, more (up to
    ``max_repeats``) while under ``budget_s`` seconds, so that a busy machine still gives a clean minimum."""
    fn()
    best, spent, runs = math.inf, 0.0, 0
    while runs < repeats or (spent < budget_s and runs < max_repeats):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent, runs = min(best, dt), spent + dt, runs + 1
    return best * 1e3


def main() -> None:
    x = structured_images()
    pil = [F.to_pil_image(img) for img in x]
    g = torch.Generator().manual_seed(1)
    rows, tot_batched, tot_pil = [], 0.0, 0.0
    with torch.no_grad():
        for name in T.available():
            m = T.sample_magnitudes(name, B, generator=g)
            ms = m.tolist()
            t_b = best_time(lambda: T.apply(name, x, m))  # noqa: B023 - called inside this iteration
            f = PIL_OPS[name]
            t_p = best_time(lambda: [f(im, v) for im, v in zip(pil, ms)])  # noqa: B023
            rows.append((name, t_b, t_p))
            tot_batched += t_b
            tot_pil += t_p
    print(f"{B} RGB {SIZE}x{SIZE} images, per-sample magnitudes, torch threads: {torch.get_num_threads()}")
    print(f"{'op':<16}{'batched ms':>12}{'PIL ms':>10}{'ratio':>8}")
    for name, t_b, t_p in rows:
        print(f"{name:<16}{t_b:>12.2f}{t_p:>10.2f}{t_p / t_b:>8.1f}")
    print(f"{'total':<16}{tot_batched:>12.2f}{tot_pil:>10.2f}{tot_pil / tot_batched:>8.1f}")
    print(f"transforms: batched registry is {tot_pil / tot_batched:.1f}x the per-image PIL path")


if __name__ == "__main__":
    main()

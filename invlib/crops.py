"""The crop family of paper B (Bouchacourt et al. 2021, §2, App. C, F), batched with per-sample parameters.

Every method is a box per image in the coordinates of the *stored* image (pixels, x right, y down), then one
``grid_sample`` call that resamples every box to ``size x size`` (bilinear, black outside the image). The
stored image plays the part of the paper's "image resized to 256 on its shorter side": the evaluation
pre-processing keeps its central ``size`` pixels (224 of 256, :data:`CROP_FRACTION`). So the book's data are
stored at ``size / CROP_FRACTION`` (32 px for a 28 px model, 256 for 224) and every method outputs ``size``.

Methods (:data:`METHODS`) and their boxes:

- ``rrc``, RandomResizedCrop: area fraction ``s`` in ``scale`` (uniform, or a Beta shape), log-uniform
  ``ratio``, anywhere in the image (torchvision's rejection sampler: 10 tries, then the whole image).
- ``random_size_center_crop``: the same size distribution, always centred.
- ``fixed_size_random_crop``: a crop of side ``CROP_FRACTION`` of the shorter side, anywhere.
- ``translate``, T.(p%): a shift by at most ``translate`` of the width / height (uniform), then the central
  crop.
- ``translate_random_size_center_crop``: a shift by at most ``translate``, then a random-size centred crop;
  ``..._no_ar``: the same with the aspect ratio fixed at 1.
- ``fixed_size_center_crop``: the central crop, the evaluation pre-processing ("no augmentation").

The Beta variant of §2.2 draws ``s = low + (high - low) X`` with ``X ~ Beta(1, beta_shape)`` (the authors' code:
``beta_shape`` 1 is the uniform; small shapes put ``s`` near ``high``, i.e. little zoom). Boxes are continuous
(torchvision rounds sides and offsets to whole pixels); translations fill with black, as
``RandomAffine(fill=0)``.

Example
-------
>>> aug = Crop("rrc", size=28)
>>> aug(torch.rand(16, 3, 32, 32), torch.Generator().manual_seed(0)).shape
torch.Size([16, 3, 28, 28])
>>> Crop("fixed_size_center_crop", size=28)(torch.rand(2, 3, 32, 32)).shape
torch.Size([2, 3, 28, 28])
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .utils import check_choice

CROP_FRACTION = 224 / 256  # the evaluation crop's side over the resized image's shorter side
METHODS = {
    "rrc": "RandomResizedCrop",
    "random_size_center_crop": "RandomSizeCenterCrop",
    "fixed_size_random_crop": "FixedSizeRandomCrop",
    "translate": "T.(p%)",
    "translate_random_size_center_crop": "T.(p%) + RandomSizeCenterCrop",
    "translate_random_size_center_crop_no_ar": "T.(p%) + RandomSizeCenterCrop w/o a.r.",
    "fixed_size_center_crop": "FixedSizeCenterCrop",
}
_RANDOM_SIZE = ("rrc", "random_size_center_crop", "translate_random_size_center_crop",
                "translate_random_size_center_crop_no_ar")
_TRIES = 10  # torchvision's RandomResizedCrop.get_params tries 10 draws before falling back


def stored_size(size: int) -> int:
    """The side to store images at so that the evaluation crop keeps ``size`` pixels (256 for 224).

    Example
    -------
    >>> stored_size(224), stored_size(28), stored_size(32)
    (256, 32, 37)
    """
    return int(round(size / CROP_FRACTION))


def check_params(scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), beta_shape: float = 1.0, translate: float = 0.3,
                 flip_p: float = 0.0) -> None:
    """Raise ``ValueError`` naming the valid range when a crop parameter is out of it.

    Example
    -------
    >>> check_params(scale=(0.0, 1.0))
    Traceback (most recent call last):
    ValueError: scale must be an interval (low, high) with 0 < low <= high <= 1, got (0.0, 1.0).
    """
    lo, hi = (float(v) for v in scale)
    if not 0 < lo <= hi <= 1:
        raise ValueError(f"scale must be an interval (low, high) with 0 < low <= high <= 1, got {tuple(scale)}.")
    r0, r1 = (float(v) for v in ratio)
    if not 0 < r0 <= r1:
        raise ValueError(f"ratio must be an interval (low, high) with 0 < low <= high, got {tuple(ratio)}.")
    if not beta_shape > 0:
        raise ValueError(f"beta_shape must be > 0 (1 = uniform scale), got {beta_shape}.")
    if not 0 <= translate <= 1:
        raise ValueError(f"translate is a fraction of the width / height in [0, 1] (at most 100 %), "
                         f"got {translate}.")
    if not 0 <= flip_p <= 1:
        raise ValueError(f"flip_p is a probability in [0, 1], got {flip_p}.")


def sample_scale(u: torch.Tensor, scale=(0.08, 1.0), beta_shape: float = 1.0) -> torch.Tensor:
    """Area fractions from uniforms ``u`` (any shape): ``low + (high - low) X``, ``X ~ Beta(1, beta_shape)`` by
    its inverse CDF ``1 - (1 - u)^(1 / beta_shape)`` (exactly ``u`` for shape 1, torchvision's uniform).

    Example
    -------
    >>> [round(v, 4) for v in sample_scale(torch.tensor([0.0, 0.5, 1.0]), (0.08, 1.0)).tolist()]
    [0.08, 0.54, 1.0]
    """
    x = u if beta_shape == 1 else 1 - (1 - u).pow(1.0 / beta_shape)
    return scale[0] + (scale[1] - scale[0]) * x


def _random_sizes(n, h, w, generator, scale, ratio, beta_shape):
    """``(n,)`` widths, heights and fallback mask by torchvision's rule: 10 (area, log-ratio) draws, the first that
    fits, else the whole image (its ratio clamped to ``ratio``), which torchvision centres."""
    u = torch.rand(n, _TRIES, 2, generator=generator, dtype=torch.float64)
    area = sample_scale(u[..., 0], scale, beta_shape) * (h * w)
    lr0, lr1 = math.log(ratio[0]), math.log(ratio[1])
    aspect = torch.exp(lr0 + (lr1 - lr0) * u[..., 1])
    cw, ch = torch.sqrt(area * aspect), torch.sqrt(area / aspect)
    fits = (cw <= w) & (ch <= h)
    first = torch.where(fits.any(1), fits.float().argmax(1), -1)
    take = first.clamp(min=0)[:, None]
    cw, ch = cw.gather(1, take)[:, 0], ch.gather(1, take)[:, 0]
    in_ratio = w / h  # the fallback: the whole image, cropped to the nearest allowed ratio
    fw, fh = (w, w / ratio[0]) if in_ratio < ratio[0] else (h * ratio[1], h) if in_ratio > ratio[1] else (w, h)
    none = first < 0
    cw, ch = torch.where(none, fw, cw), torch.where(none, fh, ch)
    return cw, ch, none


def sample_boxes(method: str, n: int, h: int, w: int, generator: torch.Generator | None = None,
                 scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), beta_shape: float = 1.0, translate: float = 0.3,
                 crop_fraction: float = CROP_FRACTION) -> torch.Tensor:
    """``(n, 4)`` float64 boxes ``(x0, y0, x1, y1)`` in pixels of an ``h x w`` image, one per image.

    See the module table for each method; ``crop_fraction`` is the fixed crops' side over the shorter side.

    Example
    -------
    >>> sample_boxes("fixed_size_center_crop", 2, 32, 32).tolist()[0]
    [2.0, 2.0, 30.0, 30.0]
    >>> b = sample_boxes("rrc", 1000, 32, 32, torch.Generator().manual_seed(0))
    >>> bool((b[:, :2] >= 0).all() and (b[:, 2] <= 32).all() and (b[:, 3] <= 32).all())
    True
    """
    check_choice(method, METHODS, "crop method")
    check_params(scale, ratio, beta_shape, translate)
    short = min(h, w)
    if method in _RANDOM_SIZE:
        r = (1.0, 1.0) if method.endswith("_no_ar") else ratio
        cw, ch, fallback = _random_sizes(n, h, w, generator, scale, r, beta_shape)
    else:
        cw = ch = torch.full((n,), crop_fraction * short, dtype=torch.float64)
        fallback = torch.zeros(n, dtype=torch.bool)
    u = torch.rand(n, 2, generator=generator, dtype=torch.float64)
    if method in ("rrc", "fixed_size_random_crop"):  # anywhere inside the image (a fallback box centred)
        x0 = torch.where(fallback, (w - cw) / 2, (w - cw) * u[:, 0])
        y0 = torch.where(fallback, (h - ch) / 2, (h - ch) * u[:, 1])
    else:  # centred, then shifted by the translation (the image moves by t, so the box by -t)
        x0, y0 = (w - cw) / 2, (h - ch) / 2
        if method.startswith("translate"):
            x0 = x0 - translate * w * (2 * u[:, 0] - 1)
            y0 = y0 - translate * h * (2 * u[:, 1] - 1)
    return torch.stack([x0, y0, x0 + cw, y0 + ch], 1)


def box_crop(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor,
             out: tuple[int, int] | None = None) -> torch.Tensor:
    """The one box crop of the library: each image's axis-aligned box resampled to ``out`` = ``(h, w)`` (default:
    the input's side) in one ``grid_sample`` call (bilinear, black outside the image). Paper B's crops
    (:func:`resample`, boxes in pixels) and InstaAug's (:func:`invlib.learned.instaaug.crop`, centre and side in
    fractions) are this function in their own coordinates.

    Args:
        x: ``(B, C, H, W)`` float images.
        scale: ``(B, 2)`` the box's width and height over the image's.
        shift: ``(B, 2)`` the box's centre in ``grid_sample`` coordinates (-1 left/top, 1 right/bottom).
        out: the output's ``(h, w)``.

    On the CPU without a gradient through the box, the sampling grid is built from one row and one column per box:
    bit for bit ``F.affine_grid``'s (``x' = scale * x + 0 * y + shift`` rounded as its product does, on its base grid
    ``linspace(-1, 1, n) * (n - 1) / n``; checked on 300 random batches of boxes and sizes) in a fraction of its
    time; with a gradient through the box (a pathwise estimator), or on a GPU, ``F.affine_grid`` itself.

    Example
    -------
    >>> x = torch.rand(2, 3, 8, 8)
    >>> one, zero = torch.ones(2, 2), torch.zeros(2, 2)
    >>> torch.allclose(box_crop(x, one, zero), x, atol=1e-6), box_crop(x, one / 2, zero, (4, 4)).shape
    (True, torch.Size([2, 3, 4, 4]))
    """
    b = x.shape[0]
    if scale.shape != (b, 2) or shift.shape != (b, 2):
        raise ValueError(f"scale and shift must be (B, 2), one box per image; got {tuple(scale.shape)} and "
                         f"{tuple(shift.shape)} for {b} images.")
    h, w = out or x.shape[-2:]
    if scale.requires_grad or shift.requires_grad or x.device.type != "cpu":
        zero = torch.zeros_like(scale[:, 0])
        theta = torch.stack([torch.stack([scale[:, 0], zero, shift[:, 0]], -1),
                             torch.stack([zero, scale[:, 1], shift[:, 1]], -1)], -2)
        grid = F.affine_grid(theta.to(x.device), [b, x.shape[1], h, w], align_corners=False)
    else:
        grid = _box_grid(scale, shift, h, w)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def _box_grid(scale: torch.Tensor, shift: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """``F.affine_grid``'s sampling grid ``(B, h, w, 2)`` of axis-aligned boxes, one row and one column per box.

    Example
    -------
    >>> scale, shift = torch.rand(50, 2) + 0.2, torch.rand(50, 2) * 2 - 1
    >>> zero = torch.zeros(50)
    >>> theta = torch.stack([torch.stack([scale[:, 0], zero, shift[:, 0]], -1),
    ...                      torch.stack([zero, scale[:, 1], shift[:, 1]], -1)], -2)
    >>> torch.equal(_box_grid(scale, shift, 7, 9), F.affine_grid(theta, [50, 3, 7, 9], align_corners=False))
    True
    """
    def axis(n, i):  # (B, n): one coordinate of the grid along one side
        base = torch.linspace(-1, 1, n, dtype=scale.dtype, device=scale.device) * (n - 1) / n
        return scale[:, i, None] * base + shift[:, i, None]

    b = len(scale)
    return torch.stack([axis(w, 0)[:, None, :].expand(b, h, w), axis(h, 1)[:, :, None].expand(b, h, w)], -1)


def resample(x: torch.Tensor, boxes: torch.Tensor, size: int) -> torch.Tensor:
    """Each image's box resized to ``size x size`` in one ``grid_sample`` call (bilinear, black outside):
    :func:`box_crop` with boxes in pixels.

    Args:
        x: ``(B, C, H, W)`` float images; boxes: ``(B, 4)`` ``(x0, y0, x1, y1)`` in pixels.

    Example
    -------
    >>> x = torch.rand(1, 1, 8, 8)
    >>> torch.allclose(resample(x, torch.tensor([[2.0, 2.0, 6.0, 6.0]]), 4), x[..., 2:6, 2:6], atol=1e-6)
    True
    """
    h, w = x.shape[-2:]
    boxes = boxes.to(torch.float64)
    bw, bh = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    scale = torch.stack([bw / w, bh / h], 1)
    shift = torch.stack([(2 * boxes[:, 0] + bw) / w - 1, (2 * boxes[:, 1] + bh) / h - 1], 1)
    return box_crop(x, scale.to(x.dtype).to(x.device), shift.to(x.dtype).to(x.device), (size, size))


class Crop:
    """A crop method of the family as a training augmentation ``augment(x, generator) -> (B, C, size, size)``.

    Args:
        method: a key of :data:`METHODS`.
        size: output side (None: the input's height, e.g. the zoo's ``standard`` augmentation).
        scale, ratio, beta_shape: the random-size methods' area fraction interval, aspect-ratio interval and
            Beta shape (1 = uniform); translate: the largest shift, a fraction of the width / height;
            flip_p: probability of a horizontal flip after the crop (0 for the paper's family).
        crop_fraction: the fixed crops' side over the shorter side (224 / 256).

    Raises:
        ValueError: an unknown method (the valid ones are listed) or a parameter out of its range.

    Example
    -------
    >>> Crop("translate", size=28, translate=0.3)
    Crop('translate', size=28, translate=0.3)
    >>> Crop("rrc", scale=(0.5, 1.5))
    Traceback (most recent call last):
    ValueError: scale must be an interval (low, high) with 0 < low <= high <= 1, got (0.5, 1.5).
    """

    def __init__(self, method: str = "rrc", size: int | None = None, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3),
                 beta_shape: float = 1.0, translate: float = 0.3, flip_p: float = 0.0,
                 crop_fraction: float = CROP_FRACTION):
        self.method = check_choice(method, METHODS, "crop method")
        check_params(scale, ratio, beta_shape, translate, flip_p)
        if size is not None and (not isinstance(size, int) or size < 1):
            raise ValueError(f"size must be a positive integer (or None: the input's height), got {size!r}.")
        if not 0 < crop_fraction <= 1:
            raise ValueError(f"crop_fraction must be in (0, 1], got {crop_fraction}.")
        self.size, self.scale, self.ratio = size, tuple(scale), tuple(ratio)
        self.beta_shape, self.translate, self.flip_p, self.crop_fraction = beta_shape, translate, flip_p, crop_fraction

    def boxes(self, n: int, h: int, w: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(n, 4)`` boxes of this method for ``h x w`` images (:func:`sample_boxes`)."""
        return sample_boxes(self.method, n, h, w, generator, self.scale, self.ratio, self.beta_shape,
                            self.translate, self.crop_fraction)

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        b, _, h, w = x.shape
        out = resample(x, self.boxes(b, h, w, generator), self.size or h)
        if self.flip_p > 0:
            flip = (torch.rand(b, generator=generator) < self.flip_p).to(x.device).view(b, 1, 1, 1)
            out = torch.where(flip, out.flip(-1), out)
        return out

    def __repr__(self):
        shown = [f"{self.method!r}", f"size={self.size}"]
        if self.method in _RANDOM_SIZE:
            shown += [f"scale={self.scale}"] + ([] if self.method.endswith("_no_ar") else [f"ratio={self.ratio}"])
            shown += [f"beta_shape={self.beta_shape}"] if self.beta_shape != 1 else []
        if self.method.startswith("translate"):
            shown.append(f"translate={self.translate}")
        if self.flip_p:
            shown.append(f"flip_p={self.flip_p}")
        return f"Crop({', '.join(shown)})"


def standard(scale=(0.35, 1.0), ratio=(3 / 4, 4 / 3), flip_p: float = 0.5, size: int | None = None) -> Crop:
    """The zoo's ``standard`` augmentation: RandomResizedCrop (``scale`` (0.35, 1) rather than torchvision's
    (0.08, 1): Fashion-MNIST garments fill the 28 px frame, and 8 % of the area keeps too little of one for
    short CPU training) and a horizontal flip, output at the input's side.

    Example
    -------
    >>> standard()
    Crop('rrc', size=None, scale=(0.35, 1.0), ratio=(0.75, 1.3333333333333333), flip_p=0.5)
    """
    return Crop("rrc", size, scale, ratio, flip_p=flip_p)


def beta_stats(beta_shape: float, scale=(0.08, 1.0), n: int = 40_000_000, seed: int = 0) -> dict:
    """Monte-Carlo moments of RRC's area fraction ``s`` under a Beta shape (App. C, Table A1), from ``n`` draws.

    Returns ``{"mean_s", "mean_inv_s", "var_inv_s" (Table A1), "mean_zoom" (E[1/sqrt(s)]: how much larger an
    object appears in a training crop than in the whole image, on average), "n"}``.

    Example
    -------
    >>> round(beta_stats(1.0)["var_inv_s"], 2)  # the uniform: 4.96 in Table A1
    4.96
    """
    check_params(scale, beta_shape=beta_shape)
    gen = torch.Generator().manual_seed(seed)
    sums = torch.zeros(4, dtype=torch.float64)
    for start in range(0, n, 1_000_000):
        s = sample_scale(torch.rand(min(1_000_000, n - start), generator=gen, dtype=torch.float64), scale,
                         beta_shape)
        inv = 1 / s
        sums += torch.stack([s.sum(), inv.sum(), (inv * inv).sum(), inv.sqrt().sum()])
    m = sums / n
    return dict(mean_s=float(m[0]), mean_inv_s=float(m[1]), var_inv_s=float(m[2] - m[1] ** 2),
                mean_zoom=float(m[3]), n=n)

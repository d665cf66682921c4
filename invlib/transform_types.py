"""Paper C's nine transformation types (Tensmeyer & Martinez 2016, Table 1 and App. A), batched.

Each type is used two ways:

- **training**: :class:`TypeAugment` ``(kind, magnitude)`` draws a random transform per image from the type's
  training range (the zoo's augmentations ``tm_<kind>``, so a family of networks is a list of
  :class:`invlib.zoo.Spec`);
- **measurement**: :func:`measure` ``(kind, x, value)`` applies one fixed, deterministic transform to every image,
  for the values of a grid (:func:`grid`; the paper's grids of App. A reach beyond the training ranges).

Units follow the paper: grey levels of 0..255 for colour jitter and noise, pixels for blur and elastic widths,
degrees for rotation and shear, the resize factor (e.g. 320/227) for crop, fractions of the side for
perspective. Pixels that enter the image from outside are black (App. A). Every op comes from
:mod:`invlib.transforms` (``elastic``, ``perspective``, ``brightness_shift`` and ``color_cast`` were added
for this paper); the crop is one affine warp per batch.

Measurement values: numbers for most types; ``(alpha, sigma)`` pairs for elastic; ``"h"``, ``"v"``, ``"hv"`` for
mirror; a position ``0..24`` on the 5x5 grid of windows (row-major, 12 = centre) for crop.

Example
-------
>>> x = torch.rand(4, 3, 28, 28)
>>> aug = TypeAugment("rotation", 20.0)
>>> aug(x, torch.Generator().manual_seed(0)).shape
torch.Size([4, 3, 28, 28])
>>> torch.equal(measure("rotation", x, 0.0), x), grid("rotation")[:3]
(True, (-45.0, -30.0, -25.0))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from . import transforms as T
from .utils import check_choice

TYPES = {"color_jitter": "Color Jitter", "crop": "Crop", "elastic": "Elastic Deformation", "blur": "Gaussian Blur",
         "noise": "Gaussian Noise", "mirror": "Mirror", "perspective": "Perspective", "rotation": "Rotation",
         "shear": "Shear"}
MIRRORS = ("h", "v", "hv")
CENTRE = 12  # the centre window of the 5x5 crop grid

# The training magnitudes of the paper's family (App. A; the top of each range). Perspective is the exception:
# the paper's sigmas (0.001 to 0.004 of the side) move corners by less than a pixel at 28 px, so ours are 25x.
PAPER_MAGNITUDES = {
    "color_jitter": (5.0, 10.0, 15.0, 20.0),  # sigma of the per-channel N(0, sigma) cast, grey levels
    "crop": (240 / 227, 256 / 227, 288 / 227, 320 / 227),  # resize factor before the fixed-size window
    "elastic": (5.0, 10.0),  # largest alpha (pixels), each with field sigma 2 and 3
    "blur": (1.5, 3.0),  # largest sigma (pixels)
    "noise": (5.0, 10.0, 15.0, 20.0),  # largest sigma, grey levels
    "mirror": MIRRORS,
    "perspective": (0.025, 0.05, 0.075, 0.1),  # largest corner sigma (fraction of the side); the paper's x 25
    "rotation": (5.0, 10.0, 15.0, 20.0),  # degrees, +-
    "shear": (5.0, 10.0, 15.0, 20.0),  # degrees, +-, horizontal or vertical
}
_SIGNED = lambda *v: tuple(sorted({s * a for a in v for s in (-1.0, 1.0)}))
GRIDS = {  # App. A's measurement grids
    "color_jitter": _SIGNED(2, 5, 10, 15, 20, 25, 30, 45),
    "crop": tuple(k for k in range(25) if k != CENTRE),
    "elastic": tuple((a, s) for a in (5.0, 10.0, 15.0) for s in (2.0, 2.5, 3.0, 3.5)),
    "blur": tuple(0.5 * k for k in range(1, 11)),
    "noise": (2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 20.0, 25.0, 30.0, 40.0),
    "mirror": MIRRORS,
    "perspective": tuple(round(0.02 * k, 2) for k in range(1, 11)),
    "rotation": _SIGNED(2.5, 5, 10, 15, 20, 25, 30, 45),
    "shear": _SIGNED(5, 10, 15, 20, 25, 30),
}
SMALL_GRIDS = {  # a subset of each grid, still reaching about twice the largest training magnitude
    "color_jitter": (-45.0, -20.0, -5.0, 5.0, 20.0, 45.0),
    "crop": (0, 2, 4, 10, 14, 20, 22, 24),  # the corners and edge centres of the 5x5 grid
    "elastic": ((5.0, 3.0), (10.0, 3.0), (10.0, 2.0), (15.0, 2.0)),
    "blur": (0.5, 1.0, 2.0, 3.0, 5.0),
    "noise": (5.0, 10.0, 20.0, 30.0, 40.0),
    "mirror": MIRRORS,
    "perspective": (0.02, 0.06, 0.1, 0.14, 0.2),
    "rotation": (-30.0, -15.0, -5.0, 5.0, 15.0, 30.0, 45.0),
    "shear": (-30.0, -15.0, -5.0, 5.0, 15.0, 30.0),
}


def check_kind(kind: str) -> str:
    """``kind`` if it is one of :data:`TYPES`; else ``ValueError`` listing them.

    Example
    -------
    >>> check_kind("rotate")
    Traceback (most recent call last):
    ValueError: Unknown transformation type 'rotate'. Did you mean 'rotation'? Valid transformation types: blur, \
color_jitter, crop, elastic, mirror, noise, perspective, rotation, shear.
    """
    return check_choice(kind, TYPES, "transformation type")


def grid(kind: str, which: str = "paper") -> tuple:
    """The measurement values of ``kind``: App. A's grid (``"paper"``) or its subset (``"small"``).

    Example
    -------
    >>> grid("noise", "small")
    (5.0, 10.0, 20.0, 30.0, 40.0)
    """
    return {"paper": GRIDS, "small": SMALL_GRIDS}[check_choice(which, ("paper", "small"), "grid")][check_kind(kind)]


def check_value(kind: str, value, values=None):
    """``value`` as :func:`measure` takes it (crop positions as ints, elastic pairs as tuples of floats, numbers
    as floats), if it is on the grid ``values``; else ``ValueError`` saying the grid. ``values=None`` checks the
    form only (any magnitude; fine-tuning uses values between the grid's).

    Example
    -------
    >>> check_value("rotation", 7.0, grid("rotation", "small"))
    Traceback (most recent call last):
    ValueError: 7.0 is not on the rotation grid: -30.0, -15.0, -5.0, 5.0, 15.0, 30.0, 45.0.
    """
    if kind == "crop":
        v = int(value)
    elif isinstance(value, (list, tuple)):
        v = tuple(float(a) for a in value)
    else:
        v = value if isinstance(value, str) else float(value)
    if values is not None and v not in tuple(values):
        raise ValueError(f"{value!r} is not on the {kind} grid: {', '.join(map(str, values))}.")
    return v


# ------------------------------------------------------------------------------ measurement
def _crop(x: torch.Tensor, resize: float, dx: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """The ``H x W`` window of the image resized by ``resize``, offset from the centre by ``(dx, dy)`` in
    ``[-1, 1]`` of the largest offset (per image): one affine warp, no black border."""
    b, _, h, w = x.shape
    s = torch.full((b,), float(resize), dtype=x.dtype, device=x.device)
    zero = torch.zeros_like(s)
    room = x.new_tensor([(resize - 1) * w / 2, (resize - 1) * h / 2])
    t = -torch.stack([dx, dy], -1).to(x) * room  # moving the window right moves the content left
    return T._warp(x, T._mat(s, zero, zero, s), t)


def crop_offsets(position: int) -> tuple[float, float]:
    """``(dx, dy)`` in ``[-1, 1]`` of window ``position`` on the 5x5 grid (row-major; 0 = upper left).

    Example
    -------
    >>> crop_offsets(0), crop_offsets(12), crop_offsets(24)
    ((-1.0, -1.0), (0.0, 0.0), (1.0, 1.0))
    """
    if not 0 <= int(position) < 25:
        raise ValueError(f"A crop position is 0..24 on the 5x5 grid (12 = centre), got {position!r}.")
    row, col = divmod(int(position), 5)
    return col / 2 - 1, row / 2 - 1


def measure(kind: str, x: torch.Tensor, value, resize: float = 320 / 227, seed: int = 0,
            batch: int = 0) -> torch.Tensor:
    """Apply the fixed transform ``value`` of type ``kind`` to every image of ``x`` ``(B, C, H, W)`` in [0, 1].

    Deterministic: the elastic field and the perspective corners come from ``seed`` and are the same for every
    image (App. A); the noise, different for every image, comes from ``(seed, batch)``, so that a data set measured
    in batches gets new noise in each (pass the batch's index). ``resize`` is the crop type's resize factor (the
    reference is the centre window, :func:`reference`).

    Example
    -------
    >>> x = torch.rand(2, 3, 28, 28)
    >>> torch.equal(measure("mirror", x, "h"), x.flip(-1))
    True
    >>> torch.equal(measure("crop", x, CENTRE), reference("crop", x))
    True
    """
    kind = check_kind(kind)
    if is_identity(kind, value):
        return reference(kind, x, resize) if kind == "crop" else x
    gen = torch.Generator(device=x.device).manual_seed(seed)
    if kind == "color_jitter":
        return T.apply("brightness_shift", x, float(value) / 255)
    if kind == "crop":
        dx, dy = crop_offsets(value)
        return _crop(x, resize, x.new_full((len(x),), dx), x.new_full((len(x),), dy)).clamp(0, 1)
    if kind == "elastic":
        alpha, sigma = value
        return T.apply("elastic", x, float(alpha), gen, sigma=float(sigma), shared=True)
    if kind == "mirror":
        if value not in MIRRORS:
            raise ValueError(f"A mirror value is one of {', '.join(MIRRORS)}, got {value!r}.")
        return x.flip(*[{"h": -1, "v": -2}[a] for a in value])
    op = {"blur": "gaussian_blur", "noise": "gaussian_noise", "perspective": "perspective", "rotation": "rotate",
          "shear": "shear_x"}[kind]
    if kind == "noise":
        gen.manual_seed(seed * 1_000_003 + batch)
        return T.apply(op, x, float(value) / 255, gen)
    return T.apply(op, x, float(value), gen, **({"shared": True} if kind == "perspective" else {}))


def is_identity(kind: str, value) -> bool:
    """Whether ``value`` leaves the images as they are (0, alpha 0, no mirror ``""``, the centre window).

    Example
    -------
    >>> is_identity("elastic", (0.0, 3.0)), is_identity("crop", CENTRE), is_identity("rotation", 5.0)
    (True, True, False)
    """
    if kind == "mirror":
        return value == ""
    if kind == "crop":
        return int(value) == CENTRE
    return float(value[0] if kind == "elastic" else value) == 0


def reference(kind: str, x: torch.Tensor, resize: float = 320 / 227) -> torch.Tensor:
    """The untransformed input a measurement compares with: the centre window for crop, ``x`` otherwise."""
    if check_kind(kind) != "crop" or resize == 1:
        return x
    zero = x.new_zeros(len(x))
    return _crop(x, resize, zero, zero).clamp(0, 1)


def in_training_range(kind: str, value, magnitude, resize: float = 320 / 227) -> bool:
    """Whether measurement ``value`` lies inside the training range of a network trained with ``magnitude``
    (``None``: the baseline, trained without augmentation; elastic: ``alpha`` or ``(alpha, sigma)``). A colour
    shift counts as inside when it is within two sigmas of the training cast; a crop window measured at
    ``resize`` when the network's own resize allowed its offset in pixels.

    Example
    -------
    >>> in_training_range("rotation", 15.0, 20.0), in_training_range("rotation", 30.0, 20.0)
    (True, False)
    >>> in_training_range("mirror", "hv", "h"), in_training_range("noise", 5.0, None)
    (False, False)
    >>> in_training_range("crop", 0, 240 / 227), in_training_range("crop", 0, 320 / 227)
    (False, True)
    """
    if magnitude is None:
        return False
    if kind == "mirror":
        return value in ("h", "v", "hv") if magnitude == "hv" else value == magnitude
    if kind == "crop":
        return max(map(abs, crop_offsets(value))) * (resize - 1) <= float(magnitude) - 1 + 1e-9
    if kind == "elastic":
        top = magnitude[0] if isinstance(magnitude, (tuple, list)) else magnitude
        return float(value[0]) <= float(top)
    if kind == "color_jitter":
        return abs(float(value)) <= 2 * float(magnitude)
    return abs(float(value)) <= float(magnitude) + 1e-9


def value_label(kind: str, value) -> str:
    """A short axis label of a measurement value.

    Example
    -------
    >>> value_label("elastic", (10.0, 2.0)), value_label("crop", 4), value_label("rotation", -5.0)
    ('a10 s2', 'r0c4', '-5')
    """
    if kind == "elastic":
        return f"a{value[0]:g} s{value[1]:g}"
    if kind == "crop":
        return "r{}c{}".format(*divmod(int(value), 5))
    return value if isinstance(value, str) else f"{value:g}"


def magnitude_label(kind: str, magnitude, sigma: float | None = None) -> str:
    """The name of a network by its training transform, as in the paper's Table 3.

    Example
    -------
    >>> magnitude_label("rotation", 20.0), magnitude_label("crop", 320 / 227), magnitude_label(None, None)
    ('Rotation ±20', 'Crop x1.41', 'Baseline')
    """
    if kind is None:
        return "Baseline"
    name = TYPES[kind]
    if kind == "mirror":
        return f"{name} {dict(h='Horz.', v='Vert.', hv='Horz./Vert.')[magnitude]}"
    if kind == "crop":
        return f"{name} x{magnitude:.2f}"
    if kind in ("rotation", "shear"):
        return f"{name} ±{magnitude:g}"
    if kind == "elastic":
        return f"Elastic a<={magnitude:g} s={sigma:g}"
    return f"{name} σ={magnitude:g}"


# ------------------------------------------------------------------------------ training
def _uniform(n: int, low: float, high: float, gen, like: torch.Tensor) -> torch.Tensor:
    return low + (high - low) * T.draw_like(torch.rand, n, gen, like)


@dataclass(frozen=True)
class TypeAugment:
    """The random training augmentation of one type: every image gets its own transform from the range.

    ``magnitude`` is the top of the range (units in the module docstring): colour jitter adds an ``N(0, m)``
    value per channel; crop takes an ``H x W`` window anywhere in the image resized by ``m``; elastic draws
    alpha in ``[0, m]`` with field width ``sigma``; blur and noise draw sigma in ``[0, m]``; mirror flips
    horizontally (``"h"``), vertically (``"v"``) or each independently (``"hv"``), each with probability 1/2;
    perspective draws the corner sigma in ``[0, m]``; rotation draws an angle in ``[-m, m]``; shear an angle in
    ``[-m, m]``, horizontal or vertical with probability 1/2.

    Call: ``aug(x (B, C, H, W) float in [0, 1], generator) -> (B, C, H, W)``.

    Example
    -------
    >>> aug = TypeAugment("mirror", "hv")
    >>> aug(torch.rand(8, 3, 16, 16), torch.Generator().manual_seed(0)).shape
    torch.Size([8, 3, 16, 16])
    >>> TypeAugment("mirror", "x")
    Traceback (most recent call last):
    ValueError: A mirror magnitude is one of h, v, hv, got 'x'.
    """

    kind: str
    magnitude: float | str
    sigma: float = 3.0  # elastic only: the width (pixels) of the smoothing of the displacement field

    def __post_init__(self):
        check_kind(self.kind)
        if self.kind == "mirror":
            if self.magnitude not in MIRRORS:
                raise ValueError(f"A mirror magnitude is one of {', '.join(MIRRORS)}, got {self.magnitude!r}.")
        elif not isinstance(self.magnitude, (int, float)) or not math.isfinite(self.magnitude) \
                or self.magnitude < (1 if self.kind == "crop" else 0):
            raise ValueError(f"The {self.kind} magnitude must be a number >= {1 if self.kind == 'crop' else 0}, "
                             f"got {self.magnitude!r}.")

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        b, k, m, gen = len(x), self.kind, self.magnitude, generator
        if k == "mirror":
            for axis in m:
                flip = (T.draw_like(torch.rand, b, gen, x) < 0.5).to(x.dtype)
                x = T.apply("hflip" if axis == "h" else "vflip", x, flip)
            return x
        if k == "color_jitter":
            return T.apply("color_cast", x, m / 255, gen)
        if k == "crop":
            return _crop(x, m, _uniform(b, -1, 1, gen, x), _uniform(b, -1, 1, gen, x)).clamp(0, 1)
        if k == "shear":
            tan = torch.tan(torch.deg2rad(_uniform(b, -m, m, gen, x)))
            horizontal = T.draw_like(torch.rand, b, gen, x) < 0.5
            one, zero = torch.ones_like(tan), torch.zeros_like(tan)
            a = T._mat(one, torch.where(horizontal, tan, zero), torch.where(horizontal, zero, tan), one)
            return T._warp(x, a).clamp(0, 1)
        low = -m if k == "rotation" else 0.0
        values = _uniform(b, low, m, gen, x)
        if k == "noise":
            return T.apply("gaussian_noise", x, values / 255, gen)
        if k == "elastic":
            return T.apply("elastic", x, values, gen, sigma=self.sigma)
        op = {"blur": "gaussian_blur", "perspective": "perspective", "rotation": "rotate"}[k]
        return T.apply(op, x, values, gen)


def _factory(kind: str):
    default = PAPER_MAGNITUDES[kind][-1]
    if kind == "elastic":
        def make(magnitude: float = default, sigma: float = 3.0) -> TypeAugment:
            return TypeAugment(kind, magnitude, sigma)
    else:
        def make(magnitude: float | str = default) -> TypeAugment:
            return TypeAugment(kind, magnitude)
    make.__doc__ = f"Paper C's {TYPES[kind]} training augmentation (:class:`TypeAugment`)."
    return make


AUGMENTATIONS = {f"tm_{kind}": _factory(kind) for kind in TYPES}  # the zoo's names of the nine

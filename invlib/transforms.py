"""One registry of batched image transformations with a per-sample magnitude.

Every op maps float images ``x`` of shape ``(B, C, H, W)`` in ``[0, 1]`` and magnitudes ``m`` of shape
``(B,)`` to images of shape ``(B, C, H, W)``, with no Python loop over the batch. Continuous ops are
differentiable with respect to ``x`` and ``m`` (AugNet / Augerino learn ``m`` by gradient descent).

Conventions: pixel coordinates with x to the right and y down; geometric ops act about the image centre
``((W - 1) / 2, (H - 1) / 2)``, sample bilinearly and fill with 0 (black) outside the image; the affine ones take
``mode``, ``fill`` and ``origin`` options to change that (:func:`_warp`, e.g. PIL's grey fill). Colour ops
follow ``torchvision.transforms.v2.functional`` on float tensors. ``saturation`` and ``hue`` leave
single-channel (grayscale) images unchanged, as torchvision does for saturation.

Adding an op is one function plus one line::

    @register("my_op", "appearance", low=0.0, high=1.0, identity=0.0, unit="weight")
    def my_op(x, m):
        "One-line description."
        return x + _bc(m) * (1 - x)

Example
-------
>>> x = torch.rand(4, 3, 32, 32)
>>> apply("rotate", x, torch.tensor([0.0, 10.0, -30.0, 90.0])).shape
torch.Size([4, 3, 32, 32])
>>> available("geometric")[:3]
['elastic', 'hflip', 'perspective']
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import kornia
import torch

from .utils import check_choice, check_images

GROUPS = ("geometric", "appearance")


@dataclass(frozen=True)
class Op:
    """A registered transformation.

    Attributes
    ----------
    name:      registry key
    fn:        ``fn(x: (B, C, H, W), m: (B,)) -> (B, C, H, W)``; random ops also take ``generator=``
    group:     ``'geometric'`` or ``'appearance'``
    low, high: valid magnitude range, inclusive
    identity:  magnitude that leaves the image unchanged
    unit:      what the magnitude measures, e.g. ``'degrees'``
    doc:       first line of ``fn``'s docstring
    random:    True when ``fn`` draws random numbers (takes a ``generator`` keyword)

    Example
    -------
    >>> get("rotate").unit
    'degrees'
    """

    name: str
    fn: Callable[..., torch.Tensor]
    group: str
    low: float
    high: float
    identity: float
    unit: str
    doc: str = ""
    random: bool = False


_REGISTRY: dict[str, Op] = {}


def register(name: str, group: str, low: float, high: float, identity: float, unit: str):
    """Decorator adding ``fn(x: (B, C, H, W), m: (B,)) -> (B, C, H, W)`` to the registry; returns ``fn``.

    Example
    -------
    >>> @register("darken_demo", "appearance", 0.0, 1.0, 0.0, "weight")
    ... def darken_demo(x, m):
    ...     "Blend towards black."
    ...     return x * (1 - _bc(m))
    >>> apply("darken_demo", torch.ones(1, 1, 2, 2), 0.25).max().item()
    0.75
    >>> _ = _REGISTRY.pop("darken_demo")
    """
    check_choice(group, GROUPS, "group")
    if name in _REGISTRY:
        raise ValueError(f"Op {name!r} is already registered.")
    if not low <= identity <= high:
        raise ValueError(f"Op {name!r}: need low <= identity <= high, got {low}, {identity}, {high}.")

    def decorator(fn):
        doc = (inspect.getdoc(fn) or "").split("\n")[0]
        random = "generator" in inspect.signature(fn).parameters
        _REGISTRY[name] = Op(name, fn, group, float(low), float(high), float(identity), unit, doc, random)
        return fn

    return decorator


def get(name: str) -> Op:
    """The :class:`Op` called ``name``; an unknown name raises ``ValueError`` listing the valid ones.

    Example
    -------
    >>> get("hue").low, get("hue").high
    (-0.5, 0.5)
    """
    return _REGISTRY[check_choice(name, _REGISTRY, "op")]


def available(group: str | None = None) -> list[str]:
    """Sorted op names, all of them or those of ``group`` (``'geometric'`` or ``'appearance'``).

    Example
    -------
    >>> "brightness" in available("appearance")
    True
    """
    if group is not None:
        check_choice(group, GROUPS, "group")
    return sorted(n for n, op in _REGISTRY.items() if group is None or op.group == group)


def _magnitudes(op: Op, magnitude, x: torch.Tensor) -> torch.Tensor:
    """Check ``magnitude`` (scalar or ``(B,)``) against ``op``'s range; return it as ``(B,)`` like ``x``."""
    b = x.shape[0]
    m = magnitude if isinstance(magnitude, torch.Tensor) else torch.as_tensor(magnitude)
    if not m.is_floating_point():
        m = m.float()
    if m.ndim > 1 or (m.ndim == 1 and m.shape[0] != b):
        raise ValueError(
            f"Magnitude for op {op.name!r} must be a scalar or have shape ({b},) (one per image), "
            f"got shape {tuple(m.shape)}."
        )
    if m.numel() and not ((m >= op.low) & (m <= op.high)).all():  # NaN fails both comparisons
        lo, hi = float(m.detach().min()), float(m.detach().max())
        raise ValueError(
            f"Magnitude for op {op.name!r} must be in [{op.low:g}, {op.high:g}] ({op.unit}), "
            f"got values in [{lo:g}, {hi:g}]."
        )
    return m.to(device=x.device, dtype=x.dtype).expand(b)


def apply(name: str, x: torch.Tensor, magnitude, generator: torch.Generator | None = None, **options) -> torch.Tensor:
    """Apply op ``name`` to images ``x`` ``(B, C, H, W)`` with magnitude a scalar or a ``(B,)`` tensor.

    Returns ``(B, C, H, W)`` clamped to ``[0, 1]``. ``generator`` (on ``x``'s device) is passed only to
    random ops (``gaussian_noise``, ``color_cast``, ``elastic``, ``perspective``) and ignored by the others.
    ``options`` are an op's own keywords (the affine ops' ``mode``, ``fill``, ``origin``, :func:`_warp`;
    ``elastic``'s ``sigma``; ``shared=True``: one random draw for the
    whole batch). Out-of-range magnitudes raise ``ValueError`` naming the op, range and unit.

    Example
    -------
    >>> x = torch.rand(2, 3, 8, 8)
    >>> torch.equal(apply("hflip", x, 1.0), x.flip(-1))
    True
    >>> apply("brightness", x, torch.tensor([0.5, 1.5])).shape
    torch.Size([2, 3, 8, 8])
    """
    op = get(name)
    check_images(x)
    m = _magnitudes(op, magnitude, x)
    out = op.fn(x, m, generator=generator, **options) if op.random else op.fn(x, m, **options)
    return out.clamp(0.0, 1.0)


def _far_end(op: Op) -> float:
    return op.high if op.high - op.identity >= op.identity - op.low else op.low


def levels(name: str, n: int = 10) -> torch.Tensor:
    """``(n,)`` magnitudes from the identity to the far end of the range (the higher end on a tie).

    Example
    -------
    >>> levels("solarize", 3)
    tensor([1.0000, 0.5000, 0.0000])
    """
    op = get(name)
    return torch.linspace(op.identity, _far_end(op), n)


def sample_magnitudes(
    name: str,
    n: int,
    low: float | None = None,
    high: float | None = None,
    generator: torch.Generator | None = None,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """``(n,)`` magnitudes drawn uniformly in ``[low, high]`` (default: the op's whole range).

    Example
    -------
    >>> m = sample_magnitudes("rotate", 5, -30, 30, generator=torch.Generator().manual_seed(0))
    >>> m.shape, bool(m.abs().max() <= 30)
    (torch.Size([5]), True)
    """
    op = get(name)
    low = op.low if low is None else float(low)
    high = op.high if high is None else float(high)
    if not op.low <= low <= high <= op.high:
        raise ValueError(
            f"Sampling range for op {op.name!r} must satisfy {op.low:g} <= low <= high <= {op.high:g} "
            f"({op.unit}), got low={low:g}, high={high:g}."
        )
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}.")
    u = torch.rand(int(n), generator=generator, device=device)
    return (low + (high - low) * u).clamp(low, high)


def draw_like(fn, shape, generator: torch.Generator | None, like: torch.Tensor) -> torch.Tensor:
    """``fn(shape)`` (``torch.rand`` or ``torch.randn``) drawn on the generator's device, then moved to ``like``'s
    device and dtype: training draws with a CPU generator (:func:`invlib.train.fit`) for batches on a GPU, and the
    same generator gives the same draws whatever the batch's device.

    Example
    -------
    >>> x = torch.zeros(2, 3, dtype=torch.float64)
    >>> a = draw_like(torch.randn, (2, 3), torch.Generator().manual_seed(0), x)
    >>> a.dtype, torch.equal(a, torch.randn(2, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    (torch.float64, True)
    """
    device = generator.device if generator is not None else like.device
    return fn(shape, generator=generator, device=device, dtype=like.dtype).to(like.device)


@dataclass(frozen=True)
class RandomOp:
    """A training augmentation: op ``name`` on every image with its own magnitude drawn uniformly in
    ``[low, high]`` (:func:`sample_magnitudes`, from ``generator``).

    Call: ``aug(x (B, C, H, W) float in [0, 1], generator) -> (B, C, H, W)``. An out-of-range interval fails when
    the augmentation is made, naming the op's range.

    Example
    -------
    >>> aug = RandomOp("rotate", -45.0, 45.0)
    >>> aug(torch.rand(4, 3, 16, 16), torch.Generator().manual_seed(0)).shape
    torch.Size([4, 3, 16, 16])
    >>> RandomOp("brightness", 0.5, 9.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Sampling range for op 'brightness' must satisfy 0 <= low <= high <= ...
    """

    name: str
    low: float
    high: float

    def __post_init__(self):
        sample_magnitudes(self.name, 0, self.low, self.high)  # checks the op and the interval

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        m = sample_magnitudes(self.name, len(x), self.low, self.high, generator).to(x.device)
        return apply(self.name, x, m, generator)


# ---------------------------------------------------------------------------------------------- helpers


def _bc(m: torch.Tensor) -> torch.Tensor:
    """``(B,)`` -> ``(B, 1, 1, 1)`` so a per-sample value broadcasts over an image batch."""
    return m.view(-1, 1, 1, 1)


def _mix(a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``a`` where ``w = 0``, ``b`` where ``w = 1`` (per sample; exact at ``w = 0``)."""
    return a + _bc(w) * (b - a)


def _gray(x: torch.Tensor) -> torch.Tensor:
    """Luma ``(B, 1, H, W)`` with torchvision's weights; a 1-channel image is its own gray."""
    if x.shape[1] != 3:
        return x.mean(1, keepdim=True)
    return 0.2989 * x[:, 0:1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:3]


WARP_MODES = ("bilinear", "nearest", "bicubic")
WARP_ORIGINS = ("centre", "corner")


def _warp(x: torch.Tensor, a: torch.Tensor, t: torch.Tensor | None = None, mode: str = "bilinear",
          fill: float = 0.0, origin: str = "centre") -> torch.Tensor:
    """Move content by ``dst = a (src - o) + o + t``; ``a``: ``(B, 2, 2)``, ``t``: ``(B, 2)`` in pixels.

    ``o`` is the image centre (``origin="centre"``) or the top-left corner of the frame (``"corner"``, as PIL's
    ``Image.transform`` and so the authors' shears of paper B). Each output pixel samples the input (``mode``:
    bilinear, nearest or bicubic, ``grid_sample``'s) at ``a^-1 (dst - o - t) + o``, with ``fill`` outside the
    image. Hand-written rather than ``kornia.geometry.transform.warp_affine``: building the sampling grid
    directly (no ``affine_grid``, no 3x3 inverse) is about twice as fast on small images.
    """
    if mode not in WARP_MODES or origin not in WARP_ORIGINS:
        raise ValueError(f"warp mode must be one of {', '.join(WARP_MODES)} and origin one of "
                         f"{', '.join(WARP_ORIGINS)}; got mode={mode!r}, origin={origin!r}.")
    b, _, h, w = x.shape
    if origin == "corner":  # o - a o, with o the corner (-w/2, -h/2) in centre coordinates
        o = x.new_tensor([-w / 2, -h / 2])
        t_o = o - a @ o
        t = t_o if t is None else t + t_o
    det = a[:, 0, 0] * a[:, 1, 1] - a[:, 0, 1] * a[:, 1, 0]
    inv = torch.stack([a[:, 1, 1], -a[:, 0, 1], -a[:, 1, 0], a[:, 0, 0]], -1) / det.unsqueeze(-1)
    dx = (torch.arange(w, dtype=x.dtype, device=x.device) - (w - 1) / 2).expand(b, w)
    dy = (torch.arange(h, dtype=x.dtype, device=x.device) - (h - 1) / 2).expand(b, h)
    if t is not None:
        dx, dy = dx - t[:, :1], dy - t[:, 1:]
    # grid_sample (align_corners=False) puts pixel k of n at 2 (k - (n - 1) / 2) / n: scale by 2/n.
    scale = x.new_tensor([2 / w, 2 / h])
    col_x, col_y = inv[:, 0::2] * scale, inv[:, 1::2] * scale  # (B, 2): columns of diag(2/w, 2/h) a^-1
    grid = col_x[:, :, None, None] * dx[:, None, None, :] + col_y[:, :, None, None] * dy[:, None, :, None]
    grid = grid.permute(0, 2, 3, 1)  # (B, H, W, 2); built channel-first, where broadcasting is fast
    # a constant fill: warp x - fill with zeros outside, then add it back (exact: every mode's weights sum to 1)
    out = torch.nn.functional.grid_sample(x - fill if fill else x, grid, mode, padding_mode="zeros",
                                          align_corners=False)
    return out + fill if fill else out


def _mat(a, b, c, d) -> torch.Tensor:
    """Stack per-sample entries into ``(B, 2, 2)`` matrices ``[[a, b], [c, d]]``."""
    return torch.stack([torch.stack([a, b], -1), torch.stack([c, d], -1)], -2)


# ---------------------------------------------------------------------------------------------- geometric


@register("rotate", "geometric", -180, 180, 0, "degrees")
def rotate(x, m, **warp):
    """Rotate about the centre, counter-clockwise for positive degrees (``warp``: :func:`_warp`'s ``mode``,
    ``fill``, ``origin``, as for every affine op)."""
    th = torch.deg2rad(m)
    cos, sin = torch.cos(th), torch.sin(th)
    return _warp(x, _mat(cos, sin, -sin, cos), **warp)


def _translate(x, m, axis, **warp):
    size = x.shape[-1] if axis == 0 else x.shape[-2]
    zero = torch.zeros_like(m)
    t = torch.stack([m * size, zero] if axis == 0 else [zero, m * size], -1)
    return _warp(x, torch.eye(2, dtype=x.dtype, device=x.device).expand(len(m), 2, 2), t, **warp)


@register("translate_x", "geometric", -1, 1, 0, "fraction of width")
def translate_x(x, m, **warp):
    """Shift content right by ``m * W`` pixels (left when negative)."""
    return _translate(x, m, 0, **warp)


@register("translate_y", "geometric", -1, 1, 0, "fraction of height")
def translate_y(x, m, **warp):
    """Shift content down by ``m * H`` pixels (up when negative)."""
    return _translate(x, m, 1, **warp)


@register("shear_x", "geometric", -91, 91, 0, "degrees")
def shear_x(x, m, **warp):
    """Horizontal shear about the centre, ``x' = x + tan(m) (y - cy)``: rows below the centre move right
    (``origin="corner"``: about the top row, so every other row moves right)."""
    s = torch.tan(torch.deg2rad(m))
    one, zero = torch.ones_like(s), torch.zeros_like(s)
    return _warp(x, _mat(one, s, zero, one), **warp)


@register("shear_y", "geometric", -91, 91, 0, "degrees")
def shear_y(x, m, **warp):
    """Vertical shear about the centre, ``y' = y + tan(m) (x - cx)``: columns right of it move down."""
    s = torch.tan(torch.deg2rad(m))
    one, zero = torch.ones_like(s), torch.zeros_like(s)
    return _warp(x, _mat(one, zero, s, one), **warp)


def _zoom(x, m, **warp):
    zero = torch.zeros_like(m)
    return _warp(x, _mat(m, zero, zero, m), **warp)


@register("zoom_in", "geometric", 1, 4, 1, "factor")
def zoom_in(x, m, **warp):
    """Magnify by ``m >= 1`` about the centre (a centre crop of side ``1/m`` resized to full size)."""
    return _zoom(x, m, **warp)


@register("zoom_out", "geometric", 0.1, 1, 1, "scale")
def zoom_out(x, m, **warp):
    """Shrink by ``m <= 1`` about the centre; the border is filled with black (or ``fill``)."""
    return _zoom(x, m, **warp)


@register("hflip", "geometric", 0, 1, 0, "switch (flip if >= 0.5)")
def hflip(x, m):
    """Mirror left-right where ``m >= 0.5``."""
    w = x.shape[-1]
    j = torch.arange(w, device=x.device)
    cols = torch.where(_bc(m) >= 0.5, w - 1 - j, j)  # (B, 1, 1, W): source column of each output column
    return x.gather(3, cols.expand_as(x))  # one pass, cheaper than where() over a flipped copy


@register("vflip", "geometric", 0, 1, 0, "switch (flip if >= 0.5)")
def vflip(x, m):
    """Mirror top-bottom where ``m >= 0.5``."""
    b, c, h, w = x.shape
    j = torch.arange(h, device=x.device)
    rows = torch.where(m.view(-1, 1, 1) >= 0.5, h - 1 - j, j)  # (B, 1, H): source row of each output row
    rows = rows + torch.arange(b * c, device=x.device).view(b, c, 1) * h  # rows of x viewed as (B C H, W)
    return x.reshape(b * c * h, w).index_select(0, rows.view(-1)).view(b, c, h, w)


def _unchanged_at_zero(x: torch.Tensor, out: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """``out``, except the images whose magnitude is exactly 0, which stay bit for bit ``x``."""
    return torch.where(_bc(m) == 0, x, out)


def _pixel_grid(h: int, w: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Pixel-centre coordinates x and y, each ``(H, W)``, in ``like``'s dtype and device."""
    ys, xs = torch.meshgrid(torch.arange(h, dtype=like.dtype, device=like.device),
                            torch.arange(w, dtype=like.dtype, device=like.device), indexing="ij")
    return xs, ys


def _sample_at(x: torch.Tensor, sx: torch.Tensor, sy: torch.Tensor) -> torch.Tensor:
    """Sample ``x`` bilinearly at pixel coordinates ``sx, sy`` ``(B, H, W)``; black outside the image."""
    h, w = x.shape[-2:]
    grid = torch.stack([(2 * sx + 1) / w - 1, (2 * sy + 1) / h - 1], -1)
    return torch.nn.functional.grid_sample(x, grid, "bilinear", padding_mode="zeros", align_corners=False)


@register("elastic", "geometric", 0, 64, 0, "alpha (pixels)")
def elastic(x, m, generator=None, sigma: float = 3.0, shared: bool = False):
    """Elastic deformation (Simard et al. 2003): a U(-1, 1) displacement field per pixel, smoothed by a
    Gaussian of ``sigma`` pixels, times ``m``; each output pixel samples the input that far away.

    ``shared=True`` draws one field for the whole batch (the paper's fixed measurement transform). Through
    kornia's ``elastic_transform2d`` (faster than a hand-written field: ``benchmarks/bench_equivariance.py``,
    ``benchmarks/measurements/foundation.md``), with the per-image ``m`` folded into the field before smoothing (a
    linear filter) and pixels converted to its [-1, 1] grid units.
    """
    b, _, h, w = x.shape
    noise = draw_like(torch.rand, (1 if shared else b, 2, h, w), generator, x) * 2 - 1
    to_grid = x.new_tensor([2 / w, 2 / h]).view(1, 2, 1, 1)  # one pixel in grid_sample's units, per axis
    r = min(math.ceil(3 * sigma), h - 1, w - 1)
    out = kornia.geometry.transform.elastic_transform2d(
        x, noise.expand(b, -1, -1, -1) * _bc(m) * to_grid, (2 * r + 1, 2 * r + 1), (float(sigma), float(sigma)),
        (1.0, 1.0), align_corners=False)
    return _unchanged_at_zero(x, out, m)


@register("perspective", "geometric", 0, 0.5, 0, "corner std (fraction of the side)")
def perspective(x, m, generator=None, shared: bool = False):
    """Warp the image square to a quadrilateral whose corners move by ``N(0, m)`` (fractions of the side) in
    x and y (the paper's App. A.7). ``shared=True`` draws one set of corner moves for the whole batch."""
    b, _, h, w = x.shape
    size = x.new_tensor([w, h])
    corners = x.new_tensor([[0, 0], [1, 0], [1, 1], [0, 1]]) * size - 0.5  # pixel-edge corners
    z = draw_like(torch.randn, (1 if shared else b, 4, 2), generator, x)
    moved = corners + z.expand(b, -1, -1) * m.view(-1, 1, 1) * size
    back = kornia.geometry.transform.get_perspective_transform(moved, corners.expand(b, -1, -1))  # dst -> src
    xs, ys = _pixel_grid(h, w, x)
    pts = torch.stack([xs, ys, torch.ones_like(xs)], -1).view(1, -1, 3) @ back.transpose(1, 2)  # (B, HW, 3)
    src = (pts[..., :2] / pts[..., 2:]).view(b, h, w, 2)
    return _unchanged_at_zero(x, _sample_at(x, src[..., 0], src[..., 1]), m)


# ---------------------------------------------------------------------------------------------- appearance


@register("brightness", "appearance", 0, 2, 1, "factor")
def brightness(x, m):
    """Multiply by ``m`` (0 gives black)."""
    return x * _bc(m)


@register("contrast", "appearance", 0, 2, 1, "factor")
def contrast(x, m):
    """Blend with the image's mean gray level: ``m x + (1 - m) mean`` (0 gives flat gray)."""
    mean = _gray(x).mean(dim=(1, 2, 3), keepdim=True)
    return _bc(m) * x + (1 - _bc(m)) * mean


@register("saturation", "appearance", 0, 2, 1, "factor")
def saturation(x, m):
    """Blend with the grayscale image: ``m x + (1 - m) gray`` (0 gives gray). Identity on 1 channel."""
    if x.shape[1] == 1:
        return x
    return _bc(m) * x + (1 - _bc(m)) * _gray(x)


@register("hue", "appearance", -0.5, 0.5, 0, "turns")
def hue(x, m):
    """Rotate the HSV hue by ``m`` turns (0.5 gives complementary colours). Identity on 1 channel."""
    if x.shape[1] == 1:
        return x
    # RGB -> (hue, chroma, value) as torchvision, then back with the closed-form HSV -> RGB
    # f(n) = v - c clamp(min(k, 4 - k), 0, 1), k = (n + 6 hue) mod 6 for n = 5, 3, 1 (R, G, B).
    r, g, b = x.unbind(1)
    v, lo = x.amax(1), x.amin(1)
    c = v - lo
    cs = torch.where(c > 0, c, torch.ones_like(c))
    h = torch.where(v == r, (g - b) / cs, torch.where(v == g, (b - r) / cs + 2, (r - g) / cs + 4))
    h = torch.remainder(h + 6 * m.view(-1, 1, 1), 6)
    n = torch.tensor([5.0, 3.0, 1.0], dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    k = torch.remainder(n + h.unsqueeze(1), 6)
    return v.unsqueeze(1) - c.unsqueeze(1) * torch.minimum(k, 4 - k).clamp(0, 1)


@register("posterize", "appearance", 0, 8, 8, "bits")
def posterize(x, m):
    """Keep ``round(m)`` bits per channel: ``floor(x 2^b) / 2^b``; 8 bits is the identity, 0 bits black."""
    bits = _bc(m).round()
    n = torch.exp2(bits)
    out = torch.minimum(torch.floor(x * n), n - 1) / n
    return torch.where(bits >= 8, x, out)


@register("solarize", "appearance", 0, 1, 1, "threshold")
def solarize(x, m):
    """Invert pixels ``>= m``; ``m = 0`` inverts everything, ``m = 1`` nothing (like PIL's 256)."""
    t = _bc(m)
    return torch.where((x >= t) & (t < 1), 1 - x, x)


@register("equalize", "appearance", 0, 1, 0, "blend weight")
def equalize(x, m):
    """Blend towards per-channel histogram equalisation (PIL's 256-bin scheme) with weight ``m``.

    As in PIL, a channel is left unchanged when its step ``(pixels - count of its top level) // 255`` is 0,
    e.g. every channel of an image with at most 256 pixels.
    """
    return _mix(x, kornia.enhance.equalize(x), m)


@register("autocontrast", "appearance", 0, 1, 0, "blend weight")
def autocontrast(x, m):
    """Blend towards the per-channel min-max stretch to ``[0, 1]`` with weight ``m`` (flat channels kept)."""
    lo = x.amin(dim=(-2, -1), keepdim=True)
    hi = x.amax(dim=(-2, -1), keepdim=True)
    flat = hi <= lo
    lo = torch.where(flat, torch.zeros_like(lo), lo)
    span = torch.where(flat, torch.ones_like(hi), hi - lo)
    return _mix(x, ((x - lo) / span).clamp(0, 1), m)


@register("invert", "appearance", 0, 1, 0, "blend weight")
def invert(x, m):
    """Blend towards the negative ``1 - x`` with weight ``m``."""
    return _mix(x, 1 - x, m)


@register("sharpness", "appearance", 0, 2, 1, "factor")
def sharpness(x, m):
    """PIL/torchvision sharpness: blend with a 3x3 smoothed copy (0 smooths, 1 keeps, 2 sharpens).

    The smoothing kernel is ``[[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13`` on interior pixels; border pixels
    keep their value. Written with shifted sums: faster on CPU than a depthwise convolution.
    """
    if x.shape[-1] < 3 or x.shape[-2] < 3:
        return x
    rows = x[..., :, :-2] + x[..., :, 1:-1] + x[..., :, 2:]
    box = rows[..., :-2, :] + rows[..., 1:-1, :] + rows[..., 2:, :]
    smooth = x.clone()
    smooth[..., 1:-1, 1:-1] = ((box + 4 * x[..., 1:-1, 1:-1]) / 13).clamp(0, 1)
    return _mix(x, smooth, 1 - m)  # exact at m = 1


_MAX_SIGMA = 5.0


@register("gaussian_blur", "appearance", 0, _MAX_SIGMA, 0, "sigma in pixels")
def gaussian_blur(x, m):
    """Gaussian blur with per-sample sigma ``m`` and reflected borders.

    One kernel size for the whole batch (no host sync): radius ``3 * 5 = 15`` pixels, capped by the image size.
    """
    h, w = x.shape[-2:]
    r = min(math.ceil(3 * _MAX_SIGMA), h - 1, w - 1)
    sigma = m.clamp_min(1e-3).unsqueeze(-1).expand(-1, 2)  # sigma -> 0 gives a delta kernel (identity)
    return kornia.filters.gaussian_blur2d(x, (2 * r + 1, 2 * r + 1), sigma, border_type="reflect")


@register("brightness_shift", "appearance", -1, 1, 0, "fraction of the intensity range")
def brightness_shift(x, m):
    """Add ``m`` to every channel of every pixel (the paper C colour-jitter measurement: 10/255 for +10 grey
    levels); the final clamp truncates to ``[0, 1]``."""
    return x + _bc(m)


@register("color_cast", "appearance", 0, 1, 0, "std (fraction of the intensity range)")
def color_cast(x, m, generator=None, shared: bool = False):
    """Add one ``N(0, m)`` value per channel to the whole image (paper C's colour jitter: a random colour
    cast, the same at every pixel)."""
    b, c = x.shape[:2]
    offset = draw_like(torch.randn, (1 if shared else b, c, 1, 1), generator, x)
    return x + offset * _bc(m)


@register("gaussian_noise", "appearance", 0, 1, 0, "std")
def gaussian_noise(x, m, generator=None):
    """Add i.i.d. Gaussian noise of standard deviation ``m`` (before the final clamp to ``[0, 1]``)."""
    noise = draw_like(torch.randn, x.shape, generator, x)
    return x + _bc(m) * noise


# ---------------------------------------------------------------------------------------------- 1-D signals
# Signals are ``(B, C, T)`` float tensors sampled at ``fs`` Hz; values per sample are ``(B,)``. These three
# are the EEG augmentations AugNet's section 4.2 uses; each is differentiable with respect to its value.


def _check_signals(x: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim != 3 or not x.is_floating_point():
        raise ValueError(f"signals must be a float tensor of shape (B, C, T), got {getattr(x, 'shape', type(x))}.")
    v = torch.as_tensor(values, dtype=x.dtype, device=x.device)
    if v.ndim > 1 or (v.ndim == 1 and len(v) != len(x)):
        raise ValueError(f"values must be a scalar or have shape ({len(x)},), got shape {tuple(v.shape)}.")
    return v.expand(len(x)).view(-1, 1, 1)


def frequency_shift(x: torch.Tensor, hz, fs: float) -> torch.Tensor:
    """Shift every frequency of ``x`` ``(B, C, T)`` by ``hz`` (scalar or ``(B,)``, may be negative).

    The analytic signal (FFT, negative frequencies dropped) is multiplied by ``exp(2 pi i hz t)`` and its
    real part kept. Periodic over the window, like the FFT it uses.

    Example
    -------
    >>> t = torch.arange(1000) / 100
    >>> x = torch.sin(2 * math.pi * 3 * t).view(1, 1, -1)
    >>> y = frequency_shift(x, 0.5, fs=100)
    >>> int(torch.fft.rfft(y[0, 0]).abs().argmax()) / 10  # peak bin / window length in s
    3.5
    """
    v = _check_signals(x, hz)
    n = x.shape[-1]
    spec = torch.fft.fft(x, dim=-1)
    h = torch.zeros(n, dtype=x.dtype, device=x.device)
    h[0] = 1
    h[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        h[n // 2] = 1
    analytic = torch.fft.ifft(spec * h, dim=-1)
    t = torch.arange(n, dtype=x.dtype, device=x.device) / fs
    return (analytic * torch.polar(torch.ones_like(t * v), 2 * math.pi * v * t)).real


def ft_surrogate(x: torch.Tensor, m, generator: torch.Generator | None = None) -> torch.Tensor:
    """Fourier-transform surrogate: add a random phase ``m * U(0, 2 pi)`` to every frequency of ``x``.

    ``x``: ``(B, C, T)``; ``m``: scalar or ``(B,)`` in [0, 1] (0 = identity, 1 = fully random phases). The
    amplitude spectrum is kept, so the power at each frequency is unchanged. The same phases for every
    channel of a sample.

    Example
    -------
    >>> x = torch.randn(2, 1, 100)
    >>> torch.allclose(ft_surrogate(x, 0.0), x, atol=1e-5)
    True
    """
    v = _check_signals(x, m)
    n = x.shape[-1]
    spec = torch.fft.rfft(x, dim=-1)
    u = draw_like(torch.rand, (len(x), 1, spec.shape[-1]), generator, x)
    u[..., 0] = 0  # the mean stays real
    if n % 2 == 0:
        u[..., -1] = 0  # and so does the Nyquist bin
    phase = 2 * math.pi * v * u
    return torch.fft.irfft(spec * torch.polar(torch.ones_like(phase), phase), n=n, dim=-1)


def signal_noise(x: torch.Tensor, std, generator: torch.Generator | None = None) -> torch.Tensor:
    """Add i.i.d. Gaussian noise of standard deviation ``std`` (scalar or ``(B,)``) to ``x`` ``(B, C, T)``.

    Example
    -------
    >>> signal_noise(torch.zeros(3, 1, 10000), torch.tensor([0.0, 1.0, 2.0])).std(-1).squeeze().round()
    tensor([0., 1., 2.])
    """
    v = _check_signals(x, std)
    return x + v * draw_like(torch.randn, x.shape, generator, x)

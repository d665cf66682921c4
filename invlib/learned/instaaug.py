"""InstaAug (Miao et al., 2023): an invariance module ``phi`` that reads each input and outputs the parameters of
that input's own transformation distribution ``p(tau; phi(x))``.

Two parameterisations, as the paper's section 3.3:

- :class:`LRPCrops`, the **location-related parameterisation** of crops: a small pre-activation CNN whose cells of
  selected layers each stand for the crop covered by their receptive field (deeper layers: larger crops), plus
  one global crop; a 1x1 head per layer with a per-position bias turns a cell's features into the logit of its
  crop. The distribution is an exact categorical over the candidate crops: sampled exactly
  (:func:`sample_categorical`, Gumbel-max or ``torch.multinomial``), its entropy in closed form, its gradient by
  REINFORCE (score function). ``input_free=True`` reads ``0 * x`` (the paper's "without input" ablation).
- :class:`UniformRanges`, the **uniform parameterisation**: per input and per operation a range ``[-b, a]``
  with ``a, b = sigmoid(p - 2) * max`` (the authors' code's bound), ``theta ~ U[-b, a]`` reparameterised, entropy
  ``sum log(a + b)``. Operations: ``rotate`` (radians), ``hue`` (turns), ``saturation`` and ``value``
  (log-factors), and the crop's ``side``, ``x`` and ``y`` (the "without LRP" ablation). ``input_free=True``
  gives one range for all inputs.
- :class:`ClassCrops`: a (classes x crops) logit table, the "class-specific" ablation (random crops at test
  time, as the paper).

:class:`InstaAug` puts one of them in front of a classifier (an :class:`invlib.learned.Invariant`; in
evaluation it averages the **logits** of ``n`` transformations sampled from ``p(tau; phi(x))``, the paper's
test-time augmentation, or of the ``n`` most likely crops, the authors' code's, ``select="top"``).
:func:`objective` is the loss hook of :func:`invlib.train.fit` for ``E[L(f(tau(x)), y) - lambda H[p(tau; phi(x))]]``,
with ``lambda`` steered into the entropy band ``[H_min, H_max]`` by :class:`EntropyBand` (the authors' rule,
checked every ``k`` steps). :class:`Recipe` is the one way every chapter trains a module: band, starting weight,
checks, the module's learning rate and its linear warm-up (of the learning rate itself, so it acts under Adam too),
and the module's seeding.

Differences from the authors' code (github.com/NingMiao/InstaAug @adee496), all deliberate:

- One joint step per batch on one sampled transformation (the paper's objective); their code alternates a
  classifier step and a module step on a fresh sample with the classifier in eval mode.
- Gumbel-max sampling (exact); theirs is ``argmax(log p + Exp(1))``, which over-samples the most likely crop
  (``method="exponential"`` reproduces it, for the comparison).
- The cell at row ``r``, column ``c`` stands for the crop centred on that cell; theirs selects the crop at the
  anti-diagonal mirror ``(-c, -r)``.
- A batch-mean baseline for REINFORCE by default (``baseline="none"``: theirs); :func:`gradient_variance`
  measures what it changes.

Example
-------
>>> from invlib import models
>>> net = instaaug(models.create("conv4", num_classes=4, in_chans=3, widths=(8, 8, 8, 8)), LRPCrops(32))
>>> net.augment.params.num_crops, net.eval()(torch.rand(2, 3, 32, 32)).shape
(81, torch.Size([2, 4]))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch
import torch.nn.functional as F
from torch import nn

from .. import transforms as T
from ..crops import box_crop
from ..utils import check_choice, seeded
from . import Invariant, in_float32

SAMPLERS = ("gumbel", "multinomial", "exponential")  # exponential: the authors' code (biased)
SELECTS = ("sample", "top")
BASELINES = ("mean", "none")
# the papers initialise an invariance module from MODULE_SEED + the seed (its classifier from the seed itself), so
# the module's start depends on the seed alone and differs from the classifier's
MODULE_SEED = 10_000
UNIFORM_OPS = {  # op -> (largest bound per side, unit)
    "rotate": (math.pi, "radians"),
    "hue": (0.5, "turns"),
    # saturation and value: the factor exp(theta) is clamped to [0, 2] when applied, so a bound past ln 2 would add
    # entropy that changes no image and gets no gradient from the loss
    "saturation": (math.log(2), "log of the saturation factor"),
    "value": (math.log(2), "log of the brightness factor"),
    "side": (0.9, "crop side below 1, a fraction of the image (negative: zoom out, unless zoom_in_only)"),
    "x": (0.5, "crop centre offset, a fraction of the width"),
    "y": (0.5, "crop centre offset, a fraction of the height"),
}
CROP_OPS = ("side", "x", "y")


# ----------------------------------------------------------------------------- the module's network
class _PreActBlock(nn.Module):
    """BN-ReLU-conv3x3-BN-ReLU-conv3x3 with a 1x1 projection when the shape changes (He et al., 2016b)."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.bn1, self.bn2 = nn.BatchNorm2d(cin), nn.BatchNorm2d(cout)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.proj = nn.Conv2d(cin, cout, 1, stride, bias=False) if stride != 1 or cin != cout else None

    def forward(self, x):
        out = F.relu(self.bn1(x))
        skip = self.proj(out) if self.proj is not None else x
        out = self.conv2(F.relu(self.bn2(self.conv1(out))))
        return out + skip


class ModuleNet(nn.Module):
    """The invariance module's CNN (the authors' code: conv 3x3 stride 2 to 8 channels, then pre-activation
    blocks of 8, 16 (stride 2) and 32 (stride 2) channels). ``forward(x)`` ``(B, C, H, W)`` returns the feature
    map of every block, ``[(B, c_i, H_i, W_i)]``; ``input_free`` multiplies the input by 0 first.

    Example
    -------
    >>> [f.shape[-1] for f in ModuleNet()(torch.rand(2, 3, 64, 64))]
    [32, 16, 8]
    """

    def __init__(self, in_chans: int = 3, channels: tuple[int, ...] = (8, 8, 16, 32), input_free: bool = False):
        super().__init__()
        self.stem = nn.Conv2d(in_chans, channels[0], 3, 2, 1, bias=False)
        self.blocks = nn.ModuleList(_PreActBlock(channels[i], channels[i + 1], 1 if i == 0 else 2)
                                    for i in range(len(channels) - 1))
        self.channels, self.input_free = tuple(channels), bool(input_free)

    def forward(self, x):
        return self._input_free(x) if self.input_free else self._maps(x)

    def _maps(self, x):
        out, maps = self.stem(x), []
        for block in self.blocks:
            out = block(out)
            maps.append(out)
        return maps

    def _input_free(self, x):
        """The maps of ``0 * x``: every input reads the same zeros, so one zero image is passed and its maps are
        expanded to the batch (their gradients sum over it, as the batch's would). In training, BatchNorm's batch
        statistics of one image equal those of the batch; only the running variance's Bessel correction counts the
        values (``n / (n - 1)``), so each layer's update is rescaled to the batch's ``n``: the module trains and
        evaluates as on the whole batch of zeros, about half of a no-input model's training step saved (D2, D4, D5).
        """
        b, one = len(x), torch.zeros_like(x[:1])
        norms = [m for m in self.modules() if isinstance(m, nn.BatchNorm2d)]
        exact = self.training and b > 1 and all(m.track_running_stats and m.momentum is not None for m in norms)
        sizes, old = {}, {}
        if exact:
            old = {m: m.running_var.clone() for m in norms}
            hooks = [m.register_forward_pre_hook(lambda m, a: sizes.__setitem__(m, a[0][0, 0].numel()))
                     for m in norms]
        try:
            maps = self._maps(one)
        finally:
            if exact:
                for h in hooks:
                    h.remove()
        if exact:
            with torch.no_grad():
                for m in norms:
                    n1, nb = sizes[m], sizes[m] * b
                    if n1 > 1:  # the new estimate's share, from one image's count to the batch's
                        kept = (1 - m.momentum) * old[m]
                        # .data: the saved-for-backward version stays (backward reads no running statistic)
                        m.running_var.data.copy_(kept + (m.running_var - kept) * ((n1 - 1) / n1 * nb / (nb - 1)))
        return [f.expand(b, *f.shape[1:]) for f in maps]


# ----------------------------------------------------------------------------- crops
def crop(x: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    """Crop ``x`` ``(B, C, H, W)`` to ``boxes`` ``(B, 3)`` = (centre x, centre y, side) in fractions of the image
    and resample to ``H x W`` (bilinear; outside the image is 0: crops may cross the border):
    :func:`invlib.crops.box_crop` in InstaAug's coordinates (a gradient through ``boxes`` reaches them).

    Example
    -------
    >>> x = torch.rand(2, 3, 8, 8)
    >>> torch.allclose(crop(x, torch.tensor([[0.5, 0.5, 1.0]] * 2)), x, atol=1e-6)  # the whole image
    True
    """
    b = x.shape[0]
    if boxes.shape != (b, 3):
        raise ValueError(f"boxes must be (B, 3) = (centre x, centre y, side), one per image; got {tuple(boxes.shape)} "
                         f"for {b} images.")
    side = boxes[:, 2].to(x.dtype)
    return box_crop(x, torch.stack([side, side], 1), 2 * boxes[:, :2].to(x.dtype) - 1)


def crop_grid(cells: int, side: float) -> torch.Tensor:
    """``(cells * cells, 3)`` crops of side ``side`` centred on the cells of a ``cells x cells`` grid, row-major
    (row ``r``, column ``c`` -> centre ``((c + 0.5) / cells, (r + 0.5) / cells)``).

    Example
    -------
    >>> crop_grid(2, 0.5).tolist()
    [[0.25, 0.25, 0.5], [0.75, 0.25, 0.5], [0.25, 0.75, 0.5], [0.75, 0.75, 0.5]]
    """
    centres = (torch.arange(cells, dtype=torch.float32) + 0.5) / cells
    cy, cx = torch.meshgrid(centres, centres, indexing="ij")
    return torch.stack([cx.flatten(), cy.flatten(), torch.full((cells * cells,), float(side))], -1)


def random_boxes(n: int, scale: tuple[float, float] = (0.1, 1.0), generator: torch.Generator | None = None,
                 device=None) -> torch.Tensor:
    """``(n, 3)`` square random crops (centre x, centre y, side), the paper's random-crop baseline: the crop's
    *area* uniform in ``scale`` (fractions of the image; the paper's tuned range is ``(0.1, 1)``), its position
    uniform with the crop inside the image.

    Example
    -------
    >>> b = random_boxes(1000, (0.25, 1.0), torch.Generator().manual_seed(0))
    >>> bool((b[:, 2] >= 0.5).all() and (b[:, :2] - b[:, 2:] / 2 >= 0).all())
    True
    """
    lo, hi = scale
    if not 0 < lo <= hi <= 1:
        raise ValueError(f"scale is a range of crop areas (fractions of the image), 0 < low <= high <= 1; "
                         f"got {scale}.")
    u = torch.rand(n, 3, generator=generator)
    side = (lo + u[:, 2] * (hi - lo)).sqrt()
    centre = side[:, None] / 2 + u[:, :2] * (1 - side[:, None])
    return torch.cat([centre, side[:, None]], 1).to(device)


class RandomCrop:
    """The random-crop augmentation of :func:`invlib.train.fit` (``augment(x, generator) -> x``): every image gets
    its own :func:`random_boxes` crop, resampled to the input size. ``repr`` names the range (so a cached fit is
    found again).

    Example
    -------
    >>> RandomCrop((0.1, 1.0))(torch.rand(4, 3, 16, 16), torch.Generator()).shape
    torch.Size([4, 3, 16, 16])
    """

    def __init__(self, scale: tuple[float, float] = (0.1, 1.0)):
        random_boxes(1, scale)  # checks the range
        self.scale = (float(scale[0]), float(scale[1]))

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        return crop(x, random_boxes(len(x), self.scale, generator, x.device))

    def __repr__(self) -> str:
        return f"RandomCrop(scale={self.scale})"


class LRPCrops(nn.Module):
    """Location-related parameterisation of crops: ``forward(x)`` ``(B, C, H, W)`` -> log-probabilities
    ``(B, M)`` over the :attr:`boxes` ``(M, 3)`` (centre x, centre y, side).

    Args:
        size: input side in pixels (the module's cells depend on it).
        in_chans: input channels.
        channels: the module CNN's widths (:class:`ModuleNet`).
        crop_layers: which blocks' cells are crops (0-based; the authors' Tiny-ImageNet config: the blocks of 16
            and 32 channels, ``(1, 2)``).
        sides: crop side per crop layer, a fraction of the image (theirs at 64 px: 0.375 and 0.75).
        layer_bias: a constant added to the logits of each crop layer and, last, of the global crop (theirs:
            ``(0, 1, 3)``); every layer's logits also get ``- log(#cells)``, so a layer's initial mass is
            ``exp(bias)`` up to normalisation.
        input_free: read ``0 * x`` (one distribution for all inputs: the paper's "without input").

    The head of each layer is a 1x1 convolution (its initial weights divided by 10, as the authors') plus a
    bias per position; the global crop's logit comes from the last block's pooled features.

    Example
    -------
    >>> lrp = LRPCrops(64)
    >>> lrp.num_crops, torch.allclose(lrp(torch.rand(2, 3, 64, 64)).exp().sum(1), torch.ones(2))
    (321, True)
    """

    def __init__(self, size: int, in_chans: int = 3, channels: tuple[int, ...] = (8, 8, 16, 32),
                 crop_layers: tuple[int, ...] = (1, 2), sides: tuple[float, ...] = (0.375, 0.75),
                 layer_bias: tuple[float, ...] = (0.0, 1.0, 3.0), input_free: bool = False):
        super().__init__()
        if len(sides) != len(crop_layers) or len(layer_bias) != len(crop_layers) + 1:
            raise ValueError(f"need one side per crop layer and one bias per crop layer plus the global crop; got "
                             f"crop_layers={crop_layers}, sides={sides}, layer_bias={layer_bias}.")
        if not all(0 <= i < len(channels) - 1 for i in crop_layers):
            raise ValueError(f"crop_layers index the {len(channels) - 1} blocks of channels={channels}; "
                             f"got {crop_layers}.")
        self.net = ModuleNet(in_chans, channels, input_free)
        with torch.no_grad():
            cells = [m.shape[-1] for m in self.net(torch.zeros(1, in_chans, size, size))]
        self.size, self.crop_layers, self.input_free = int(size), tuple(crop_layers), bool(input_free)
        self.cells = tuple(cells[i] for i in crop_layers)
        self.heads = nn.ModuleList(nn.Conv2d(channels[i + 1], 1, 1, bias=False) for i in crop_layers)
        self.position_bias = nn.ParameterList(nn.Parameter(torch.zeros(n, n)) for n in self.cells)
        self.global_head = nn.Linear(channels[-1], 1)
        with torch.no_grad():
            for h in [*self.heads, self.global_head]:
                h.weight.div_(10)
            self.global_head.bias.zero_()
        boxes = [crop_grid(n, s) for n, s in zip(self.cells, sides)] + [torch.tensor([[0.5, 0.5, 1.0]])]
        self.register_buffer("boxes", torch.cat(boxes))
        self.register_buffer("layer", torch.cat([torch.full((len(b),), i) for i, b in enumerate(boxes)]))
        offsets = [bias - math.log(len(b)) for bias, b in zip(layer_bias, boxes)]
        self.register_buffer("offset", torch.tensor(offsets)[self.layer])
        self.layer_names = tuple(f"{n}x{n}, side {s:g}" for n, s in zip(self.cells, sides)) + ("global",)

    @property
    def num_crops(self) -> int:
        return len(self.boxes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        maps = self.net(x)
        logits = [(head(F.relu(maps[i])).squeeze(1) + bias).flatten(1)
                  for i, head, bias in zip(self.crop_layers, self.heads, self.position_bias)]
        logits.append(self.global_head(F.relu(maps[-1]).mean((2, 3))))
        return torch.log_softmax(torch.cat(logits, 1) + self.offset, 1)


class ClassCrops(nn.Module):
    """The "class-specific" ablation: a ``(classes, M)`` table of crop logits over ``like``'s boxes, read by
    label. ``forward(y)`` ``(B,)`` -> log-probabilities ``(B, M)``; it starts at ``like``'s initial layer masses.

    Example
    -------
    >>> cc = ClassCrops(10, LRPCrops(32))
    >>> cc(torch.tensor([0, 3])).shape
    torch.Size([2, 81])
    """

    def __init__(self, num_classes: int, like: LRPCrops):
        super().__init__()
        self.register_buffer("boxes", like.boxes.clone())
        self.register_buffer("layer", like.layer.clone())
        self.table = nn.Parameter(like.offset.clone().expand(num_classes, -1).clone())
        self.layer_names = like.layer_names

    @property
    def num_crops(self) -> int:
        return len(self.boxes)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.table[y], 1)


# ----------------------------------------------------------------------------- categorical tools
def sample_categorical(logp: torch.Tensor, n: int = 1, generator: torch.Generator | None = None,
                       method: str = "gumbel") -> torch.Tensor:
    """``n`` draws per row of log-probabilities ``logp`` ``(B, M)`` -> indices ``(n, B)``.

    ``"gumbel"``: ``argmax(logp + Gumbel noise)`` (exact); ``"multinomial"``: ``torch.multinomial``;
    ``"exponential"``: ``argmax(logp + Exp(1) noise)``, the authors' code, which is *not* a sample of ``p``
    (it over-samples the most likely item); kept to measure that.

    Example
    -------
    >>> g = torch.Generator().manual_seed(0)
    >>> idx = sample_categorical(torch.tensor([[0.5, 0.3, 0.2]]).log(), 20000, g)
    >>> torch.bincount(idx.flatten(), minlength=3) / 20000  # doctest: +SKIP
    tensor([0.4993, 0.3003, 0.2005])
    """
    check_choice(method, SAMPLERS, "sampler")
    logp = logp.detach()
    if method == "multinomial":
        return torch.multinomial(logp.exp().float(), n, replacement=True, generator=generator).T
    u = torch.rand((n, *logp.shape), generator=generator, dtype=logp.dtype).to(logp.device)
    noise = -torch.log(-torch.log(u.clamp_min(1e-20))) if method == "gumbel" else -torch.log(u.clamp_min(1e-20))
    return (logp + noise).argmax(-1)


def entropy(logp: torch.Tensor) -> torch.Tensor:
    """Exact entropy ``(B,)`` of categoricals given by log-probabilities ``(B, M)`` (0 log 0 = 0).

    Example
    -------
    >>> entropy(torch.full((1, 4), 0.25).log())
    tensor([1.3863])
    """
    return -(logp.exp() * torch.where(torch.isfinite(logp), logp, torch.zeros_like(logp))).sum(-1)


# ----------------------------------------------------------------------------- uniform parameterisation
class UniformRanges(nn.Module):
    """Per-input uniform ranges: ``forward(x)`` ``(B, C, H, W)`` -> ``(low, high)``, each ``(B, K)``, one column
    per op of ``ops`` (see :data:`UNIFORM_OPS` for the units), ``low = -b``, ``high = a``,
    ``a, b = sigmoid(p - 2) * max`` (the authors' code; ``sigmoid(-2) max`` = 0.37 rad for rotations at the start).

    Args:
        ops: names of :data:`UNIFORM_OPS`.
        in_chans, channels: the module's CNN (:class:`ModuleNet`), pooled, then a linear layer to ``2 K`` outputs.
        input_free: one range for all inputs (the linear layer's bias alone: an Augerino-like global range with
            the asymmetric bounds).
        maxima: override the largest bound per op.
        zoom_in_only: the crop's ``side`` range is ``[0, a]`` (crops of side ``1 - a`` to 1, never larger than the
            image: Augerino's scale, the paper's "without LRP" ablation); otherwise ``[-b, a]``.

    Example
    -------
    >>> low, high = UniformRanges(("rotate",))(torch.rand(2, 3, 32, 32))
    >>> (-low).round(decimals=2), high.round(decimals=2)  # doctest: +SKIP
    (tensor([[0.37], [0.37]]), tensor([[0.37], [0.37]]))
    """

    def __init__(self, ops: tuple[str, ...], in_chans: int = 3, channels: tuple[int, ...] = (8, 8, 16, 32),
                 input_free: bool = False, maxima: dict[str, float] | None = None, zoom_in_only: bool = False):
        super().__init__()
        for op in ops:
            check_choice(op, UNIFORM_OPS, "uniform op")
        self.ops, self.input_free = tuple(ops), bool(input_free)
        if zoom_in_only and "side" not in self.ops:
            raise ValueError(f"zoom_in_only needs the 'side' op; got ops {self.ops}.")
        self.register_buffer("one_sided", torch.tensor([zoom_in_only and op == "side" for op in self.ops]),
                             persistent=False)
        maxima = {op: UNIFORM_OPS[op][0] for op in ops} | dict(maxima or {})
        self.register_buffer("maxima", torch.tensor([maxima[op] for op in ops], dtype=torch.float32))
        self.net = None if input_free else ModuleNet(in_chans, channels)
        self.head = nn.Linear(channels[-1], 2 * len(ops))
        with torch.no_grad():
            self.head.weight.div_(10)
            self.head.bias.zero_()

    def forward(self, x: torch.Tensor):
        if self.net is None:
            p = self.head.bias.expand(len(x), -1)
        else:
            p = self.head(F.relu(self.net(x)[-1]).mean((2, 3)))
        bounds = torch.sigmoid(p - 2).view(len(x), 2, -1) * self.maxima
        return torch.where(self.one_sided, 0.0, -bounds[:, 1]), bounds[:, 0]


def uniform_entropy(low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """``(B,)`` differential entropy of independent uniforms on ``[low, high]`` ``(B, K)``: ``sum log(high - low)``.

    Example
    -------
    >>> uniform_entropy(torch.tensor([[-1.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([0.6931])
    """
    return torch.log((high - low).clamp_min(1e-12)).sum(-1)


def apply_uniform(x: torch.Tensor, ops: tuple[str, ...], theta: torch.Tensor) -> torch.Tensor:
    """Apply ``theta`` ``(B, K)`` (units of :data:`UNIFORM_OPS`) of ``ops`` to ``x`` ``(B, C, H, W)``, in order:
    the crop (``side``, ``x``, ``y``: side ``1 - side``, centre ``0.5 + x``), then ``rotate`` (the ``rotate``
    op of :mod:`invlib.transforms`, counter-clockwise for positive angles), then ``hue``, ``saturation`` and
    ``value`` (factors ``exp(theta)``). Differentiable in ``theta``; ``theta = 0`` is the identity.

    Example
    -------
    >>> x = torch.rand(2, 3, 8, 8)
    >>> torch.allclose(apply_uniform(x, ("rotate", "hue"), torch.zeros(2, 2)), x, atol=1e-5)
    True
    """
    col = {op: theta[:, i] for i, op in enumerate(ops)}
    if any(op in col for op in CROP_OPS):
        zero = torch.zeros(len(x), dtype=theta.dtype, device=theta.device)
        boxes = torch.stack([0.5 + col.get("x", zero), 0.5 + col.get("y", zero), 1 - col.get("side", zero)], -1)
        x = crop(x, boxes)
    if "rotate" in col:
        x = T.apply("rotate", x, torch.rad2deg(col["rotate"]).clamp(-180, 180))
    if "hue" in col:
        x = T.apply("hue", x, col["hue"].clamp(-0.5, 0.5))
    if "saturation" in col:
        x = T.apply("saturation", x, torch.exp(col["saturation"]).clamp(0, 2))
    if "value" in col:
        x = T.apply("brightness", x, torch.exp(col["value"]).clamp(0, 2))
    return x


# ----------------------------------------------------------------------------- the augmentation and the model
@dataclass
class Draw:
    """One sampled transformation per input: ``views`` ``(B, C, H, W)``; ``log_prob`` ``(B,)`` of the draw
    (categorical parameterisations, for REINFORCE; None for the reparameterised uniform ones); ``entropy`` ``(B,)``;
    ``index`` ``(B,)`` of the crop drawn (categorical) or ``theta`` ``(B, K)`` (uniform)."""

    views: torch.Tensor
    entropy: torch.Tensor
    log_prob: torch.Tensor | None = None
    index: torch.Tensor | None = None
    theta: torch.Tensor | None = None


class InstaAugment(nn.Module):
    """The augmentation of an :class:`InstaAug` model: a parameterisation (:class:`LRPCrops`, :class:`ClassCrops`
    or :class:`UniformRanges`) and the sampler. ``forward(x)`` returns one transformed view per input;
    :meth:`draw` also returns what the objective needs.

    ``sampler``: one of :data:`SAMPLERS`.
    """

    def __init__(self, params: nn.Module, sampler: str = "gumbel"):
        super().__init__()
        self.params, self.sampler = params, check_choice(sampler, SAMPLERS, "sampler")
        self.categorical = not isinstance(params, UniformRanges)
        self.lam, self.checks, self._h = None, [], [0.0, 0]

    def note(self, h: float, n: int) -> None:
        """Record a batch's mean entropy ``h`` over ``n`` inputs (the objective calls it), for :meth:`state`."""
        self._h = [self._h[0] + h * n, self._h[1] + n]

    @in_float32
    def distribution(self, x: torch.Tensor, y: torch.Tensor | None = None):
        """Log-probabilities ``(B, M)`` (categorical) or ``(low, high)`` ``(B, K)`` each (uniform). A
        :class:`ClassCrops` needs labels ``y``; without them (at test time) it is uniform over its crops."""
        if isinstance(self.params, ClassCrops):
            if y is None:
                return torch.full((len(x), self.params.num_crops), -math.log(self.params.num_crops),
                                  device=x.device)
            return self.params(y)
        return self.params(x)

    @in_float32
    def draw(self, x: torch.Tensor, y: torch.Tensor | None = None, generator: torch.Generator | None = None,
             dist=None) -> Draw:
        """One transformation per input, drawn from ``p(tau; phi(x))``; see :class:`Draw`. ``dist``: what
        :meth:`distribution` gave for ``x`` already (several draws from one evaluation of the module)."""
        dist = self.distribution(x, y) if dist is None else dist
        if self.categorical:
            idx = sample_categorical(dist, 1, generator, self.sampler)[0]
            views = crop(x, self.params.boxes[idx])
            return Draw(views, entropy(dist), dist.gather(1, idx[:, None]).squeeze(1), index=idx)
        low, high = dist
        u = torch.rand(low.shape, generator=generator, dtype=low.dtype).to(low.device)
        theta = low + u * (high - low)
        return Draw(apply_uniform(x, self.params.ops, theta), uniform_entropy(low, high), theta=theta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.draw(x).views

    def penalty(self) -> torch.Tensor:
        return torch.zeros(())

    def state(self) -> dict:
        """What the objective saw since the last call: ``{"lambda", "entropy" (mean per input), "checks" (the
        band's ``(step, entropy, lambda)`` checks)}``; :func:`invlib.train.fit` records it after every epoch."""
        out = dict(entropy=self._h[0] / self._h[1] if self._h[1] else float("nan"), checks=list(self.checks),
                   **{"lambda": self.lam})
        self._h, self.checks = [0.0, 0], []
        return out


class InstaAug(Invariant):
    """A classifier ``trunk`` behind an InstaAug module. Training: see :func:`objective`. Evaluation
    (``forward`` in eval mode): the mean of the trunk's **logits** over ``copies`` transformations of each input,
    sampled from ``p(tau; phi(x))`` (``select="sample"``, the paper) or the ``copies`` most likely crops
    (``select="top"``, the authors' code; categorical only). ``copies=1`` with ``select="top"`` is the
    single most likely crop.

    ``frozen=True`` keeps the trunk in eval mode with its parameters frozen (section 5.3: a fixed pre-trained
    classifier).

    Example
    -------
    >>> from invlib import models
    >>> net = InstaAug(InstaAugment(UniformRanges(("rotate",))), models.create("conv4", 4, 3, widths=(8,) * 4))
    >>> net.eval()(torch.rand(3, 3, 32, 32)).shape
    torch.Size([3, 4])
    """

    def __init__(self, augment: InstaAugment, trunk: nn.Module, copies: int = 4, select: str = "sample",
                 frozen: bool = False):
        super().__init__(augment, trunk, copies)
        self.select, self.frozen = check_choice(select, SELECTS, "select"), bool(frozen)
        if frozen:
            trunk.requires_grad_(False)

    def train(self, mode: bool = True):
        super().train(mode)
        if self.frozen:
            self.trunk.eval()
        return self

    def forward(self, x: torch.Tensor, copies: int | None = None, reduce: str = "logits") -> torch.Tensor:
        c = copies or (1 if self.training else self.copies)
        if self.training:
            return self.trunk(self.augment(x))
        return predict(self, x, c, self.select)

    def augmentation_parameters(self):
        return self.augment.params.parameters()


def predict(model: InstaAug, x: torch.Tensor, n: int, select: str = "sample",
            generator: torch.Generator | None = None) -> torch.Tensor:
    """Test-time augmentation: ``(B, K)`` mean logits of ``model.trunk`` over ``n`` transformations per input of
    ``x`` ``(B, C, H, W)`` (``select="sample"``: drawn from ``p(tau; phi(x))``; ``"top"``: the ``n`` most likely
    crops). ``phi(x)`` is computed once per input.

    Example
    -------
    >>> from invlib import models
    >>> net = instaaug(models.create("conv4", 4, 3, widths=(8,) * 4), UniformRanges(("rotate",))).eval()
    >>> with torch.no_grad():
    ...     _ = net.augment.params.head.bias.fill_(-1e4)  # zero-width ranges: the identity
    ...     torch.allclose(predict(net, x := torch.rand(2, 3, 32, 32), 5), net.trunk(x), atol=1e-5)
    True
    """
    check_choice(select, SELECTS, "select")
    aug, b = model.augment, len(x)
    dist = aug.distribution(x)
    if aug.categorical:
        if select == "top":
            if n > dist.shape[1]:
                raise ValueError(f"select='top' takes at most the {dist.shape[1]} crops there are; got n={n}.")
            idx = dist.topk(n, 1).indices.T
        else:
            idx = sample_categorical(dist, n, generator, aug.sampler)
        views = crop(x.repeat(n, 1, 1, 1), aug.params.boxes[idx.flatten()])
    else:
        if select == "top":
            raise ValueError("select='top' needs a categorical (crop) distribution; uniform ranges take 'sample'.")
        low, high = (t.repeat(n, 1) for t in dist)
        u = torch.rand(low.shape, generator=generator, dtype=low.dtype).to(low.device)
        views = apply_uniform(x.repeat(n, 1, 1, 1), aug.params.ops, low + u * (high - low))
    return model.trunk(views).float().view(n, b, -1).mean(0)


def instaaug(trunk: nn.Module, params: nn.Module, copies: int = 4, select: str = "sample", sampler: str = "gumbel",
             frozen: bool = False) -> InstaAug:
    """``trunk`` behind an InstaAug module with parameterisation ``params`` (:class:`LRPCrops`,
    :class:`ClassCrops` or :class:`UniformRanges`); see :class:`InstaAug`.

    Example
    -------
    >>> from invlib import models
    >>> net = instaaug(models.create("conv4", 4, 3, widths=(8,) * 4), LRPCrops(32, input_free=True))
    >>> net.train()(torch.rand(2, 3, 32, 32)).shape
    torch.Size([2, 4])
    """
    return InstaAug(InstaAugment(params, sampler), trunk, copies, select, frozen)


# ----------------------------------------------------------------------------- the entropy band
@dataclass
class EntropyBand:
    """The dynamic entropy weight ``lambda``: raised when the mean entropy stays below ``h_min``, lowered when it
    stays above ``h_max`` (the paper, section 3.2). The exact rule is the authors' code's
    (``InstaAug_module/scheduler.py``), applied at every :meth:`step` to the mean entropy observed since the
    last one:

    - below ``h_min``: the first check below only notes it; at each further check below, ``lambda *= factor``
      unless the entropy rose by more than ``tol`` since the previous check;
    - above ``h_max``: the mirror (``lambda /= factor`` unless it fell by more than ``tol``);
    - inside the band: nothing, and the next check outside counts as a first one;
    - at most ``max_steps`` net steps up (or down) from ``lam0``.

    ``h_min = -inf`` and ``h_max = inf`` give a fixed ``lambda``. :attr:`history` holds ``(step, entropy,
    lambda)`` after every check.

    Example
    -------
    >>> band = EntropyBand(3.0, 3.5, lam0=0.2)
    >>> [round(band.step(h), 3) for h in (2.0, 2.0, 2.001, 2.2, 3.2)]
    [0.2, 0.24, 0.288, 0.288, 0.288]
    """

    h_min: float = 3.0
    h_max: float = 3.5
    lam0: float = 0.2
    factor: float = 1.2
    tol: float = 0.005
    max_steps: int = 50
    lam: float = field(init=False)
    history: list = field(init=False, default_factory=list)

    def __post_init__(self):
        if not self.h_min <= self.h_max or self.lam0 < 0 or self.factor <= 1:
            raise ValueError(f"need h_min <= h_max, lam0 >= 0 and factor > 1; got {self.h_min}, {self.h_max}, "
                             f"{self.lam0}, {self.factor}.")
        self.lam, self.status, self.side, self.last = float(self.lam0), 0, 0, 0.0
        self._sum, self._count, self._steps = 0.0, 0, 0

    def observe(self, h: float, count: int = 1) -> None:
        """Add the mean entropy ``h`` of ``count`` inputs to the current check's average."""
        self._sum, self._count = self._sum + float(h) * count, self._count + count
        self._steps += 1

    def step(self, h: float | None = None) -> float:
        """One check, on ``h`` or on the mean observed since the last check; returns the new ``lambda``."""
        if h is None:
            if not self._count:
                return self.lam
            h = self._sum / self._count
        self._sum, self._count = 0.0, 0
        action = 0
        if h < self.h_min:
            action = 1 if self.side == -1 and not h > self.last + self.tol else 0
            self.side = -1
        elif h > self.h_max:
            action = -1 if self.side == 1 and not h < self.last - self.tol else 0
            self.side = 1
        else:
            self.side = 0
        self.last = h
        if action and abs(self.status + action) <= self.max_steps:
            self.status += action
            self.lam = self.lam * self.factor if action > 0 else self.lam / self.factor
        self.history.append((self._steps, float(h), self.lam))
        return self.lam


# ----------------------------------------------------------------------------- the objective
class Objective:
    """The loss hook of :func:`invlib.train.fit` for ``E[L(f(tau(x)), y) - lambda H[p(tau; phi(x))]]``; make it with
    :func:`objective` (supervised) or :func:`contrastive_objective` (SimCLR).

    Per batch, one transformation per input is drawn from ``p(tau; phi(x))`` (two for contrastive learning). The
    classifier's gradient is that of the loss on the views; the module's is the pathwise gradient (uniform ranges)
    or REINFORCE ``(L_i - b) grad log p(tau_i; phi(x_i))`` (crops), with ``b`` the batch's mean loss
    (``baseline="mean"``) or 0 (``"none"``, the authors' code), minus ``lambda`` times the exact entropy's
    gradient. ``lambda`` comes from ``band`` (None: the module does not learn), checked every ``check_every`` steps on
    the mean entropy since the last check (the authors: once per epoch). The module's learning-rate warm-up is the
    optimiser's (``TrainConfig.aug_warmup_epochs``; :meth:`Recipe.config`). With a frozen trunk only the module
    learns.

    Its ``repr`` holds every setting, so ``fit(..., cache=True)`` keys a run by them; what the band did is in
    the model's ``state()`` after every epoch (``"lambda"``, ``"entropy"``: the epoch's mean, ``"checks"``).
    ``log`` holds every step's mean task loss (cross-entropy, or NT-Xent), without the entropy and REINFORCE terms.
    """

    def __init__(self, band: EntropyBand | None, check_every: int = 50, baseline: str = "mean",
                 contrastive: bool = False, temperature: float = 0.5, extra=None):
        self.band, self.check_every = band, int(check_every)
        self.baseline, self.contrastive = check_choice(baseline, BASELINES, "baseline"), bool(contrastive)
        self.temperature, self.extra, self.steps, self.log = float(temperature), extra, 0, []

    def __repr__(self) -> str:
        b = self.band
        band = "None" if b is None else (f"EntropyBand({b.h_min}, {b.h_max}, lam0={b.lam0}, factor={b.factor}, "
                                         f"tol={b.tol}, max_steps={b.max_steps})")
        return (f"Objective(band={band}, check_every={self.check_every}, "
                f"baseline={self.baseline!r}, contrastive={self.contrastive}, temperature={self.temperature}, "
                f"extra={self.extra!r})")

    def _score(self, per: torch.Tensor, log_prob: torch.Tensor) -> torch.Tensor:
        advantage = per.detach() - (per.detach().mean() if self.baseline == "mean" else 0.0)
        return (advantage * log_prob).mean()

    def _band_step(self, aug: InstaAugment, h: torch.Tensor, n: int) -> None:
        self.steps += 1
        aug.note(float(h), n)
        if self.band is None:
            return
        self.band.observe(float(h), n)
        if self.check_every and self.steps % self.check_every == 0:
            self.band.step()
            aug.checks.append(self.band.history[-1])
        aug.lam = self.band.lam

    def __call__(self, model, x, y):
        inner = getattr(model, "module", model)
        aug = inner.augment
        lam = 0.0 if self.band is None else self.band.lam
        if self.contrastive:
            return self._contrastive(inner, aug, x, y, lam)
        d = aug.draw(x, y)
        logits = inner.trunk(d.views)
        per = F.cross_entropy(logits.float(), y, reduction="none")
        total = per.mean() - lam * d.entropy.mean()
        if d.log_prob is not None and self.band is not None:
            total = total + self._score(per, d.log_prob)
        self._band_step(aug, d.entropy.detach().mean(), len(x))
        self.log.append(float(per.detach().mean()))
        return total, logits

    def _contrastive(self, inner, aug, x, y, lam):
        dist = aug.distribution(x)  # phi(x) once: both views are drawn from it
        d1, d2 = aug.draw(x, dist=dist), aug.draw(x, dist=dist)
        v1, v2 = (d1.views, d2.views) if self.extra is None else (self.extra(d1.views), self.extra(d2.views))
        z1, z2 = inner.trunk(v1), inner.trunk(v2)
        per = nt_xent(z1, z2, self.temperature)
        total = per.mean()
        if self.band is not None:
            total = total - lam * d1.entropy.mean()
            if d1.log_prob is not None:
                total = total + self._score(per, d1.log_prob + d2.log_prob)
        self._band_step(aug, d1.entropy.detach().mean(), len(x))
        self.log.append(float(per.detach().mean()))
        return total, view_match_logits(z1, z2, y)


def objective(band: EntropyBand | None, check_every: int = 50, baseline: str = "mean") -> Objective:
    """The supervised :class:`Objective`: cross-entropy on one sampled view per input, REINFORCE (or the pathwise
    gradient) for the module, minus ``lambda`` times the entropy, ``lambda`` from ``band``.

    Example
    -------
    >>> from invlib import models, train
    >>> net = instaaug(models.create("conv4", 4, 3, widths=(8,) * 4), LRPCrops(32))
    >>> band = EntropyBand(1.0, 2.0)
    >>> x, y = torch.rand(64, 3, 32, 32), torch.randint(0, 4, (64,))
    >>> hist = train.fit(net, (x, y), train.TrainConfig(epochs=1, batch_size=32), progress=False,
    ...                  loss=objective(band, check_every=1))
    >>> len(band.history), sorted(hist[0]["state"])
    (2, ['checks', 'entropy', 'lambda'])
    """
    return Objective(band, check_every, baseline)


def gradient_variance(model: InstaAug, x: torch.Tensor, y: torch.Tensor, draws: int = 64,
                      baseline: str = "mean", generator: torch.Generator | None = None) -> dict:
    """The REINFORCE gradient of the module's parameters over ``draws`` independent draws on one batch: its mean
    squared norm of the deviation from the mean (the estimator's variance, summed over parameters) and the squared
    norm of the mean. Categorical parameterisations only; the trunk is not changed.

    Returns ``{"variance", "mean_sq_norm", "draws", "baseline"}``.

    Example
    -------
    >>> from invlib import models
    >>> net = instaaug(models.create("conv4", 4, 3, widths=(8,) * 4), LRPCrops(32)).eval()
    >>> v = gradient_variance(net, torch.rand(8, 3, 32, 32), torch.randint(0, 4, (8,)), draws=4)
    >>> v["variance"] >= 0
    True
    """
    check_choice(baseline, BASELINES, "baseline")
    aug = model.augment
    if not aug.categorical:
        raise ValueError("gradient_variance measures REINFORCE: it needs a categorical (crop) parameterisation.")
    params = [p for p in aug.params.parameters() if p.requires_grad]
    grads = []
    for _ in range(draws):
        logp = aug.distribution(x, y)
        idx = sample_categorical(logp, 1, generator, aug.sampler)[0]
        with torch.no_grad():
            per = F.cross_entropy(model.trunk(crop(x, aug.params.boxes[idx])).float(), y, reduction="none")
        adv = per - (per.mean() if baseline == "mean" else 0.0)
        g = torch.autograd.grad((adv * logp.gather(1, idx[:, None]).squeeze(1)).mean(), params, allow_unused=True)
        grads.append(torch.cat([(t if t is not None else torch.zeros_like(p)).flatten() for t, p in zip(g, params)]))
    g = torch.stack(grads)
    mean = g.mean(0)
    return dict(variance=float(((g - mean) ** 2).sum(1).mean()), mean_sq_norm=float((mean ** 2).sum()),
                draws=draws, baseline=baseline)


# ----------------------------------------------------------------------------- contrastive learning
def view_match_logits(z1: torch.Tensor, z2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """What :func:`invlib.train.fit` reads as logits in contrastive training, ``(B, max(y) + 2)``: one-hot at the
    label ``y_i`` where input ``i``'s nearest second view (cosine, ``z2`` among all) is its own, at ``y_i + 1``
    otherwise, so fit's ``train_acc`` is the share of inputs whose two views are nearest. No gradient.

    Example
    -------
    >>> z = torch.eye(3)
    >>> view_match_logits(z, z, torch.zeros(3, dtype=torch.long)).argmax(1).tolist()
    [0, 0, 0]
    >>> view_match_logits(z, z.roll(1, 0), torch.zeros(3, dtype=torch.long)).argmax(1).tolist()
    [1, 1, 1]
    """
    with torch.no_grad():
        sim = F.normalize(z1.float(), dim=1) @ F.normalize(z2.float(), dim=1).T
        match = sim.argmax(1) == torch.arange(len(y), device=y.device)
        logits = torch.zeros(len(y), int(y.max()) + 2, device=y.device)
        logits[torch.arange(len(y), device=y.device), torch.where(match, y, y + 1)] = 1
    return logits


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """SimCLR's NT-Xent loss per pair, ``(B,)``, for projections ``z1``, ``z2`` ``(B, D)`` of two views of each
    input: the mean over the pair's two directions of ``-log softmax`` of the positive among the ``2B - 1`` others.

    Example
    -------
    >>> z = torch.randn(4, 8)
    >>> bool(nt_xent(z, z).mean() < nt_xent(z, torch.randn(4, 8)).mean())
    True
    """
    b = len(z1)
    z = F.normalize(torch.cat([z1, z2]).float(), dim=1)
    sim = z @ z.T / temperature
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(b, 2 * b), torch.arange(b)]).to(z.device)
    per = F.cross_entropy(sim, target, reduction="none")
    return (per[:b] + per[b:]) / 2


def contrastive_objective(band: EntropyBand | None, temperature: float = 0.5, check_every: int = 50,
                          baseline: str = "mean", extra=None) -> Objective:
    """The contrastive :class:`Objective` (SimCLR with InstaAug crops, section 6): two views per input, each from
    its own draw of ``p(tau; phi(x))``, through ``model.trunk`` (an encoder with a projection head, e.g.
    ``models.create(..., num_classes=D)``), the NT-Xent loss (:func:`nt_xent`); REINFORCE for the module with the
    pair's loss, minus ``lambda`` times the entropy. ``band=None`` trains the encoder alone (the module's
    distribution stays as it is: a fixed crop family). ``extra(views) -> views``: more augmentation on the views
    after the crop (colour jitter, flips; SimCLR's), not learned; give it a ``repr`` that names its settings.

    The returned "logits" make :func:`invlib.train.fit`'s ``train_acc`` read as the share of inputs whose second
    view is the nearest to the first; labels are not used.

    Example
    -------
    >>> from invlib import models, train
    >>> net = instaaug(models.create("conv4", 16, 3, widths=(8,) * 4), LRPCrops(32))
    >>> x, y = torch.rand(32, 3, 32, 32), torch.arange(32)
    >>> h = train.fit(net, (x, y), train.TrainConfig(epochs=1, batch_size=16), progress=False,
    ...               loss=contrastive_objective(EntropyBand(1.0, 2.0)))
    >>> 0 <= h[0]["train_acc"] <= 1
    True
    """
    return Objective(band, check_every, baseline, contrastive=True, temperature=temperature, extra=extra)


# ----------------------------------------------------------------------------- the recipe
@dataclass(frozen=True)
class Recipe:
    """How an invariance module is trained: the one recipe of every chapter of paper D.

    - ``band`` ``(H_min, H_max)`` and ``lam0``: the :class:`EntropyBand` (``(-inf, inf)``: ``lambda`` fixed at
      ``lam0``); a fresh band for every model.
    - ``check_every``: optimiser steps between band checks (None: once per epoch, the authors' code).
    - ``module_lr``: the module's learning rate (its own parameter group, no weight decay), and
      ``warmup_epochs``: that rate rises linearly from ~0 over these epochs (``TrainConfig.aug_warmup_epochs``;
      the authors' code warms the module's rate up; a rate, unlike a gradient factor, also acts under Adam).
    - ``baseline``: REINFORCE's baseline (:data:`BASELINES`).
    - :meth:`module` builds a module from ``MODULE_SEED + seed``, so its start depends on the seed alone.

    Example
    -------
    >>> from invlib import train
    >>> r = Recipe(band=(1.0, 2.0), lam0=0.1, module_lr=0.01, warmup_epochs=1.0)
    >>> cfg = r.config(train.TrainConfig(optimizer="adam", lr=1e-3))
    >>> cfg.aug_lr, cfg.aug_warmup_epochs, r.objective(steps_per_epoch=15).check_every
    (0.01, 1.0, 15)
    """

    band: tuple[float, float] = (3.0, 3.5)
    lam0: float = 0.2
    module_lr: float = 0.05
    warmup_epochs: float = 0.0
    check_every: int | None = None
    baseline: str = "mean"

    def __post_init__(self):
        check_choice(self.baseline, BASELINES, "baseline")
        if self.module_lr <= 0 or self.warmup_epochs < 0 or (self.check_every is not None and self.check_every < 1):
            raise ValueError(f"need module_lr > 0, warmup_epochs >= 0 and check_every >= 1 (or None); got "
                             f"{self.module_lr}, {self.warmup_epochs}, {self.check_every}.")
        EntropyBand(*self.band, self.lam0)  # checks the band

    @classmethod
    def from_settings(cls, S, band: tuple[float, float] | None = None, lam0: float | None = None) -> Recipe:
        """The recipe in a chapter's settings ``S``, whose flat fields are named as the chapter's parameters: the
        band ``S.band`` or ``(S.h_min, S.h_max)``, ``S.lam0``, the module's rate ``S.module_lr`` (or ``S.aug_lr``),
        ``S.warmup_epochs``, ``S.check_every`` and ``S.baseline`` where ``S`` has one (else ``"mean"``); ``band``
        and ``lam0``, where given, replace ``S``'s. A band left None (to be chosen later) is an error.

        Example
        -------
        >>> from types import SimpleNamespace
        >>> S = SimpleNamespace(h_min=1.0, h_max=2.0, lam0=0.1, aug_lr=0.01, warmup_epochs=1.0, check_every=5)
        >>> Recipe.from_settings(S) == Recipe(band=(1.0, 2.0), lam0=0.1, module_lr=0.01, warmup_epochs=1.0,
        ...                                   check_every=5)
        True
        >>> Recipe.from_settings(S, band=(0.5, 1.5), lam0=0.2).band
        (0.5, 1.5)
        """
        if band is None:
            band = S.band if hasattr(S, "band") else (S.h_min, S.h_max)
        if band is None or None in tuple(band):
            raise ValueError(f"the recipe needs an entropy band (band, or h_min and h_max); got {band}: give one "
                             f"or choose it first (e.g. paper D1's with_band)")
        return cls(band=tuple(band), lam0=S.lam0 if lam0 is None else lam0,
                   module_lr=S.module_lr if hasattr(S, "module_lr") else S.aug_lr, warmup_epochs=S.warmup_epochs,
                   check_every=S.check_every, baseline=getattr(S, "baseline", "mean"))

    def objective(self, steps_per_epoch: int, contrastive: bool = False, temperature: float = 0.5,
                  extra=None) -> Objective:
        """A fresh :class:`Objective` with this recipe's band (``steps_per_epoch``: for a check once per epoch;
        :func:`invlib.train.steps_per_epoch` gives it)."""
        band = EntropyBand(self.band[0], self.band[1], self.lam0)
        return Objective(band, self.check_every or steps_per_epoch, self.baseline, contrastive, temperature, extra)

    def config(self, cfg):
        """``cfg`` (a :class:`invlib.train.TrainConfig`) with the module's learning rate and warm-up."""
        return replace(cfg, aug_lr=self.module_lr, aug_warmup_epochs=self.warmup_epochs, aug_weight_decay=0.0)

    @staticmethod
    def module(make, seed: int):
        """``make()`` (a parameterisation, e.g. ``lambda: LRPCrops(32)``) built from ``MODULE_SEED + seed``."""
        with seeded(MODULE_SEED + seed):
            return make()


# ----------------------------------------------------------------------------- what a module learned
def sample_boxes(augment: InstaAugment, x: torch.Tensor, n: int = 16, y: torch.Tensor | None = None,
                 generator: torch.Generator | None = None) -> torch.Tensor:
    """``(n, B, 3)`` crops (centre x, centre y, side) drawn from ``p(tau; phi(x))`` for ``x`` ``(B, C, H, W)``:
    the candidate boxes of a categorical parameterisation, or the boxes of :func:`apply_uniform` for uniform
    ranges over ``side``, ``x``, ``y`` (a missing op stays at the identity). No gradient.

    Example
    -------
    >>> aug = InstaAugment(UniformRanges(("side",)))
    >>> b = sample_boxes(aug, torch.rand(2, 3, 16, 16), 5)
    >>> b.shape, bool((b[..., :2] == 0.5).all())
    (torch.Size([5, 2, 3]), True)
    """
    with torch.no_grad():
        dist = augment.distribution(x, y)
        if augment.categorical:
            return augment.params.boxes[sample_categorical(dist, n, generator, augment.sampler)]
        low, high = dist
        u = torch.rand((n, *low.shape), generator=generator, dtype=low.dtype).to(low.device)
        col = {op: (low + u * (high - low))[..., i] for i, op in enumerate(augment.params.ops)}
        zero = torch.zeros((n, len(x)), dtype=low.dtype, device=low.device)
        return torch.stack([0.5 + col.get("x", zero), 0.5 + col.get("y", zero), 1 - col.get("side", zero)], -1)


def crop_measures(augment: InstaAugment, x: torch.Tensor, object_boxes: torch.Tensor, n: int = 64,
                  y: torch.Tensor | None = None, generator: torch.Generator | None = None) -> dict:
    """Per-image measures of a crop distribution on ``x`` ``(B, C, H, W)`` with the objects' boxes
    ``object_boxes`` ``(B, 4)`` (x0, y0, x1, y1 in pixels, as :class:`invlib.data.Dataset.boxes`):

    - ``"side"``: expected crop side (fraction of the image; 1 is the whole image);
    - ``"centre_in_box"``: probability that the crop's centre lies inside the object's box;
    - ``"covers_object"``: probability that the crop contains the object's centre;
    - ``"entropy"``: the distribution's entropy (categorical: exact; uniform: ``sum log(high - low)``);
    - ``"kl_to_mean"``: KL of ``p(tau | x)`` to the batch's average distribution (categorical only, else NaN):
      0 when the distribution does not depend on the input.

    Exact expectations for categorical parameterisations, ``n`` draws otherwise. Each value is a ``(B,)`` tensor.

    Example
    -------
    >>> aug = InstaAugment(LRPCrops(32))
    >>> m = crop_measures(aug, torch.rand(4, 3, 32, 32), torch.tensor([[8.0, 8.0, 24.0, 24.0]] * 4))
    >>> sorted(m), m["side"].shape
    (['centre_in_box', 'covers_object', 'entropy', 'kl_to_mean', 'side'], torch.Size([4]))
    """
    h, w = x.shape[-2:]
    ob = object_boxes.to(x.device).float() / torch.tensor([w, h, w, h], device=x.device)
    with torch.no_grad():
        dist = augment.distribution(x, y)
        if augment.categorical:
            p, boxes = dist.exp(), augment.params.boxes  # (B, M), (M, 3)
            ent = entropy(dist)
            mean = p.mean(0, keepdim=True)
            kl = torch.where(p > 0, p * (dist - mean.log()), torch.zeros_like(p)).sum(1)  # 0 log 0 = 0

            def expect(v):  # v: (B, M) per image and crop
                return (p * v).sum(1)

            bx, by, bs = boxes[:, 0][None], boxes[:, 1][None], boxes[:, 2][None]  # (1, M) against (B, 1)
            x0, y0, x1, y1 = ob.T[:, :, None]
        else:
            drawn = sample_boxes(augment, x, n, y, generator)  # (n, B, 3)
            ent, kl = uniform_entropy(*dist), torch.full((len(x),), float("nan"))

            def expect(v):  # v: (n, B)
                return v.float().mean(0)

            bx, by, bs = drawn.unbind(-1)  # (n, B) against (1, B)
            x0, y0, x1, y1 = ob.T[:, None, :]
        inside = (bx >= x0) & (bx <= x1) & (by >= y0) & (by <= y1)
        covers = (((x0 + x1) / 2 - bx).abs() <= bs / 2) & (((y0 + y1) / 2 - by).abs() <= bs / 2)
        return dict(side=expect(bs.expand_as(inside).float()), centre_in_box=expect(inside.float()),
                    covers_object=expect(covers.float()), entropy=ent, kl_to_mean=kl)

"""Paper B's measurements (Bouchacourt et al. 2021, sections 3-4, App. D-E), for any embedding function.

- **Invariance vs magnitude** (section 3, Fig. 2): :data:`GRIDS` holds the paper's magnitude grids (levels 0-9);
  :func:`sweep` applies each (transform, level) to the whole probe set in one batched pass per model and
  reports the distribution of the relative invariance (:func:`invlib.metrics.relative_invariance`) and the
  equivariance alignment (:func:`invlib.metrics.equivariance_alignment`) of every embedding.
- **Similarity search** (section 4): :data:`POOL` is the 63 (operation, level) entries of the AutoAugment
  ImageNet and SVHN policies plus ``rescale``; :data:`SUBPOLICIES` their two-operation sub-policies.
  :func:`search` pairs same-class images (image ``i`` with image ``i + 16`` of each batch of 32), transforms the
  second image only, and records the percent change of the pair's cosine similarity; :class:`Search` holds
  the per-pair changes and answers the paper's questions (per-class means, top transforms, weighted boost,
  appearance vs geometric).
- **WordNet** (section 4.5, App. E.3): :func:`wordnet_correlation` relates class-pair WordNet similarity to
  the rank correlation of the classes' transformation rankings (a Mantel test and a bootstrap over classes,
  :func:`class_bootstrap`: the pairs of a few classes are not independent).
- **Foreground statistics** (App. E.1): :func:`foreground_stats` of object boxes.

Transforms act on images in ``[0, 1]`` before any normalisation (models from :func:`invlib.models.create`
normalise inside), unlike the authors' code, which applied colour operations to normalised tensors.

Example
-------
>>> len(POOL), POOL[0], len(SUBPOLICIES)  # 50 sub-policies, 39 distinct once probabilities are dropped
(63, ('autocontrast', 1), 39)
>>> embed = lambda b: b.mean((2, 3))  # a toy embedding: the mean colour
>>> x, y = torch.rand(64, 3, 8, 8), torch.arange(64) % 2
>>> s = search(embed, x, y, ["rotate/3", "invert/3"], classes=["a", "b"])
>>> s.changes.shape, s.class_means().shape  # (entries, pairs), (classes, entries)
(torch.Size([2, 32]), (2, 2))
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ... import metrics, streaming
from ... import transforms as T
from ...utils import check_choice
from ...utils import progress as bar_of

# ------------------------------------------------------------------------------ section 3: magnitude grids
_LIN = lambda a, b: tuple(float(v) for v in torch.linspace(a, b, 10))  # noqa: E731
# name -> (registry op, magnitudes of levels 0..9); the paper's grids (reference facts, section B)
PAPER_GRIDS: dict[str, tuple[str, tuple[float, ...]]] = {
    "translate": ("translate_x", _LIN(0, 1)),  # 0 .. the image's width
    "zoom_in": ("zoom_in", _LIN(1, 3.5)),
    "zoom_out": ("zoom_out", _LIN(1, 0.28)),
    "rotate": ("rotate", (0, -27, 45, -54, -81, 90, -108, -135, 135, 180)),
    "shear": ("shear_x", (0, -17.8, 22.75, -35.6, 45.5, -53.4, 68.25, -71.2, -89, 91)),
    "brightness_up": ("brightness", _LIN(1, 2)),
    "brightness_down": ("brightness", _LIN(1, 0)),
    "contrast_up": ("contrast", _LIN(1, 2)),
    "contrast_down": ("contrast", _LIN(1, 0)),
    "posterize": ("posterize", (8, 7, 6, 5, 4, 4, 3, 2, 1, 0)),
    "solarize": ("solarize", _LIN(1, 0)),
}
# the other registry ops, from the identity to the far end of their range (invlib.transforms.levels)
OTHER_GRIDS: dict[str, tuple[str, tuple[float, ...]]] = {
    "translate_y": ("translate_y", _LIN(0, 1)),
    "shear_y": ("shear_y", PAPER_GRIDS["shear"][1]),
    **{name: (name, tuple(float(v) for v in T.levels(name)))
       for name in ("saturation", "hue", "equalize", "autocontrast", "invert", "sharpness", "gaussian_blur",
                    "gaussian_noise", "hflip", "vflip")},
}
GRIDS = {**PAPER_GRIDS, **OTHER_GRIDS}
# The authors' sweep turns and shears through torchvision's affine, whose positive angle turns the image clockwise
# (and shears the other way); the registry's rotate turns counter-clockwise for a positive angle. A grid's
# magnitudes are the paper's values; these grids apply them with the sign flipped, so that level k moves the image
# exactly as their code does (benchmarks/authors/grounding_runs.py, "sweep_transforms").
GRID_SIGN = {"rotate": -1.0, "shear": -1.0, "shear_y": -1.0}


def grid(name: str) -> tuple[str, tuple[float, ...]]:
    """``(registry op, magnitudes of levels 0..9)`` of a grid of :data:`GRIDS`; unknown names list the valid ones.

    Example
    -------
    >>> grid("rotate")[1][:3]
    (0, -27, 45)
    """
    return GRIDS[check_choice(name, GRIDS, "transform grid")]


def group_of(name: str) -> str:
    """``'geometric'`` or ``'appearance'``: the group of a grid's registry op, or of a pool operation.

    Example
    -------
    >>> group_of("zoom_in"), group_of("posterize"), group_of("shearX")
    ('geometric', 'appearance', 'geometric')
    """
    if name in AA_OPS:
        return AA_OPS[name][1]
    return T.get(grid(name)[0]).group


def transform_level(name: str, x: torch.Tensor, level: int, generator: torch.Generator | None = None):
    """Grid ``name`` at ``level`` (0-9) applied to images ``x`` ``(B, C, H, W)`` in [0, 1] -> same shape.

    Example
    -------
    >>> x = torch.rand(2, 3, 8, 8)
    >>> torch.equal(transform_level("rotate", x, 0), x), transform_level("posterize", x, 9).max().item()
    (True, 0.0)
    """
    op, mags = grid(name)
    _check_level(level)
    return T.apply(op, x, GRID_SIGN.get(name, 1.0) * mags[level], generator=generator)


def _check_level(level) -> int:
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= 9:
        raise ValueError(f"level must be an integer in 0..9 (0 = no transformation, 9 = the largest), got {level!r}.")
    return int(level)


LAYERS = ("penultimate", "logits")


def embedding(model: torch.nn.Module, layer: str = "penultimate") -> Callable[[torch.Tensor], torch.Tensor]:
    """The paper's embedding of a classifier: its pooled penultimate output (the classifier's input), or with
    ``layer="logits"`` the whole network's output (what the authors' similarity-search code loads for its model
    trained without augmentation, reference facts section B).

    ``(B, C, H, W)`` in [0, 1] -> ``(B, D)``; the penultimate layer through timm's ``forward_head(...,
    pre_logits=True)`` when the model has it (our models, timm's: a ViT built with a class token gives its
    LayerNorm'd CLS token), else :func:`invlib.models.features`.

    Example
    -------
    >>> from invlib import models
    >>> net = models.create("small_resnet18").eval()
    >>> embedding(net)(torch.rand(2, 3, 28, 28)).shape, embedding(net, "logits")(torch.rand(2, 3, 28, 28)).shape
    (torch.Size([2, 128]), torch.Size([2, 10]))
    """
    if check_choice(layer, LAYERS, "embedding layer") == "logits":
        return model
    if hasattr(model, "forward_head") and hasattr(model, "forward_features"):
        from ...models import measuring

        def embed(b):
            with measuring(model) as net:  # a model trained in bf16 is measured so, as every other pass of it
                return net.forward_head(net.forward_features(b), pre_logits=True).float()

        return embed
    from ...models import features

    return lambda b: features(model, b, ["pre_logits"])["pre_logits"]


def _batched(fn, x: torch.Tensor, batch_size: int, device) -> torch.Tensor:
    """``fn`` over ``x`` in batches on ``device``; the outputs as float32 on the CPU (:func:`invlib.models.batched`,
    the layout left as it is: the embeddings have always been taken on contiguous batches)."""
    from ...models import batched  # not at the top: the grids and the search need no timm

    return batched(fn, x, batch_size, device, channels_last=False)


STREAM_CHUNK = 2048  # images on disk are decoded and transformed this many at a time (2.4 GB of float at 224 px)


def _chunks(x, order: torch.Tensor | None = None):
    """``(k, images in [0, 1])`` parts of ``x`` (rows ``order``): all of an in-memory ``x`` at once, as it
    always was; an :class:`invlib.streaming.ImageFiles` in chunks of :data:`STREAM_CHUNK`, decoded by workers."""
    if not streaming.is_lazy(x):
        yield 0, x if order is None else x[order]
        return
    for k, xb in enumerate(streaming.batches(x, STREAM_CHUNK, order)):
        yield k, xb.float().div_(255)


def _chunk_generator(seed: int, k: int) -> torch.Generator:
    """The draws of chunk ``k``: chunk 0 (all of an in-memory set) draws from ``seed`` itself."""
    return torch.Generator().manual_seed(seed if k == 0 else _seed(seed, "chunk", k))


@torch.inference_mode()
def sweep(embeddings: dict[str, Callable], x: torch.Tensor, names: Sequence[str] | None = None,
          levels: Sequence[int] = range(10), seed: int = 0, batch_size: int = 256,
          device: str | torch.device = "cpu", progress: bool = False, per_image: bool = False):
    """Invariance and equivariance of several embeddings to every grid of ``names`` at every level.

    Args:
        embeddings: label -> ``f(images (B, C, H, W)) -> (B, D)`` (e.g. :func:`embedding` of a model). A key may
            be a tuple of labels whose callable returns as many outputs, e.g. several layers of one forward pass
            (:func:`_joint`); each label gets its own rows.
        x: probe images ``(N, C, H, W)`` in [0, 1], ``N >= 2``, or images on disk
            (:class:`invlib.streaming.ImageFiles`: decoded, transformed and embedded :data:`STREAM_CHUNK` at a time,
            each chunk with draws of its own).
        names: grids of :data:`GRIDS` (default: all). levels: which of 0..9.
        seed: the draws of random ops, of the invariance pairing and of the alignment baseline.

    Each (grid, level) transforms the whole probe set once, in batches, and feeds it to every embedding; each
    embedding's rows are those a sweep of it alone gives.

    Returns one row per (embedding, grid, level): ``model, transform, group, level, magnitude, median, q25,
    q75, mean`` (of the per-image relative invariance) and ``alignment``. With ``per_image=True``, ``(rows,
    images)``: ``images[i]`` holds row ``i``'s per-image values, ``invariance`` ``(N,)`` (the relative invariance
    of each image) and ``pairs`` ``(N, N)`` (:func:`alignment_pairs`: the alignment's terms per pair of images, whose
    mean off the diagonal is the row's ``alignment``), for intervals over images; the rows are the same.

    Example
    -------
    >>> rows = sweep({"mean": lambda b: b.mean((2, 3))}, torch.rand(16, 3, 8, 8), ["hflip"], levels=[0, 9])
    >>> [(r["level"], round(r["median"], 3)) for r in rows]  # the mean colour ignores a flip
    [(0, 1.0), (9, 1.0)]
    """
    names = list(GRIDS) if names is None else [check_choice(n, GRIDS, "transform grid") for n in names]
    levels = [_check_level(lv) for lv in levels]
    if len(x) < 2:
        raise ValueError(f"the sweep needs at least 2 probe images, got {len(x)}.")
    joint = any(isinstance(k, tuple) for k in embeddings)
    if joint:  # several outputs of one call: embedded side by side, split per label
        f, split = _joint(embeddings)
        embeddings = {"": f}
    z = {label: torch.cat([_batched(f, xc, batch_size, device) for _, xc in _chunks(x)])
         for label, f in embeddings.items()}
    z = split(z[""]) if joint else z
    rows, images = [], []
    todo = [(n, lv) for n in names for lv in levels]
    bar = bar_of(todo, progress, "sweep")
    for name, level in bar:
        op, mags = GRIDS[name]
        z_ts = {label: [] for label in embeddings}
        for k, xc in _chunks(x) if level else ():
            gen = _chunk_generator(_seed(seed, name, level), k)
            xt = T.apply(op, xc, GRID_SIGN.get(name, 1.0) * mags[level], generator=gen)
            for label, f in embeddings.items():
                z_ts[label].append(_batched(f, xt, batch_size, device))
        if level:
            z_ts = {label: torch.cat(parts) for label, parts in z_ts.items()}
            z_ts = split(z_ts[""]) if joint else z_ts
        else:
            gen = torch.Generator().manual_seed(_seed(seed, name, level))
        state = gen.get_state()  # every embedding draws the pairings a sweep of its own would draw
        for label in z:
            gen.set_state(state)
            z_t = z_ts[label] if level else z[label]
            inv = metrics.relative_invariance(z[label], z_t, generator=gen)
            if per_image:
                drawn = gen.get_state()
                images.append(dict(invariance=inv.cpu(), pairs=alignment_pairs(z[label], z_t, gen).cpu()))
                gen.set_state(drawn)  # the alignment below draws what it would draw without per_image
            rows.append(dict(model=label, transform=name, group=T.get(op).group, level=level,
                             magnitude=float(mags[level]), **metrics.summary(inv),
                             alignment=metrics.equivariance_alignment(z[label], z_t, gen)))
    return (rows, images) if per_image else rows


def alignment_pairs(z: torch.Tensor, z_t: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """The terms of paper B's equivariance alignment (:func:`invlib.metrics.equivariance_alignment`) per pair of
    images: ``(N, D), (N, D) -> (N, N)``, entry ``(i, j)`` the cosine distance of rows ``i, j`` of the shuffled
    baseline minus that of the responses ``z - z_t`` (0 on the diagonal). Drawn from ``generator`` as the metric
    draws its baseline, so the mean off the diagonal is the metric's value for the same generator state; a mean
    over a resample of the images (pairs of two different images, weighted by how often each was drawn) gives the
    alignment's bootstrap interval over images.

    Example
    -------
    >>> g, z = torch.Generator(), torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    >>> m = alignment_pairs(z, z.flip(1), g.manual_seed(1))
    >>> value = metrics.equivariance_alignment(z, z.flip(1), g.manual_seed(1))
    >>> m.shape, abs(float(m.sum() / (6 * 5)) - value) < 1e-6, float(m.diagonal().abs().max())
    (torch.Size([6, 6]), True, 0.0)
    """
    d, b = metrics.alignment_responses(z, z_t, generator)  # the metric's draw of the baseline
    out = _cosines(d) - _cosines(b)  # (1 - cos_B) - (1 - cos_D)
    return out.fill_diagonal_(0.0)


def _cosines(rows: torch.Tensor) -> torch.Tensor:
    """``(N, D) -> (N, N)`` cosine of every two rows (0 with a row of zeros)."""
    u = torch.nn.functional.normalize(rows, dim=1, eps=1e-12)
    return u @ u.T


def _seed(seed: int, *parts) -> int:
    """A stable per-item seed (Python's ``hash`` of strings changes between runs)."""
    text = "/".join(map(str, (seed, *parts)))
    return int.from_bytes(hashlib.sha1(text.encode()).digest()[:6], "big")


# ------------------------------------------------------------------------------ section 4: similarity search
# AutoAugment operation -> (registry op, group, level 0..9 -> value, signed). The values follow the AutoAugment
# ranges (reference facts, section B). A signed value moves the registry op's identity by +-value, the sign drawn
# per image as AutoAugment does; an unsigned value is the magnitude itself; operations without a magnitude ignore
# the level. "zoom" is zoom_in for a factor >= 1, else zoom_out. How the geometric operations sample and fill is
# the search's ``style`` (:data:`STYLES`).
_TAN = lambda level: math.degrees(math.atan(0.3 * level / 9))  # noqa: E731  shear 0..0.3 as degrees
AA_OPS: dict[str, tuple[str, str, Callable[[int], float], bool]] = {
    #            registry op     group         level -> value                     signed
    "shearX": ("shear_x", "geometric", _TAN, True),
    "shearY": ("shear_y", "geometric", _TAN, True),
    "translateX": ("translate_x", "geometric", lambda lv: 150 / 331 * lv / 9, True),
    "translateY": ("translate_y", "geometric", lambda lv: 150 / 331 * lv / 9, True),
    "rotate": ("rotate", "geometric", lambda lv: 30 * lv / 9, True),
    "rescale": ("zoom", "geometric", lambda lv: RESCALE[lv], False),
    "color": ("saturation", "appearance", lambda lv: 0.9 * lv / 9, True),
    "contrast": ("contrast", "appearance", lambda lv: 0.9 * lv / 9, True),
    "sharpness": ("sharpness", "appearance", lambda lv: 0.9 * lv / 9, True),
    "brightness": ("brightness", "appearance", lambda lv: 0.9 * lv / 9, True),
    "posterize": ("posterize", "appearance", lambda lv: float(round(8 - 4 * lv / 9)), False),
    "solarize": ("solarize", "appearance", lambda lv: min(1.0, 256 / 255 * (1 - lv / 9)), False),
    "autocontrast": ("autocontrast", "appearance", lambda lv: 1.0, False),
    "equalize": ("equalize", "appearance", lambda lv: 1.0, False),
    "invert": ("invert", "appearance", lambda lv: 1.0, False),
}
RESCALE = (1.0, 0.85, 0.70, 0.55, 0.40, 0.25, 1.625, 2.25, 2.875, 3.5)  # zoom factor of rescale levels 0..9
# solarize's threshold is AutoAugment's on the 0-255 scale, 256 (1 - level / 9): pixel values i >= it are inverted,
# i.e. x = i / 255 >= 256 / 255 (1 - level / 9)
GREY = 128 / 255  # the fill of the authors' PIL operations
# How the search's operations act, per style: operation -> options of the registry's affine ops (invlib.transforms
# ._warp: mode, fill, origin) and "signed" where the style overrides AA_OPS. "authors" is their code's (reference
# facts, section B): uint8 PIL operations that fill translations, shears and rotations with grey 128; shears
# about the top-left corner (so they also shift the image by up to 0.3 of its height), bicubic; translations and
# rotations nearest-neighbour; rotations never signed (counter-clockwise); rescale through torchvision's affine,
# nearest-neighbour with black fill. Their sign +1 of a shear or translation is PIL's positive coefficient, which
# moves the content left (up); "direction": -1 makes sign=+1 here do the same, so that a fixed sign matches theirs.
# "ours" is this library's first reading of the paper: every geometric operation about the centre, bilinear, black
# fill, rotations of a random sign.
STYLES: dict[str, dict[str, dict]] = {
    "authors": {"shearX": dict(origin="corner", mode="bicubic", fill=GREY, direction=-1),
                "shearY": dict(origin="corner", mode="bicubic", fill=GREY, direction=-1),
                "translateX": dict(mode="nearest", fill=GREY, direction=-1),
                "translateY": dict(mode="nearest", fill=GREY, direction=-1),
                "rotate": dict(mode="nearest", fill=GREY, signed=False), "rescale": dict(mode="nearest")},
    "ours": {},
}
_POOL_LEVELS = {"autocontrast": (1, 3, 5), "color": (0, 2, 4, 8), "contrast": (3, 8),
                "equalize": (1, 2, 3, 4, 5, 7, 8, 9), "invert": (3, 4, 5, 6, 8), "posterize": (5, 6, 7, 8),
                "rotate": (3, 4, 8, 9), "sharpness": (7,), "shearX": (2, 4, 5, 6, 9), "shearY": (4, 5, 6, 7, 8),
                "solarize": (2, 3, 4, 5, 6, 7, 8), "translateX": (3,), "translateY": (2, 3, 6, 7),
                "rescale": tuple(range(10))}
POOL: list[tuple[str, int]] = [(op, lv) for op, lvs in _POOL_LEVELS.items() for lv in lvs]
OP_TYPES = tuple(_POOL_LEVELS)  # the 14 operation types of the pool


def _autoaugment_subpolicies() -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """The 2-operation sub-policies of AutoAugment's ImageNet and SVHN policies (as torchvision lists them),
    probabilities dropped (the paper applies both operations); no-magnitude operations get level 0."""
    from torchvision.transforms import AutoAugmentPolicy, v2

    rename = {"ShearX": "shearX", "ShearY": "shearY", "TranslateX": "translateX", "TranslateY": "translateY",
              "AutoContrast": "autocontrast"}
    out = []
    for policy in (AutoAugmentPolicy.IMAGENET, AutoAugmentPolicy.SVHN):
        for sub in v2.AutoAugment(policy)._policies:
            pair = tuple((rename.get(op, op.lower()), level or 0) for op, _p, level in sub)
            if pair not in out:
                out.append(pair)
    return out


SUBPOLICIES = _autoaugment_subpolicies()


def entry_name(entry) -> str:
    """``"rotate/8"`` for ``("rotate", 8)``; ``"rotate/8+color/0"`` for a sub-policy.

    Example
    -------
    >>> entry_name((("rotate", 8), ("color", 0)))
    'rotate/8+color/0'
    """
    if isinstance(entry, str):
        return entry
    if isinstance(entry[0], str):
        return f"{entry[0]}/{entry[1]}"
    return "+".join(entry_name(e) for e in entry)


def parse_entry(entry) -> tuple[tuple[str, int], ...]:
    """An entry (name like ``"rotate/8+color/0"``, ``(op, level)`` or a tuple of those) as ``((op, level), ...)``.

    Unknown operations list the valid ones; levels must be in 0..9.

    Example
    -------
    >>> parse_entry("solarize/4")
    (('solarize', 4),)
    >>> parse_entry("spin/3")
    Traceback (most recent call last):
    ValueError: Unknown AutoAugment operation 'spin'. Valid AutoAugment operations: autocontrast, brightness, ...
    """
    if isinstance(entry, str):
        parts = []
        for part in entry.split("+"):
            op, _, level = part.partition("/")
            if not level.strip().lstrip("-").isdigit():
                raise ValueError(f"entry {part!r} must read '<operation>/<level>', e.g. 'rotate/8'.")
            parts.append((op, int(level)))
    elif entry and isinstance(entry[0], str):
        parts = [tuple(entry)]
    else:
        parts = [tuple(e) for e in entry]
    for op, level in parts:
        if op not in AA_OPS:
            raise ValueError(f"Unknown AutoAugment operation {op!r}. Valid AutoAugment operations: "
                             f"{', '.join(sorted(AA_OPS))}.")
        _check_level(level)
    return tuple((op, int(level)) for op, level in parts)


def apply_entry(entry, x: torch.Tensor, generator: torch.Generator | None = None, style: str = "authors",
                sign: int | None = None) -> torch.Tensor:
    """Apply a pool entry or sub-policy (operations in sequence) to ``x`` ``(B, C, H, W)`` in [0, 1].

    ``style``: how the geometric operations sample and fill (:data:`STYLES`: ``"authors"``, their code's PIL
    operations, the default; ``"ours"``). Signed operations (shear, translate, the colour factors, and rotation in
    ``"ours"``) draw one sign per image from ``generator``, or all take ``sign`` (+1 or -1) when it is given.

    Example
    -------
    >>> x = torch.rand(4, 3, 8, 8)
    >>> torch.allclose(apply_entry("invert/3", x), 1 - x), apply_entry("rotate/9+color/0", x).shape
    (True, torch.Size([4, 3, 8, 8]))
    >>> black = torch.zeros(1, 1, 4, 8)  # half the width comes in as grey (authors) or black (ours)
    >>> [round(apply_entry("translateX/9", black, sign=1, style=s).mean().item(), 3) for s in ("authors", "ours")]
    [0.251, 0.0]
    >>> row = apply_entry("translateX/9", torch.eye(8)[None, None, 6:7], sign=1)[0, 0, 0]  # +1: content left
    >>> [round(v, 2) for v in row.tolist()]
    [0.0, 0.0, 1.0, 0.0, 0.5, 0.5, 0.5, 0.5]
    """
    options = STYLES[check_choice(style, STYLES, "search style")]
    if sign not in (None, 1, -1):
        raise ValueError(f"sign must be None (random per image), 1 or -1; got {sign!r}.")
    for op, level in parse_entry(entry):
        name, identity, value, signed = _resolve(op, level)
        opts = dict(options.get(op, {}))
        signed, direction = opts.pop("signed", signed), opts.pop("direction", 1)
        if signed:
            signs = (torch.randint(0, 2, (len(x),), generator=generator).float().mul(2).sub(1) if sign is None
                     else torch.full((len(x),), float(sign)))
            m = identity + direction * signs * value
        else:
            m = torch.full((len(x),), float(value))
        x = T.apply(name, x, m, generator=generator, **opts)
    return x


def _resolve(op: str, level: int) -> tuple[str, float, float, bool]:
    """``(registry op, its identity, value at level, signed)`` of an AutoAugment operation."""
    name, _group, value_of, signed = AA_OPS[op]
    value = value_of(level)
    if name == "zoom":
        name = "zoom_in" if value >= 1 else "zoom_out"
    return name, T.get(name).identity, value, signed


def is_identity(entry) -> bool:
    """True when every operation of the entry is at its identity (``color/0``: factor 1 ± 0; ``rescale/0``:
    zoom 1). The pool keeps such entries, as the authors' does; rankings of "the best transformation" skip them.

    Example
    -------
    >>> is_identity("rescale/0"), is_identity("color/0"), is_identity("color/2"), is_identity("posterize/0")
    (True, True, False, True)
    """
    for op, level in parse_entry(entry):
        _name, identity, value, signed = _resolve(op, level)
        if value != (0 if signed else identity):
            return False
    return True


def op_type(entry) -> str:
    """The operation type of an entry (its first operation for a sub-policy).

    Example
    -------
    >>> op_type("rescale/7"), op_type("rotate/3+color/2")
    ('rescale', 'rotate')
    """
    return parse_entry(entry)[0][0]


def pairs(labels: torch.Tensor, n_classes: int, max_pairs: int | None = None, seed: int = 0,
          batch: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """Same-class pairs as the paper draws them: each class's images in a seeded random order, cut into
    batches of ``batch``; image ``i`` of a batch is paired with image ``i + batch // 2`` (a last, smaller batch
    of ``r`` images pairs ``i`` with ``i + r // 2``). At most ``max_pairs`` per class.

    Returns ``(first, second)`` index tensors ``(P,)``, class by class. A class with fewer than 2 images
    raises ``ValueError`` naming it.

    Example
    -------
    >>> labels = torch.tensor([0] * 32 + [1] * 5)
    >>> a, b = pairs(labels, 2)
    >>> len(a), bool((labels[a] == labels[b]).all()), len(a[16:])
    (18, True, 2)
    """
    g = torch.Generator().manual_seed(seed)
    first, second = [], []
    for c in range(n_classes):
        idx = (labels == c).nonzero().flatten()
        if len(idx) < 2:
            raise ValueError(f"class {c} has {len(idx)} image(s); the similarity search needs at least 2 per "
                             "class (a pair). Load more images or drop the class.")
        idx = idx[torch.randperm(len(idx), generator=g)]
        fa, fb = [], []
        for start in range(0, len(idx), batch):
            group = idx[start:start + batch]
            h = len(group) // 2
            fa.append(group[:h])
            fb.append(group[h:2 * h])
        fa, fb = torch.cat(fa)[:max_pairs], torch.cat(fb)[:max_pairs]
        first.append(fa)
        second.append(fb)
    return torch.cat(first), torch.cat(second)


@dataclass
class Search:
    """The result of :func:`search`: per-pair percent similarity changes and what the paper reads from them.

    Attributes
    ----------
    entries: entry names (``"rotate/8"``, ``"rotate/8+color/0"``), E of them
    changes: ``(E, P)`` percent change of each pair's cosine similarity, ``100 (sim_t - sim) / sim``
    labels:  ``(P,)`` class index of each pair
    classes: class names, C of them
    """

    entries: list[str]
    changes: torch.Tensor
    labels: torch.Tensor
    classes: list[str]
    meta: dict = field(default_factory=dict)

    def class_means(self) -> np.ndarray:
        """``(C, E)`` mean percent change per class and entry."""
        onehot = torch.nn.functional.one_hot(self.labels, len(self.classes)).double()
        return ((self.changes.double() @ onehot) / onehot.sum(0)).T.numpy()

    def boosted_share(self) -> np.ndarray:
        """``(C, E)`` share of a class's pairs whose similarity the entry raised."""
        onehot = torch.nn.functional.one_hot(self.labels, len(self.classes)).double()
        return (((self.changes > 0).double() @ onehot) / onehot.sum(0)).T.numpy()

    def weighted_boost(self) -> np.ndarray:
        """``(C, E)`` App. E.2's weighted boost as the authors' code computes it: the mean percent change over the
        *boosted* pairs times the share of pairs boosted, i.e. the sum of ``max(change, 0)`` over a class's pairs
        divided by their number. Never negative; a few large gains score high even when most pairs lose."""
        onehot = torch.nn.functional.one_hot(self.labels, len(self.classes)).double()
        return ((self.changes.clamp_min(0).double() @ onehot) / onehot.sum(0)).T.numpy()

    def transforms(self) -> list[str]:
        """The entries that change the image (all but identities such as ``rescale/0``, :func:`is_identity`)."""
        return [e for e in self.entries if not is_identity(e)]

    def top_types(self, k: int) -> list[set[str]]:
        """Each class's set of operation types among its ``k`` best entries by mean change, identities included: the
        sets whose IoU the authors' code compares between classes (App. E.3)."""
        return [{op_type(e) for e in row} for row in self.top(k, entries=self.entries)]

    def top(self, k: int = 1, entries: Sequence[str] | None = None, score: str = "mean") -> list[list[str]]:
        """Each class's ``k`` best entries (by ``score``: ``"mean"`` change or ``"weighted"`` boost), best first,
        among ``entries`` (default: :meth:`transforms`, every entry but the identities)."""
        values = self.class_means() if check_choice(score, ("mean", "weighted"), "score") == "mean" \
            else self.weighted_boost()
        cols = [self.entries.index(e) for e in (self.transforms() if entries is None else entries)]
        order = np.argsort(-values[:, cols], axis=1, kind="stable")[:, :k]
        return [[self.entries[cols[j]] for j in row] for row in order]

    def global_ranking(self) -> list[tuple[str, float, float]]:
        """``(entry, mean over classes of the class means, SEM over classes)``, best first; identities skipped."""
        m = self.class_means()
        rows = [(e, float(m[:, j].mean()), metrics.sem(m[:, j])) for j, e in enumerate(self.entries)
                if not is_identity(e)]
        return sorted(rows, key=lambda r: -r[1])

    def op_type_ranks(self, identities: bool = True) -> np.ndarray:
        """``(C, len(OP_TYPES))`` rank of each operation type per class (0 = best): types ordered by the first
        occurrence of one of their entries in the class's ranking of every entry by mean change (App. E.3). As in
        the authors' code, an identity entry (``rescale/0``, ``color/0``) counts for its type; ``identities=False``
        skips them."""
        m = self.class_means()
        out = np.full((len(self.classes), len(OP_TYPES)), np.nan)
        types = [None if not identities and is_identity(e) else op_type(e) for e in self.entries]
        for c in range(len(self.classes)):
            seen = []
            for j in np.argsort(-m[c], kind="stable"):
                if types[j] is not None and types[j] not in seen:
                    seen.append(types[j])
            for r, t in enumerate(seen):
                out[c, OP_TYPES.index(t)] = r
        present = ~np.isnan(out).all(0)
        return out[:, present]


def search(embed: Callable, x: torch.Tensor, labels: torch.Tensor, entries: Sequence | None = None,
           classes: Sequence[str] | None = None, max_pairs: int | None = None, seed: int = 0,
           batch_size: int = 256, device: str | torch.device = "cpu", progress: bool = False,
           style: str = "authors", sign: int | None = None) -> Search:
    """The similarity search of section 4 for one embedding (:func:`search_many` with one).

    Args:
        embed: ``f(images (B, C, H, W)) -> (B, D)`` (e.g. :func:`embedding` of a model trained without
            augmentation, as the paper).
        x: images ``(N, C, H, W)`` in [0, 1], or on disk (:class:`invlib.streaming.ImageFiles`: the pairs are
            decoded and transformed :data:`STREAM_CHUNK` at a time); labels: ``(N,)`` class indices.
        entries: pool entries or sub-policies (default: :data:`POOL`), as names or tuples (:func:`parse_entry`).
        classes: class names (default: ``"0"``, ``"1"``, ...). max_pairs: pairs per class (default: all).
        seed: the pair draw and the random signs (the same for every embedding, so two embeddings see the
            same transformed images).
        style, sign: how the operations act (:func:`apply_entry`; default: as the authors' code).

    Returns a :class:`Search`.

    Example
    -------
    >>> s = search(lambda b: b.mean((2, 3)), torch.rand(40, 3, 8, 8), torch.arange(40) % 2, ["invert/3"])
    >>> s.changes.shape
    torch.Size([1, 20])
    """
    return search_many({"m": embed}, x, labels, entries, classes, max_pairs, seed, batch_size, device, progress,
                       style, sign)["m"]


def _joint(embeds: dict) -> tuple[Callable, Callable]:
    """Several embeddings as one: ``(f, split)``, ``f(b)`` their outputs side by side ``(B, sum of D)`` and
    ``split(z)`` them back as ``{name: (N, D)}``. A key may be a tuple of names whose callable returns as many
    outputs (several layers of one forward pass, :func:`embeddings`).

    Example
    -------
    >>> f, split = _joint({"a": lambda b: b[:, :1], ("b", "c"): lambda b: (b[:, 1:], 2 * b)})
    >>> {k: v.tolist() for k, v in split(f(torch.tensor([[1.0, 2.0]]))).items()}
    {'a': [[1.0]], 'b': [[2.0]], 'c': [[2.0, 4.0]]}
    """
    names = [n for k in embeds for n in (k if isinstance(k, tuple) else (k,))]
    widths: list[int] = []

    def f(b):
        outs = []
        for fn in embeds.values():
            out = fn(b)
            outs += list(out) if isinstance(out, (tuple, list)) else [out]
        widths[:] = [o.shape[1] for o in outs]
        return torch.cat(outs, 1)

    return f, lambda z: dict(zip(names, z.split(widths, 1)))


def embeddings(model: torch.nn.Module, layers: Sequence[str] = LAYERS) -> Callable:
    """:func:`embedding` of several ``layers`` from one forward pass: ``f(b) -> tuple`` of ``(B, D)`` in the
    order of ``layers`` (a key of :func:`search_many` names them). A model without timm's split
    (``forward_features``, ``forward_head``) gets one pass per layer.

    Example
    -------
    >>> from invlib import models
    >>> net = models.create("small_resnet18").eval()
    >>> x = torch.rand(2, 3, 28, 28)
    >>> pre, logits = embeddings(net)(x)
    >>> torch.allclose(pre, embedding(net)(x)), torch.allclose(logits, net(x), atol=1e-6)
    (True, True)
    """
    layers = [check_choice(layer, LAYERS, "embedding layer") for layer in layers]
    if not (hasattr(model, "forward_head") and hasattr(model, "forward_features")):
        fns = [embedding(model, layer) for layer in layers]
        return lambda b: tuple(fn(b) for fn in fns)

    from ...models import measuring

    def f(b):
        with measuring(model) as net:  # as embedding() runs it
            h = net.forward_features(b)
            return tuple(net.forward_head(h, pre_logits=layer == "penultimate").float() for layer in layers)

    return f


def search_many(embeds: dict, x: torch.Tensor, labels: torch.Tensor, entries: Sequence | None = None,
                classes: Sequence[str] | None = None, max_pairs: int | None = None, seed: int = 0,
                batch_size: int = 256, device: str | torch.device = "cpu", progress: bool = False,
                style: str = "authors", sign: int | None = None) -> dict[str, Search]:
    """:func:`search` for several embeddings at once: ``embeds`` is ``{name: f}`` (or ``{(names...): f}`` with
    ``f`` returning one output per name, :func:`embeddings`); ``{name: Search}``, each the same as its own
    :func:`search` would give (one pool of :func:`search_pools`).

    The embeddings of both images of every pair are computed once; each entry then transforms all second
    images in one batched pass, fed to every embedding. Entries that apply the same operations
    (``equalize/1`` and ``equalize/9``) are computed once.

    Example
    -------
    >>> x, y = torch.rand(40, 3, 8, 8), torch.arange(40) % 2
    >>> out = search_many({"mean": lambda b: b.mean((2, 3)), "max": lambda b: b.amax((2, 3))}, x, y, ["invert/3"])
    >>> torch.equal(out["max"].changes, search(lambda b: b.amax((2, 3)), x, y, ["invert/3"]).changes)
    True
    """
    entries = list(POOL) if entries is None else list(entries)
    return search_pools(embeds, x, labels, {"": (entries, style)}, classes, max_pairs, seed, batch_size, device,
                        progress, sign)[""]


@torch.inference_mode()
def search_pools(embeds: dict, x: torch.Tensor, labels: torch.Tensor, pools: dict,
                 classes: Sequence[str] | None = None, max_pairs: int | None = None, seed: int = 0,
                 batch_size: int = 256, device: str | torch.device = "cpu", progress: bool = False,
                 sign: int | None = None) -> dict:
    """:func:`search_many` of several pools, each with its style: ``pools`` is ``{name: (entries, style)}``;
    ``{name: {embedding name: Search}}``, each the same as its own :func:`search_many` would give.

    The pairs are embedded once for every pool, and an entry whose operations act the same in two pools (the same
    levels, the same options of its style: an appearance operation in both styles, :data:`STYLES`) is
    transformed and embedded once: the same images (its draws come from the entry's name) give the same numbers.
    An entry that leaves the images as they are (``color/0``, ``rescale/0``) takes their embedding, not a pass.

    Example
    -------
    >>> x, y, mean = torch.rand(40, 3, 8, 8), torch.arange(40) % 2, lambda b: b.mean((2, 3))
    >>> out = search_pools({"mean": mean}, x, y, {"a": (["invert/3", "rotate/8"], "authors"),
    ...                                           "o": (["invert/3", "rotate/8"], "ours")})
    >>> torch.equal(out["o"]["mean"].changes, search(mean, x, y, ["invert/3", "rotate/8"], style="ours").changes)
    True
    """
    labels = torch.as_tensor(labels).long()
    n_classes = int(labels.max()) + 1 if classes is None else len(classes)
    classes = [str(c) for c in range(n_classes)] if classes is None else list(classes)
    a, b = pairs(labels, n_classes, max_pairs, seed)
    embed, split = _joint(embeds)
    second = None if streaming.is_lazy(x) else list(_chunks(x, b))  # the second images, gathered once
    za = split(torch.cat([_batched(embed, xc, batch_size, device) for _, xc in _chunks(x, a)]))
    zb_parts = [_batched(embed, xc, batch_size, device) for _, xc in second or _chunks(x, b)]
    zb = split(torch.cat(zb_parts))
    sim = {k: torch.nn.functional.cosine_similarity(za[k], zb[k], dim=1) for k in za}
    done: dict[tuple, dict] = {}
    out = {}

    def embed_entry(key, style):  # an entry that leaves the images as they are (color/0, rescale/0): their embedding
        parts = []
        for (k, xc), zc in zip(second or _chunks(x, b), zb_parts):
            xt = apply_entry(key, xc, _chunk_generator(_seed(seed, entry_name(key)), k), style, sign)
            parts.append(zc if torch.equal(xt, xc) else _batched(embed, xt, batch_size, device))
        return split(torch.cat(parts))

    for pool, (entries, style) in pools.items():
        parsed = [parse_entry(e) for e in entries]
        rows, keys = [], set()
        for p in bar_of(parsed, progress, "similarity search"):
            key = tuple((op, level if AA_OPS[op][2](0) != AA_OPS[op][2](9) else 0) for op, level in p)
            acts = (key, tuple(repr(sorted(STYLES[style].get(op, {}).items())) for op, _ in key))
            keys.add(key)
            if acts not in done:
                zt = embed_entry(key, style)
                done[acts] = {k: 100 * (torch.nn.functional.cosine_similarity(za[k], zt[k], dim=1) - sim[k])
                              / sim[k].abs().clamp_min(1e-8) for k in za}
            rows.append(done[acts])
        names = [entry_name(p) for p in parsed]
        out[pool] = {k: Search(names, torch.stack([r[k] for r in rows]), labels[a], classes,
                               meta=dict(pairs=len(a), evaluated=len(keys), mean_similarity=float(sim[k].mean()),
                                         style=style)) for k in za}
    return out


# ------------------------------------------------------------------------------ section 4.5: WordNet
def wordnet_correlation(s: Search, synsets: Sequence[str], metric: str = "wup", max_pairs: int = 10_000,
                        seed: int = 0, bins: int = 4, permutations: int = 2000) -> dict:
    """Class-pair WordNet similarity against the similarity of the classes' transformation rankings.

    For each pair of classes (all of them, or ``max_pairs`` random ones in ``pairs``): the WordNet similarity of
    their synsets (``metric``: ``wup``, ``lch`` or ``path``, :func:`invlib.wordnet.similarity_matrix`), the
    Spearman correlation of their operation-type ranks (:meth:`Search.op_type_ranks`) and the IoU of the
    operation types of their top-5 and top-25 entries (:meth:`Search.top_types`), as the authors' code computes
    them.

    The K (K - 1) / 2 pairs of K classes are not independent (each class is in K - 1 of them), so the test is on
    the two class-by-class matrices over every pair: ``rho``, Spearman's rank correlation of WordNet similarity
    with ranking correlation, and ``p``, its one-sided Mantel permutation p-value (rows and columns permuted
    together, :func:`invlib.results.mantel`, ``permutations``); ``interval``, a 95 % percentile bootstrap of rho
    over classes (whole classes resampled, the pairs of two copies of one class left out;
    :func:`invlib.results.bootstrap_interval`, ``permutations`` resamples).

    Returns a dict: ``pairs`` (a DataFrame, one row per class pair), ``rho``, ``p``, ``interval``, ``rho_top5``
    and ``rho_top25`` (rho against the IoUs over ``pairs``), and ``bins`` (mean and standard error of the
    ranking correlation within ``bins`` quantile bins of WordNet similarity).

    Example
    -------
    >>> s = search(lambda b: b.mean((2, 3)), torch.rand(60, 3, 8, 8), torch.arange(60) % 3, POOL[:20])
    >>> out = wordnet_correlation(s, ["dog.n.01", "cat.n.01", "car.n.01"])  # doctest: +SKIP
    >>> len(out["pairs"]), out["interval"].n  # doctest: +SKIP
    (3, 3)
    """
    import pandas as pd

    from ... import wordnet
    from ...results import mantel

    if len(synsets) != len(s.classes) or len(s.classes) < 3:
        raise ValueError(f"need one synset per class and at least 3 classes (3 class pairs): {len(s.classes)} "
                         f"classes, {len(synsets)} synsets.")
    wn_sim = np.asarray(wordnet.similarity_matrix(list(synsets), metric), dtype=float)
    ranks = torch.as_tensor(s.op_type_ranks())
    top5, top25 = s.top_types(5), s.top_types(25)
    c = len(s.classes)
    ranking = np.full((c, c), np.nan)
    for i in range(c):
        for j in range(i + 1, c):
            ranking[i, j] = ranking[j, i] = float(metrics.spearman(ranks[i], ranks[j]))
    all_pairs = [(i, j) for i in range(c) for j in range(i + 1, c)]
    if len(all_pairs) > max_pairs:
        g = np.random.default_rng(seed)
        all_pairs = [all_pairs[k] for k in g.choice(len(all_pairs), max_pairs, replace=False)]
    rows = [dict(a=s.classes[i], b=s.classes[j], wordnet=float(wn_sim[i, j]), ranking=ranking[i, j],
                 top5_iou=metrics.iou(top5[i], top5[j]), top25_iou=metrics.iou(top25[i], top25[j]))
            for i, j in all_pairs]
    frame = pd.DataFrame(rows)
    dropped = int(frame[["wordnet", "ranking"]].isna().any(axis=1).sum())
    if dropped:  # no WordNet path between the synsets, or a class whose ranking is constant
        print(f"note: {dropped} class pair(s) without a WordNet similarity or a ranking correlation left out.")
        frame = frame.dropna(subset=["wordnet", "ranking"]).reset_index(drop=True)
    rho, p = mantel(wn_sim, ranking, permutations=permutations, seed=seed)
    frame["bin"] = pd.qcut(frame.wordnet.rank(method="first"), min(bins, len(frame)), labels=False)
    binned = frame.groupby("bin").agg(wordnet=("wordnet", "mean"), ranking=("ranking", "mean"),
                                      se=("ranking", metrics.sem), pairs=("ranking", "size"))
    return dict(pairs=frame, rho=rho, p=p, metric=metric, bins=binned,
                interval=class_bootstrap(wn_sim, ranking, seed=seed, resamples=permutations),
                rho_top5=float(metrics.spearman(torch.tensor(frame.wordnet.values),
                                                torch.tensor(frame.top5_iou.values))),
                rho_top25=float(metrics.spearman(torch.tensor(frame.wordnet.values),
                                                 torch.tensor(frame.top25_iou.values))))


def class_bootstrap(a, b, level: float = 0.95, seed: int = 0, resamples: int = 2000):
    """Spearman's rho between the off-diagonal entries of two symmetric class-by-class matrices ``(K, K)``, with a
    percentile bootstrap interval over classes (:func:`invlib.results.bootstrap_interval`): a resample draws K
    classes with replacement and correlates the entries of every pair of two different classes it drew (a
    resample with fewer than 3 such pairs, or a constant side, counts as rho 0).

    Example
    -------
    >>> rng = np.random.default_rng(0); p = rng.random((12, 2)); d = np.abs(p[:, None] - p[None]).sum(-1)
    >>> iv = class_bootstrap(d, d + 0.05 * rng.random((12, 12)))
    >>> iv.n, iv.estimate > 0.9, iv.lo > 0.5, iv.method
    (12, True, True, 'bootstrap')
    """
    from ...results import bootstrap_interval
    from ...verdicts import rank_correlation

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    i, j = np.triu_indices(len(a), 1)

    def rho(idx, axis=-1):  # every resample at once (the same draws, the same numbers as one at a time)
        pick = np.asarray(idx, dtype=int)
        flat = pick.reshape(-1, len(a))
        x, y = a[flat[:, i], flat[:, j]], b[flat[:, i], flat[:, j]]
        ok = (flat[:, i] != flat[:, j]) & np.isfinite(x) & np.isfinite(y)
        r = np.where(ok.sum(-1) < 3, 0.0, rank_correlation(x, y, counts=ok, constant=0.0))
        return r.reshape(pick.shape[:-1])

    return bootstrap_interval(np.arange(len(a)), rho, level=level, seed=seed, resamples=resamples)


# ------------------------------------------------------------------------------ App. E.1: foregrounds
def foreground_stats(boxes: torch.Tensor, size: tuple[int, int]) -> dict:
    """Centre and area of object boxes relative to the frame (App. E.1).

    Args:
        boxes: ``(N, 4)`` as ``x0, y0, x1, y1`` in pixels; size: the frame's ``(H, W)``.

    Returns a dict of per-box arrays ``cx``, ``cy`` (centre, fractions of width / height), ``area`` (fraction
    of the frame) and ``side`` (its square root, the box's linear scale), and for each of them the mean, SEM,
    standard deviation and 5th / 95th percentiles under ``summary``.

    Example
    -------
    >>> st = foreground_stats(torch.tensor([[0.0, 0, 10, 10], [5, 5, 15, 15]]), (20, 20))
    >>> st["summary"]["cx"]["mean"], st["summary"]["area"]["mean"]
    (0.375, 0.25)
    """
    b = torch.as_tensor(boxes, dtype=torch.float64)
    if b.ndim != 2 or b.shape[1] != 4 or len(b) == 0:
        raise ValueError(f"boxes must be (N, 4) with N >= 1 as x0, y0, x1, y1, got {tuple(b.shape)}.")
    h, w = size
    out = dict(cx=((b[:, 0] + b[:, 2]) / 2 / w).numpy(), cy=((b[:, 1] + b[:, 3]) / 2 / h).numpy(),
               area=((b[:, 2] - b[:, 0]).clamp_min(0) * (b[:, 3] - b[:, 1]).clamp_min(0) / (h * w)).numpy())
    out["side"] = np.sqrt(out["area"])
    out["summary"] = {k: dict(mean=float(v.mean()), sem=metrics.sem(torch.from_numpy(v)), std=float(v.std()),
                              p5=float(np.percentile(v, 5)), p95=float(np.percentile(v, 95)))
                      for k, v in out.items()}
    return out

"""Paper A (Yan & Huang, *Do CNNs encode data augmentations?*): linear pairwise ranking probes.

For every image with an object box, two views are made with two random values of one augmentation; a frozen
backbone's layers are global-average-pooled and concatenated into ``phi(x)``; a single linear layer
``f(x) = w . phi(x)`` is fitted with the pairwise logistic loss

    log(1 + exp(-sgn(v_i - v_j) (f(x_i) - f(x_j))))

so the probe says which view has the larger value ``v``. Its accuracy on pairs from held-out images says how
well the layers encode the augmentation; ``|w| x std`` per channel says which layers do.

| task           | per view                                               | v (ranked)                        |
|----------------|--------------------------------------------------------|-----------------------------------|
| ``zoom_in``    | trim t ~ U[0.5, 0.9]: the central (1 - t) of the box   | t (larger: object larger)         |
| ``zoom_out``   | margin m ~ U[0.1, s]: the box grown by m W and m H     | m (larger: object smaller)        |
| ``aspect_ratio``| trims l, r, t, b ~ U[0, 0.4] of W, H from each side   | crop height / width, source pixels|
| ``hue``        | hue shift d ~ U[-0.2, 0.2] turns                       | abs(d)                            |
| ``saturation`` | factor ~ U[0.5, 1.5]                                   | factor                            |
| ``contrast``   | factor ~ U[0.5, 1.5]                                   | factor                            |
| ``brightness`` | factor ~ U[0.5, 1.5] (our choice; the paper gives none)| factor                            |

Readings of the paper (section 4) that this module fixes:

* *Zoom-out* ``s`` is "the smallest of the total vertical or horizontal distance from the border of the box
  to the boundaries of the image": ``s = min((W - box_w) / W, (H - box_h) / H)``. The crop is the box grown
  by ``m W`` and ``m H`` in total, centred on the box and shifted inside the image (``m <= s`` always fits).
  Images with ``s < 0.1`` cannot be zoomed out and are left out of that task.
* *Aspect ratio*: the paper's "four random uniform values in [0.4, 0.4]" is a typo (a range of one value);
  we draw the four side trims in ``[0, 0.4]`` of the image width / height.
* *ILSVRC filter* (:func:`ilsvrc_filter`): "boxes that span at least 30 % of the image" and "borders at
  least 30 % of the image dimensions away from the edges" cannot both hold if both mean area and every
  side (a box 30 % from each edge covers at most 0.4 x 0.4 = 16 %). We read the margin, like ``s`` above, as
  the total slack per axis: box area >= ``min_box_area`` of the image and ``(W - box_w) / W``,
  ``(H - box_h) / H`` >= ``min_margin``; both 0.3 by default.
* The colour tasks use the whole image; crops are resized to the backbone's input with ``roi_align``
  (bilinear, averaging when shrinking), all views of a batch in one call.

Pipeline: :func:`sample` (values and crop boxes for all images, from one seed) -> :func:`render` (views)
-> a featurizer (:class:`Backbone`, :class:`Passthrough`, :class:`DCT`) -> :func:`extract` (cached on disk)
-> :func:`train_probe` -> :func:`accuracy`, :func:`importance`, :func:`halves`. The chapters A1 and A2 run
:func:`run_table` on their :class:`Settings` and record the paper's claims (:func:`record_table1_claims`,
:func:`record_layer_claims`).

Example
-------
>>> imgs = torch.randint(0, 255, (64, 3, 32, 32), dtype=torch.uint8)
>>> boxes = torch.tensor([[8.0, 8.0, 24.0, 24.0]]).expand(64, 4)
>>> feats = extract(Passthrough(), imgs, boxes, "brightness", size=16, cache=False)
>>> probe = train_probe(feats)
>>> accuracy(probe, feats) > 0.9
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
from torch import nn
from torchvision.ops import roi_align

from . import transforms
from .utils import atomic_save, cache_dir, check_choice, check_images, digest, resolve_device

CACHE_VERSION = 1


@dataclass(frozen=True)
class Task:
    """One ranking task: ``low``/``high`` bound the sampled parameter; ``op`` is the colour op (or None)."""

    name: str
    low: float
    high: float
    value: str
    op: str | None = None


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("zoom_in", 0.5, 0.9, "trim: fraction of the box's width and height cut away (larger: object larger)"),
    Task("zoom_out", 0.1, math.nan, "margin: fraction of W and H added around the box (larger: object smaller)"),
    Task("aspect_ratio", 0.0, 0.4, "height / width of the crop in source pixels (side trims in [0, 0.4])"),
    Task("hue", -0.2, 0.2, "absolute hue shift in turns", "hue"),
    Task("saturation", 0.5, 1.5, "saturation factor", "saturation"),
    Task("contrast", 0.5, 1.5, "contrast factor", "contrast"),
    Task("brightness", 0.5, 1.5, "brightness factor (range chosen here)", "brightness"),
)}
GEOMETRIC = ("zoom_in", "zoom_out", "aspect_ratio")


# ----------------------------------------------------------------------------------------- images and pairs
def add_margin(images: torch.Tensor, boxes: torch.Tensor, factor: float = 1.5) -> tuple[torch.Tensor, torch.Tensor]:
    """Centre ``(N, C, H, W)`` uint8 images on a black canvas ``factor`` times larger; shift the boxes.

    Fashion-MNIST garments fill their 28 px frame, leaving no room to zoom out; a 1.5x canvas gives every
    image a total slack ``s >= 1/3`` per axis, close to the paper's ImageNet subset (``s >= 0.3``).

    Example
    -------
    >>> im, bx = add_margin(torch.zeros(2, 1, 28, 28, dtype=torch.uint8), torch.tensor([[0., 0., 28., 28.]] * 2))
    >>> im.shape, bx[0].tolist()
    (torch.Size([2, 1, 42, 42]), [7.0, 7.0, 35.0, 35.0])
    """
    n, c, h, w = images.shape
    big_h, big_w = round(h * factor), round(w * factor)
    top, left = (big_h - h) // 2, (big_w - w) // 2
    out = images.new_zeros((n, c, big_h, big_w))
    out[:, :, top:top + h, left:left + w] = images
    return out, boxes + torch.tensor([left, top, left, top], dtype=boxes.dtype)


def ilsvrc_filter(min_box_area: float = 0.3, min_margin: float = 0.3, single: bool = True):
    """The paper's ImageNet subset as a predicate for ``data.load("imagenet", box_filter=...)``.

    Keeps an image when it has exactly one box (``single``), the box covers at least ``min_box_area`` of the
    image, and the total slack per axis ``(W - box_w) / W`` and ``(H - box_h) / H`` is at least
    ``min_margin`` (see the module docstring for why this reading). The predicate takes the image's
    ``(K, 4)`` boxes and its width and height in the same pixels.

    Example
    -------
    >>> keep = ilsvrc_filter()
    >>> keep(torch.tensor([[20.0, 20.0, 80.0, 80.0]]), 100, 100), keep(torch.tensor([[0.0, 0, 90, 90]]), 100, 100)
    (True, False)
    """
    def keep(boxes: torch.Tensor, width: float, height: float) -> bool:
        if len(boxes) == 0 or (single and len(boxes) != 1):
            return False
        area = float((boxes[0, 2] - boxes[0, 0]) * (boxes[0, 3] - boxes[0, 1]))
        return area >= min_box_area * width * height and float(zoom_out_slack(boxes[:1], (height, width))) >= min_margin

    return keep


def zoom_out_slack(boxes: torch.Tensor, hw: tuple[int, int]) -> torch.Tensor:
    """``(N,)`` s: the smallest total slack per axis, ``min((W - box_w) / W, (H - box_h) / H)``.

    Example
    -------
    >>> zoom_out_slack(torch.tensor([[10.0, 0.0, 30.0, 20.0]]), (40, 40)).tolist()  # hw = (H, W)
    [0.5]
    """
    h, w = hw
    return torch.minimum((w - (boxes[:, 2] - boxes[:, 0])) / w, (h - (boxes[:, 3] - boxes[:, 1])) / h)


@dataclass
class Views:
    """Two views per image: crop boxes ``(N, 2, 4)`` in source pixels, colour magnitudes ``(N, 2)`` (or None)
    and the ranked values ``(N, 2)``; ``keep`` ``(N,)`` marks images the task can use."""

    task: str
    crops: torch.Tensor
    magnitudes: torch.Tensor | None
    values: torch.Tensor
    keep: torch.Tensor

    @property
    def labels(self) -> torch.Tensor:
        """``(N,)`` +1 where view a has the larger value, -1 otherwise: the pair's label ``v_a > v_b``."""
        return torch.where(self.values[:, 0] > self.values[:, 1], 1.0, -1.0)

    def swap(self) -> Views:
        """The same pairs with views a and b exchanged (labels flip)."""
        mags = None if self.magnitudes is None else self.magnitudes.flip(1)
        return Views(self.task, self.crops.flip(1), mags, self.values.flip(1), self.keep)


def sample(task: str, boxes: torch.Tensor, hw: tuple[int, int], seed: int = 0) -> Views:
    """Draw two values of ``task`` per image and the crop boxes that realise them, all at once.

    Args:
        task: a name of :data:`TASKS`.
        boxes: ``(N, 4)`` object boxes ``x0, y0, x1, y1`` in source pixels.
        hw: source image ``(H, W)``.
        seed: the draw; the same seed gives the same views.

    Example
    -------
    >>> v = sample("zoom_in", torch.tensor([[10.0, 10.0, 30.0, 30.0]]), (40, 40), seed=0)
    >>> v.crops.shape, bool((v.values >= 0.5).all() and (v.values <= 0.9).all())
    (torch.Size([1, 2, 4]), True)
    """
    check_choice(task, TASKS, "task")
    t, n = TASKS[task], len(boxes)
    g = torch.Generator().manual_seed(int(seed) * 1000 + list(TASKS).index(task))
    u = torch.rand(n, 2, 4, generator=g)
    keep, mags = torch.ones(n, dtype=torch.bool), None
    if task == "zoom_out":
        s = zoom_out_slack(boxes.float(), hw)
        keep = s >= t.low
        param = t.low + (s.clamp(min=t.low)[:, None] - t.low) * u[..., 0]
    elif task == "aspect_ratio":
        param = t.low + (t.high - t.low) * u
    else:
        param = t.low + (t.high - t.low) * u[..., 0]
    if t.op:
        mags = param
        values = param.abs() if task == "hue" else param
        crops = torch.tensor([0.0, 0.0, hw[1], hw[0]]).expand(n, 2, 4)
    else:
        crops, values = crops_for(task, boxes[:, None].expand(n, 2, 4), hw, param)
    return Views(task, crops.contiguous(), mags, values, keep)


def crops_for(task: str, boxes: torch.Tensor, hw: tuple[int, int], param: torch.Tensor):
    """Crop boxes ``(..., 4)`` and ranked values ``(...)`` that realise given parameters of a geometric task.

    ``param``: zoom_in trim ``t`` and zoom_out margin ``m`` shaped like ``boxes[..., 0]``; aspect_ratio side
    trims ``(..., 4)`` (left, top, right, bottom) as fractions of W and H.

    Example
    -------
    >>> crops, v = crops_for("zoom_in", torch.tensor([[10.0, 10.0, 30.0, 30.0]]), (40, 40), torch.tensor([0.5]))
    >>> crops.tolist()
    [[15.0, 15.0, 25.0, 25.0]]
    """
    h, w = hw
    boxes = boxes.float()
    bw, bh = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    cx, cy = (boxes[..., 0] + boxes[..., 2]) / 2, (boxes[..., 1] + boxes[..., 3]) / 2
    if task == "zoom_in":  # the central (1 - t) of the box
        half_w, half_h = (1 - param) * bw / 2, (1 - param) * bh / 2
        return torch.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], -1), param
    if task == "zoom_out":  # the box grown by m W and m H, centred on it, shifted inside the image
        cw, ch = bw + param * w, bh + param * h
        x0 = (cx - cw / 2).clamp(min=0).minimum(w - cw)
        y0 = (cy - ch / 2).clamp(min=0).minimum(h - ch)
        return torch.stack([x0, y0, x0 + cw, y0 + ch], -1), param
    if task == "aspect_ratio":
        crops = torch.stack([param[..., 0] * w, param[..., 1] * h, w - param[..., 2] * w, h - param[..., 3] * h], -1)
        return crops, (crops[..., 3] - crops[..., 1]) / (crops[..., 2] - crops[..., 0])
    raise ValueError(f"crops_for takes a geometric task ({', '.join(GEOMETRIC)}), got {task!r}.")


def render(images: torch.Tensor, crops: torch.Tensor, size: int, task: str,
           magnitudes: torch.Tensor | None = None) -> torch.Tensor:
    """``V`` views of each image: crop, resize to ``size x size``, apply the task's colour op.

    Args:
        images: ``(B, C, H, W)`` uint8 or float in [0, 1].
        crops: ``(B, V, 4)`` boxes ``x0, y0, x1, y1`` in pixels (x1, y1 exclusive); resized with ``roi_align``
            (bilinear, averaging when shrinking). Colour tasks use the whole image, resized once per image.
        size: output side.
        task: a name of :data:`TASKS`; its op is applied with ``magnitudes`` ``(B, V)``.

    Returns ``(V B, C, size, size)`` float in [0, 1]: view 0 of every image, then view 1, ...

    Example
    -------
    >>> x = torch.rand(2, 3, 32, 32)
    >>> torch.allclose(render(x, torch.tensor([[[0.0, 0, 32, 32]]] * 2), 32, "zoom_in"), x, atol=1e-6)
    True
    """
    x = images.float() / 255 if images.dtype == torch.uint8 else images
    b, v = crops.shape[:2]
    op = TASKS[task].op
    if op:
        if x.shape[-2:] != (size, size):
            x = nn.functional.interpolate(x, size=(size, size), mode="bilinear", antialias=True)
        return transforms.apply(op, x.repeat(v, 1, 1, 1), magnitudes.T.reshape(-1).to(x))
    which = torch.arange(b, dtype=x.dtype, device=x.device).repeat(v)[:, None]
    rois = torch.cat([which, crops.transpose(0, 1).reshape(-1, 4).to(x)], 1)
    out = roi_align(x, rois, output_size=(size, size), spatial_scale=1.0, sampling_ratio=-1, aligned=True)
    return out.clamp(0, 1)


def ladder(image: torch.Tensor, box: torch.Tensor, task: str, size: int, k: int = 6, seed: int = 0):
    """``k`` views of one image for ``task``, sorted by value (the paper's Figure 2 rows).

    Returns ``(views (k, C, size, size), values (k,))``.

    Example
    -------
    >>> views, values = ladder(torch.rand(3, 32, 32), torch.tensor([8.0, 8, 24, 24]), "saturation", 16, k=4)
    >>> views.shape, bool((values.diff() >= 0).all())
    (torch.Size([4, 3, 16, 16]), True)
    """
    v = sample(task, box[None].expand(k, 4), image.shape[-2:], seed)
    order = v.values[:, 0].argsort()
    mags = None if v.magnitudes is None else v.magnitudes[order, 0][None]
    return render(image[None], v.crops[order, 0][None], size, task, mags), v.values[order, 0]


# ----------------------------------------------------------------------------------------- featurizers
def data_digest(images: torch.Tensor, boxes: torch.Tensor) -> str:
    """A short hash of the images and boxes: the data part of :func:`extract`'s cache key.

    Example
    -------
    >>> x, b = torch.zeros(2, 1, 4, 4, dtype=torch.uint8), torch.zeros(2, 4)
    >>> data_digest(x, b) == data_digest(x.clone(), b.clone()) != data_digest(x + 1, b)
    True
    """
    return digest(images, boxes)


class Passthrough:
    """The raw pixels, not pooled: ``(B, C, S, S)`` -> ``(B, C S S)``; one group ``"pixels"``.

    Example
    -------
    >>> Passthrough()(torch.rand(2, 3, 8, 8)).shape
    torch.Size([2, 192])
    """

    name = "passthrough"

    def __init__(self):
        self.key, self.groups = "passthrough", None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.groups = [("pixels", x[0].numel())]
        return x.flatten(1)


def dct_matrix(n: int = 8) -> torch.Tensor:
    """The orthonormal DCT-II basis ``(n, n)``: ``coef = D @ block @ D.T``.

    Example
    -------
    >>> d = dct_matrix(8); torch.allclose(d @ d.T, torch.eye(8), atol=1e-6)
    True
    """
    k, i = torch.arange(n).float()[:, None], torch.arange(n).float()[None]
    d = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2 / n)
    d[0] /= math.sqrt(2)
    return d


def zigzag(n: int = 8) -> torch.Tensor:
    """``(n n,)`` flat indices of an ``n x n`` block in JPEG zig-zag order (lowest frequency first).

    Example
    -------
    >>> zigzag(3).tolist()
    [0, 1, 3, 6, 4, 2, 5, 7, 8]
    """
    # anti-diagonals i + j = 0, 1, ...; odd ones run down-left (row rising), even ones up-right
    def key(cell):
        i, j = cell
        return i + j, i if (i + j) % 2 else -i

    cells = sorted(((i, j) for i in range(n) for j in range(n)), key=key)
    return torch.tensor([i * n + j for i, j in cells])


def block_dct(x: torch.Tensor, block: int = 8, magnitude: bool = True) -> torch.Tensor:
    """Each coefficient of a patch-wise ``block x block`` DCT, averaged over the patches, in zig-zag order.

    ``x`` ``(B, C, H, W)`` (zero-padded to a multiple of ``block``) -> ``(B, C, block**2)``. ``magnitude``
    averages ``|coef|`` (the paper's Figure 3); ``False`` averages the signed coefficients.

    Example
    -------
    >>> block_dct(torch.ones(1, 1, 16, 16))[0, 0, :3].round(decimals=4)  # a flat image: only the DC coefficient
    tensor([8., 0., 0.])
    """
    x = nn.functional.pad(x, (0, -x.shape[-1] % block, 0, -x.shape[-2] % block))
    tiles = x.unfold(2, block, block).unfold(3, block, block)  # (B, C, h/8, w/8, 8, 8)
    d = dct_matrix(block).to(x)
    coef = d @ tiles @ d.T
    coef = (coef.abs() if magnitude else coef).mean((2, 3)).flatten(2)
    return coef[..., zigzag(block).to(x.device)]


class DCT:
    """The 8x8 block-DCT baseline: per channel, each of the 64 coefficients average-pooled over the patches.

    ``magnitude=False`` (the paper's "average pooling of the DCT features", read literally) averages signed
    coefficients; ``True`` averages their magnitudes, as the paper's Figure 3 does.

    Example
    -------
    >>> DCT()(torch.rand(2, 3, 16, 16)).shape  # (B, C x 64)
    torch.Size([2, 192])
    """

    def __init__(self, block: int = 8, magnitude: bool = False):
        self.block, self.magnitude, self.groups = block, magnitude, None
        self.name = "dct_abs" if magnitude else "dct"
        self.key = f"{self.name}{block}"

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = block_dct(x, self.block, self.magnitude).flatten(1)
        self.groups = [("dct", out.shape[1])]
        return out


def conv_layers(model: nn.Module) -> list[str]:
    """The probe's layers: every ``Conv2d`` (shortcut/downsample convolutions included), in registration order;
    models with fewer than 4 convolutions (ViTs) use the blocks of :func:`invlib.models.probe_layers`.

    Example
    -------
    >>> from invlib import models
    >>> conv_layers(models.create("small_resnet18"))[:3]
    ['stem.0', 'layer1.0.body.0', 'layer1.0.body.3']
    """
    convs = [n for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    if len(convs) >= 4:
        return convs
    from .models import probe_layers

    return [n for n in probe_layers(model) if n != "pre_logits"]


class Backbone:
    """A frozen model's layers (:func:`conv_layers` by default), each global-average-pooled, concatenated.

    ``groups`` lists ``(layer, channels)``; the model is put in eval mode (and channels-last on CPU, bf16
    autocast on CUDA); a hash of its weights keys the feature cache.

    Example
    -------
    >>> from invlib import models
    >>> f = Backbone(models.create("small_resnet18"))
    >>> f(torch.rand(2, 3, 28, 28)).shape, len(f.groups)
    (torch.Size([2, 1200]), 20)
    """

    def __init__(self, model: nn.Module, layers: list[str] | None = None, name: str | None = None):
        self.model = model.eval()
        self.device = next(model.parameters()).device
        if self.device.type == "cpu":
            model.to(memory_format=torch.channels_last)
        self.layers = list(layers or conv_layers(model))
        self.name = name or type(model).__name__
        self.key = "backbone-" + digest(type(model).__name__, self.layers, *model.state_dict().values())
        self.groups = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        from .models import features

        device = self.device
        x = x.to(device)
        if device.type == "cpu":
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
            out = features(self.model, x, self.layers, pool=True)
        self.groups = [(n, y.shape[1]) for n, y in out.items()]
        return torch.cat([y.float() for y in out.values()], 1)


# ----------------------------------------------------------------------------------------- features (cached)
@dataclass
class Features:
    """Probe inputs for one featurizer and task: ``diff`` ``(N, D)`` = phi(view a) - phi(view b), ``labels``
    ``(N,)`` +-1, ``values`` ``(N, 2)``, per-feature ``std`` ``(D,)`` over both views, ``groups`` (layer, dim);
    ``seconds``: what the call that returned them spent on them (extraction, or reading the cache)."""

    diff: torch.Tensor
    labels: torch.Tensor
    values: torch.Tensor
    std: torch.Tensor
    groups: list
    seconds: float = 0.0
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.labels)


def extract(featurizer, images: torch.Tensor, boxes: torch.Tensor, task: str, size: int, seed: int = 0,
            batch_size: int = 128, device=None, cache: bool = True, progress: bool = False,
            data_key: str | None = None) -> Features:
    """Views of every image (:func:`sample`, :func:`render`), their features and differences, cached on disk.

    Args:
        featurizer: :class:`Backbone`, :class:`Passthrough`, :class:`DCT` or any callable ``(B, C, S, S) ->
            (B, D)`` with ``name``, ``key`` (a cache key) and ``groups`` attributes.
        images: ``(N, C, H, W)`` uint8 source images; boxes ``(N, 4)``.
        task: a name of :data:`TASKS`; size: the featurizer's input side; seed: the views' draw.
        batch_size: images per forward pass (both views of ``batch_size // 2`` pairs; 128 is fastest on a
            2-core CPU for 28 px inputs, where bigger batches spill the caches).
        cache: read/write ``<cache>/probes/<hash>.pt`` (keyed by featurizer weights, images, boxes, task,
            size, seed).
        data_key: :func:`data_digest` of ``(images, boxes)`` when the caller already has it (hashing a large
            image set once instead of once per featurizer and task).

    Example
    -------
    >>> f = extract(DCT(), torch.randint(0, 255, (8, 3, 32, 32), dtype=torch.uint8),
    ...             torch.tensor([[8.0, 8, 24, 24]] * 8), "zoom_in", 16, cache=False)
    >>> f.diff.shape, f.labels.shape
    (torch.Size([8, 192]), torch.Size([8]))
    """
    return extract_many({"one": featurizer}, images, boxes, task, size, seed, batch_size, device, cache, progress,
                        data_key)["one"]


def extract_many(featurizers: dict, images: torch.Tensor, boxes: torch.Tensor, task: str, size: int, seed: int = 0,
                 batch_size: int = 128, device=None, cache: bool = True, progress: bool = False,
                 data_key: str | None = None) -> dict[str, Features]:
    """:func:`extract` for several featurizers ``{name: featurizer}`` that take the same input side: each batch
    of views is rendered once and fed to every featurizer whose features are not cached yet (the crops and
    colour ops cost as much as a small backbone). Returns ``{name: Features}``, the same as one
    :func:`extract` call per featurizer.

    Example
    -------
    >>> x, b = torch.randint(0, 255, (8, 3, 32, 32), dtype=torch.uint8), torch.tensor([[8.0, 8, 24, 24]] * 8)
    >>> both = extract_many({"dct": DCT(), "pixels": Passthrough()}, x, b, "hue", 16, cache=False)
    >>> torch.equal(both["pixels"].diff, extract(Passthrough(), x, b, "hue", 16, cache=False).diff)
    True
    """
    check_choice(task, TASKS, "task")
    check_images(images[:1].float() if images.dtype == torch.uint8 else images)
    if boxes is None or boxes.shape != (len(images), 4):
        raise ValueError(f"boxes must be ({len(images)}, 4) x0, y0, x1, y1 per image, got "
                         f"{None if boxes is None else tuple(boxes.shape)}; datasets without boxes can use the "
                         "whole image: torch.tensor([[0, 0, W, H]]).expand(N, 4).")
    data_key = data_key or data_digest(images, boxes)
    out, todo, files = {}, {}, {}
    for name, featurizer in featurizers.items():
        t0 = time.perf_counter()
        key = digest(CACHE_VERSION, featurizer.key, data_key, task, size, seed)
        files[name] = cache_dir("probes") / f"{featurizer.name}-{task}-{key}.pt"
        if cache and files[name].exists():
            saved = torch.load(files[name], weights_only=True)
            featurizer.groups = featurizer.groups or saved["groups"]
            out[name] = Features(**{**saved, "seconds": time.perf_counter() - t0})
        else:
            todo[name] = featurizer
    if todo:
        out |= _extract(todo, images, boxes, task, size, seed, batch_size, resolve_device(device), progress)
        for name in todo if cache else ():
            atomic_save(vars(out[name]), files[name])
    return {name: out[name] for name in featurizers}


def _extract(featurizers: dict, images, boxes, task, size, seed, batch_size, device, progress) -> dict:
    t0 = time.perf_counter()
    views = sample(task, boxes, images.shape[-2:], seed)
    idx = views.keep.nonzero().flatten()
    diffs = {name: [] for name in featurizers}
    total, total_sq, seconds = dict.fromkeys(featurizers, 0.0), dict.fromkeys(featurizers, 0.0), {}
    pairs = max(1, batch_size // 2)
    steps = range(0, len(idx), pairs)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc=f"{'+'.join(f.name for f in featurizers.values())}/{task}", leave=False)
    for start in steps:
        i = idx[start:start + pairs]
        mags = None if views.magnitudes is None else views.magnitudes[i].to(device)
        x = render(images[i].to(device), views.crops[i].to(device), size, task, mags)
        for name, featurizer in featurizers.items():
            t1 = time.perf_counter()
            phi = featurizer(x).float()
            a, b = phi[: len(i)], phi[len(i):]
            diffs[name].append((a - b).cpu())
            total[name] = total[name] + phi.sum(0).double().cpu()
            total_sq[name] = total_sq[name] + phi.double().pow(2).sum(0).cpu()
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t1
    shared = (time.perf_counter() - t0 - sum(seconds.values())) / len(featurizers)  # sampling and rendering
    count = 2 * len(idx)
    out = {}
    for name, featurizer in featurizers.items():
        mean = total[name] / count
        std = (total_sq[name] / count - mean**2).clamp(min=0).sqrt().float()
        out[name] = Features(torch.cat(diffs[name]), views.labels[idx], views.values[idx], std, featurizer.groups,
                             seconds.get(name, 0.0) + shared,
                             dict(task=task, size=size, seed=seed, dropped=int((~views.keep).sum())))
    return out


# ----------------------------------------------------------------------------------------- the probe
@dataclass
class Probe:
    """A trained linear ranking probe: ``w`` ``(D,)`` on features divided by ``std``; ``columns`` used."""

    w: torch.Tensor
    std: torch.Tensor
    columns: torch.Tensor
    groups: list
    weight_decay: float

    def scores(self, feats: Features) -> torch.Tensor:
        """``(N,)`` f(x_a) - f(x_b) for every pair of ``feats``."""
        return (feats.diff[:, self.columns] / self.std) @ self.w


def _columns(groups: list, layers: list[str] | None) -> torch.Tensor:
    names = [n for n, _ in groups]
    if layers is None:
        return torch.arange(sum(d for _, d in groups))
    bad = [n for n in layers if n not in names]
    if bad:
        raise ValueError(f"Unknown layer(s) {bad}; the features hold: {', '.join(names)}.")
    start = torch.tensor([0] + [d for _, d in groups]).cumsum(0)
    return torch.cat([torch.arange(start[k], start[k + 1]) for k, n in enumerate(names) if n in layers])


def train_probe(train: Features, layers: list[str] | None = None, weight_decay: float = 1e-3,
                max_iter: int = 300) -> Probe:
    """Train ``w`` by full-batch L-BFGS on the pairwise logistic loss plus ``weight_decay / 2 |w|^2``.

    Features are divided by their standard deviation over the training views, so ``|w|`` is the paper's
    importance ``|weight| x std`` and the penalty treats every channel alike. ``layers`` restricts the probe
    to some groups (the half-layer ablation).

    Example
    -------
    >>> f = Features(torch.randn(200, 5), torch.ones(200), torch.zeros(200, 2), torch.ones(5), [("x", 5)])
    >>> f.labels = torch.sign(f.diff[:, 0])
    >>> accuracy(train_probe(f), f) > 0.98
    True
    """
    cols = _columns(train.groups, layers)
    std = train.std[cols].clamp(min=1e-6)
    x, y = train.diff[:, cols] / std, train.labels
    w = torch.zeros(x.shape[1], requires_grad=True)
    opt = torch.optim.LBFGS([w], lr=1, max_iter=max_iter, history_size=20, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-6)

    def closure():
        opt.zero_grad()
        loss = nn.functional.softplus(-y * (x @ w)).mean() + 0.5 * weight_decay * w.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    groups = [(n, d) for n, d in train.groups if layers is None or n in layers]
    return Probe(w.detach(), std, cols, groups, weight_decay)


def accuracy(probe: Probe, feats: Features) -> float:
    """Fraction of pairs whose order the probe gets right (ties count as wrong).

    Example
    -------
    >>> f = Features(torch.tensor([[1.0], [-2.0]]), torch.tensor([1.0, 1.0]), torch.zeros(2, 2), torch.ones(1),
    ...              [("x", 1)])
    >>> accuracy(Probe(torch.ones(1), torch.ones(1), torch.arange(1), [("x", 1)], 0.0), f)
    0.5
    """
    return float((torch.sign(probe.scores(feats)) == feats.labels).float().mean())


def importance(probe: Probe):
    """Per layer, the mean and the max over its channels of ``|w| x std``, each normalised to sum 1.

    Returns a DataFrame indexed by layer (in feature order) with columns ``mean`` and ``max``.

    Example
    -------
    >>> p = Probe(torch.tensor([1.0, 3.0, 4.0]), torch.ones(3), torch.arange(3), [("a", 2), ("b", 1)], 0.0)
    >>> importance(p).round(2).to_dict()
    {'mean': {'a': 0.33, 'b': 0.67}, 'max': {'a': 0.43, 'b': 0.57}}
    """
    import pandas as pd

    per = probe.w.abs().split([d for _, d in probe.groups])
    df = pd.DataFrame({"mean": [float(p.mean()) for p in per], "max": [float(p.max()) for p in per]},
                      index=[n for n, _ in probe.groups])
    return df / df.sum()


def depth(weights) -> float:
    """Importance-weighted mean position of the layers, 0 = first layer, 1 = last (a one-number summary).

    Example
    -------
    >>> depth([0.5, 0.0, 0.5])
    0.5
    """
    w = torch.as_tensor(list(weights), dtype=torch.float64)
    return float((w * torch.linspace(0, 1, len(w), dtype=torch.float64)).sum() / w.sum())


def halves(groups: list) -> dict[str, list[str]]:
    """``{"first half", "second half", "all"}`` -> layer names, split by count in feature order.

    Example
    -------
    >>> halves([("a", 4), ("b", 8), ("c", 16)])["first half"]
    ['a', 'b']
    """
    names = [n for n, _ in groups]
    k = (len(names) + 1) // 2
    return {"first half": names[:k], "second half": names[k:], "all": names}


# ----------------------------------------------------------------------------------------- chapter settings
_ZOO = {"ResNet-18": "zoo:small_resnet18/standard", "ResNet-50": "zoo:small_resnet50/standard"}
_ZOO_VARIANTS = {"untrained": "zoo:small_resnet18/untrained", "trained, no augmentation": "zoo:small_resnet18/none",
                 "trained, standard augmentation": "zoo:small_resnet18/standard"}
_HUB = {"ResNet-18": "tv/resnet18", "ResNet-50": "tv/resnet50"}
_HUB_VARIANTS = {"untrained": "random:tv/resnet18", "trained (ImageNet)": "tv/resnet18"}


@dataclass(frozen=True)
class Settings:
    """What chapters A1 and A2 run on. The defaults are the paper's (section 4: 65,000 training and 21,000
    validation ImageNet images with one box, torchvision's ResNet-18 and ResNet-50); :data:`SETTINGS` holds
    what each smaller profile changes. Make one with :func:`invlib.profiles.settings`.

    Attributes
    ----------
    profile:          the profile's name (filled in by :func:`invlib.profiles.settings`)
    dataset, root:    the images (a name of :func:`invlib.data.available`) and their folder (None: the default)
    n_train, n_val:   training and validation images, one pair per image and task (capped at what there is)
    backbones:        the paper's rows -> backbone spec (:func:`load_backbone`)
    variants:         label -> spec for "does training change what the layers encode?" (chapter A2)
    source_size:      side the images are loaded at (None: the dataset's own)
    canvas:           black margin around each image, as a factor of its side (:func:`add_margin`)
    batch_size:       images per forward pass
    weight_decay:     the probe's L2 penalty on standardised features (the paper states none)
    passthrough_size: input side of the raw-pixel baseline (None: the backbones'); 64 at ImageNet scale,
                      because 20,000 pairs of 224 px views would be 12 GB of differences per task
    seed:             the draw of the images and of the views

    Example
    -------
    >>> from invlib.profiles import settings
    >>> S = settings(Settings, SETTINGS, "cpu", n_train=100, root=None)
    >>> S.profile, S.dataset, S.n_train, S.n_val, S.backbones["ResNet-18"]
    ('cpu', 'fashion_mnist_color', 100, 500, 'zoo:small_resnet18/standard')
    >>> settings(Settings, SETTINGS, "paper").n_train
    65000
    """

    profile: str = "paper"
    dataset: str = "imagenet"
    root: str | None = None
    n_train: int = 65_000
    n_val: int = 21_000
    backbones: dict[str, str] = field(default_factory=lambda: dict(_HUB))
    variants: dict[str, str] = field(default_factory=lambda: dict(_HUB_VARIANTS))
    source_size: int | None = 256
    canvas: float = 1.0
    batch_size: int = 512
    weight_decay: float = 1e-3
    passthrough_size: int | None = 64
    seed: int = 0


_SMALL = dict(dataset="fashion_mnist_color", backbones=_ZOO, variants=_ZOO_VARIANTS, source_size=None, canvas=1.5,
              batch_size=128, passthrough_size=None)
SETTINGS = {  # profile -> the fields it changes (see Settings)
    "smoke": dict(_SMALL, n_train=256, n_val=256),
    "cpu": dict(_SMALL, n_train=1500, n_val=500),
    "gpu": dict(n_train=20_000, n_val=5_000),
}

# Table 1 and Table 2 of the paper: (train, validation) accuracy in %
PAPER_TABLE1 = {
    "Passthrough": dict(zoom_in=(97.7, 46.4), zoom_out=(98.5, 51.8), aspect_ratio=(98.7, 54.9), hue=(94.0, 65.0),
                        saturation=(97.5, 98.9), contrast=(100.0, 62.0), brightness=(100.0, 100.0)),
    "DCT": dict(zoom_in=(56.8, 46.6), zoom_out=(57.5, 52.4), aspect_ratio=(54.1, 57.7)),
    "ResNet-18": dict(zoom_in=(93.9, 90.1), zoom_out=(82.4, 68.8), aspect_ratio=(87.6, 80.9), hue=(87.6, 71.6),
                      saturation=(97.5, 98.3), contrast=(100.0, 100.0), brightness=(100.0, 100.0)),
    "ResNet-50": dict(zoom_in=(90.8, 84.9), zoom_out=(77.6, 64.8), aspect_ratio=(85.9, 81.3), hue=(84.0, 66.0),
                      saturation=(95.2, 94.0), contrast=(99.7, 99.7), brightness=(99.3, 98.8)),
}
PAPER_TABLE2 = {  # ResNet-18 probes on some of its layers
    "first half": dict(zoom_in=(95.3, 91.0), aspect_ratio=(92.6, 91.8), hue=(78.9, 72.9)),
    "second half": dict(zoom_in=(91.7, 86.9), aspect_ratio=(83.7, 74.2), hue=(86.9, 68.4)),
    "all": dict(zoom_in=(93.9, 90.1), aspect_ratio=(87.6, 80.9), hue=(87.6, 71.6)),
}
# the paper's Figures 5 and 6 order tasks roughly from low level (colour) to high level (scale, aspect ratio)
ORDER = ("brightness", "saturation", "hue", "contrast", "aspect_ratio", "zoom_in", "zoom_out")
COLOUR = ("brightness", "saturation", "hue")


# ----------------------------------------------------------------------------------------- images and backbones
def load_images(dataset: str, n_train: int, n_val: int, seed: int = 0, root=None, source_size: int | None = None,
                canvas: float = 1.0, cap: bool = False, **filters):
    """Disjoint train and validation images with boxes: ``((images, boxes), (images, boxes))``.

    Images are the first ``n_train + n_val`` of the train split under ``seed`` (the paper draws both sets
    from ImageNet's training split); ``canvas > 1`` adds a black margin (:func:`add_margin`); ImageNet is
    filtered with :func:`ilsvrc_filter` (``filters``: its arguments). Datasets without boxes use the whole
    image as the box (then only a canvas leaves room to zoom out). One-channel images are repeated to three
    (the backbones take RGB). ``cap``: a dataset with fewer images gives all it has, split in the ratio
    ``n_train : n_val``, with a printed note.

    Example
    -------
    >>> (tr, trb), (va, vab) = load_images("fashion_mnist_color", 10, 5, canvas=1.5)
    >>> tr.shape, va.shape, trb.shape
    (torch.Size([10, 3, 42, 42]), torch.Size([5, 3, 42, 42]), torch.Size([10, 4]))
    """
    from . import data

    opts = {"box_filter": ilsvrc_filter(**filters)} if dataset == "imagenet" else {}
    ds = data.load(dataset, "train", root=root, n=n_train + n_val, seed=seed, size=source_size, cap=cap, **opts)
    images, boxes = ds.images, ds.boxes
    if len(images) < n_train + n_val:
        if len(images) < 2:
            raise ValueError(f"{dataset} has {len(images)} image(s); the probes need at least one training and "
                             "one validation image.")
        n_val = max(1, round(len(images) * n_val / (n_train + n_val)))
        n_train = len(images) - n_val
        print(f"note: {n_train} training and {n_val} validation images (the ratio asked for).")
    if images.shape[1] == 1:
        images = images.expand(-1, 3, -1, -1).contiguous()
    if boxes is None:
        h, w = images.shape[-2:]
        boxes = torch.tensor([[0.0, 0.0, w, h]]).expand(len(images), 4)
    if canvas != 1.0:
        images, boxes = add_margin(images, boxes, canvas)
    return (images[:n_train], boxes[:n_train]), (images[n_train:], boxes[n_train:])


def chapter_images(S: Settings):
    """:func:`load_images` for a chapter's :class:`Settings`, capped at what the dataset holds, with one line
    printed: how many images of which shape, the zoom-out slack, and the tasks these images cannot pose.

    Returns ``((images (N, 3, H, W) uint8, boxes (N, 4)), (images, boxes))``: training, validation.

    Example
    -------
    >>> from invlib.profiles import settings
    >>> train, val = chapter_images(settings(Settings, SETTINGS, "smoke", n_train=20, n_val=10))  # doctest: +ELLIPSIS
    fashion_mnist_color: 20 training + 10 validation images of (3, 42, 42); zoom-out slack s from 0.33 to ...
    >>> train[0].shape, val[1].shape
    (torch.Size([20, 3, 42, 42]), torch.Size([10, 4]))
    """
    train, val = load_images(S.dataset, S.n_train, S.n_val, seed=S.seed, root=S.root, source_size=S.source_size,
                             canvas=S.canvas, cap=True)
    slack = zoom_out_slack(train[1], train[0].shape[-2:])
    undefined = undefined_tasks(train[0])
    print(f"{S.dataset}: {len(train[0]):,} training + {len(val[0]):,} validation images of "
          f"{tuple(train[0].shape[1:])}; zoom-out slack s from {slack.min():.2f} to {slack.max():.2f}"
          + "".join(f"; {t} undefined: {why}" for t, why in undefined.items()))
    return train, val


def undefined_tasks(images: torch.Tensor) -> dict[str, str]:
    """The tasks that ``images`` ``(N, C, H, W)`` cannot pose, each with the reason.

    Hue and saturation leave a greyscale image (one channel, or all channels equal) unchanged: both views of
    a pair are the same image and no probe can rank them. :func:`run_table` reports such a task as
    undefined (accuracy NaN), not as a score of 0 %.

    Example
    -------
    >>> grey = torch.randint(0, 255, (4, 1, 8, 8), dtype=torch.uint8).expand(4, 3, 8, 8)
    >>> sorted(undefined_tasks(grey)), undefined_tasks(torch.rand(4, 3, 8, 8))
    (['hue', 'saturation'], {})
    """
    grey = images.shape[1] == 1 or bool((images == images[:, :1]).all())
    why = "greyscale images (hue and saturation leave them unchanged)"
    return {t: why for t in TASKS if TASKS[t].op in ("hue", "saturation")} if grey else {}


def load_backbone(spec: str, profile="cpu") -> tuple[nn.Module, int]:
    """A backbone and its input side from a spec string.

    | spec                    | what                                                             |
    |-------------------------|------------------------------------------------------------------|
    | ``zoo:<entry>``         | :func:`invlib.zoo.get` (trained on first use), input = profile's |
    | ``<model>``             | hub weights of a timm / ``tv/`` model (online only), input 224    |
    | ``<model>@<path>``      | local weights file for that model, input 224                     |
    | ``random:<model>``      | the model's random initialisation (seed 0), input 224           |

    Zoo backbones are trained on the profile's dataset (not the chapter's): a chapter on your own images
    probes the same networks, and trains nothing on your folder.

    Example
    -------
    >>> model, size = load_backbone("random:small_resnet18", "smoke")
    >>> size, model.training
    (224, False)
    >>> load_backbone("zoo:small_resnet18/standard", "smoke")[1]  # doctest: +SKIP
    28
    """
    from . import models, zoo
    from .profiles import get_profile

    prof = get_profile(profile)
    if spec.startswith("zoo:"):
        return zoo.get(spec[4:], prof), prof.img_size
    if spec.startswith("random:"):
        model = models.create(spec[7:], num_classes=1000, seed=0)  # the same untrained weights every time
    elif "@" in spec:
        name, path = spec.split("@", 1)
        model = models.create(name, num_classes=1000, pretrained=path, normalize=True)
    else:
        model = models.create(spec, num_classes=1000, pretrained=True)
    size = getattr(model, "pretrained_cfg", {}).get("input_size", (3, 224, 224))[-1]
    return model.to(resolve_device(prof.device)).eval(), size


def featurizers(specs: dict[str, str], profile="cpu") -> tuple[dict, dict]:
    """``({label: Backbone}, {label: input side})`` for backbone specs ``{label: spec}`` (:func:`load_backbone`).

    Example
    -------
    >>> feats, sizes = featurizers({"R-18": "random:small_resnet18"}, "smoke")
    >>> feats["R-18"].name, sizes
    ('r18', {'R-18': 224})
    """
    feats, sizes = {}, {}
    for label, spec in specs.items():
        model, sizes[label] = load_backbone(spec, profile)
        feats[label] = Backbone(model, name=label.lower().replace("-", ""))
    return feats, sizes


def baselines(size: int, passthrough_size: int | None = None) -> tuple[dict, dict]:
    """The paper's baselines and their input sides: raw pixels ("Passthrough", at ``passthrough_size`` or
    ``size``), the signed block DCT ("DCT") and, as the paper's Figure 3 pools it, the DCT of magnitudes.

    Example
    -------
    >>> feats, sizes = baselines(28, 16)
    >>> list(feats), sizes["Passthrough"], sizes["DCT"]
    (['Passthrough', 'DCT', 'DCT (magnitude)'], 16, 28)
    """
    feats = {"Passthrough": Passthrough(), "DCT": DCT(), "DCT (magnitude)": DCT(magnitude=True)}
    return feats, {name: size for name in feats} | {"Passthrough": passthrough_size or size}


def run_options(S: Settings) -> dict:
    """The keyword arguments of :func:`run_table` that come from the settings and their profile.

    Example
    -------
    >>> from invlib.profiles import settings
    >>> sorted(run_options(settings(Settings, SETTINGS, "smoke")))
    ['batch_size', 'device', 'progress', 'seed', 'weight_decay']
    """
    from .profiles import get_profile

    prof = get_profile(S.profile)
    return dict(seed=S.seed, weight_decay=S.weight_decay, batch_size=S.batch_size, device=prof.device,
                progress=prof.progress)


def run_table(featurizers: dict, train, val, tasks=None, sizes=None, seed: int = 0, weight_decay: float = 1e-3,
              batch_size: int = 128, device=None, progress: bool = False, layers=None):
    """Probe every featurizer on every task: ``(table, trained)``.

    ``train``/``val``: ``(images, boxes)`` from :func:`load_images`; ``sizes``: input side per featurizer;
    ``layers``: a function ``groups -> {label: [layer names]}`` (e.g. :func:`halves`) to probe layer subsets
    instead of all layers (label ``"all"``).

    Featurizers of the same input side share the rendering of the views (:func:`extract_many`).
    ``table`` has one row per (featurizer, layers, task), in featurizer order: ``train_acc``, ``val_acc``
    (fractions), ``pairs``, ``seconds`` (feature extraction, ~0 when cached) and ``undefined`` (why the
    images cannot pose the task, see :func:`undefined_tasks`; then the accuracies are NaN and nothing is
    trained, else "");
    ``trained[(featurizer, layers, task)]`` is the trained :class:`Probe`.

    Example
    -------
    >>> imgs = torch.randint(0, 255, (40, 3, 16, 16), dtype=torch.uint8)
    >>> boxes = torch.tensor([[4.0, 4.0, 12.0, 12.0]]).expand(40, 4)
    >>> table, trained = run_table({"pixels": Passthrough()}, (imgs[:30], boxes[:30]), (imgs[30:], boxes[30:]),
    ...                            tasks=["brightness"], sizes={"pixels": 16})
    >>> table.featurizer.tolist(), table.task.tolist(), table.pairs.tolist()
    (['pixels'], ['brightness'], [30])
    """
    import pandas as pd

    rows, trained = [], {}
    keys = {"train": data_digest(*train), "val": data_digest(*val)}
    undefined = undefined_tasks(train[0])
    common = dict(batch_size=batch_size, device=device, progress=progress)
    for task in tasks or list(TASKS):
        if task in undefined:
            for fname, feat in featurizers.items():
                labels = layers(feat.groups) if layers and feat.groups else {"all": None}
                rows += [dict(featurizer=fname, layers=label, task=task, train_acc=math.nan, val_acc=math.nan,
                              pairs=0, seconds=0.0, undefined=undefined[task]) for label in labels]
            continue
        tr, va = {}, {}
        for side in dict.fromkeys(sizes[f] for f in featurizers):  # one rendering per input side
            group = {f: feat for f, feat in featurizers.items() if sizes[f] == side}
            tr |= extract_many(group, *train, task, side, seed=seed, data_key=keys["train"], **common)
            va |= extract_many(group, *val, task, side, seed=seed + 1, data_key=keys["val"], **common)
        for fname in featurizers:
            seconds = tr[fname].seconds + va[fname].seconds
            for label, names in (layers(tr[fname].groups) if layers else {"all": None}).items():
                probe = train_probe(tr[fname], names, weight_decay)
                trained[fname, label, task] = probe
                rows.append(dict(featurizer=fname, layers=label, task=task, train_acc=accuracy(probe, tr[fname]),
                                 val_acc=accuracy(probe, va[fname]), pairs=len(tr[fname]),
                                 seconds=round(seconds, 2), undefined=""))
    order = {f: k for k, f in enumerate(featurizers)}
    table = pd.DataFrame(rows)
    return table.iloc[table.featurizer.map(order).argsort(kind="stable")].reset_index(drop=True), trained


# ----------------------------------------------------------------------------------------- tables and logs
def paper_accuracy(row, table: str = "table1") -> tuple[float, float] | None:
    """The paper's ``(train, val)`` accuracy in % for a row of :func:`run_table`'s table, or None.

    ``table="table1"`` looks up the featurizer and task; ``"table2"`` the layers and task (ResNet-18 only).

    Example
    -------
    >>> import pandas as pd
    >>> row = next(pd.DataFrame([dict(featurizer="ResNet-18", layers="first half", task="hue")]).itertuples())
    >>> paper_accuracy(row), paper_accuracy(row, "table2")
    ((87.6, 71.6), (78.9, 72.9))
    """
    if table == "table1":
        return PAPER_TABLE1.get(row.featurizer, {}).get(row.task)
    check_choice(table, ["table1", "table2"], "paper table")
    return PAPER_TABLE2.get(row.layers, {}).get(row.task) if row.featurizer == "ResNet-18" else None


def log_table(run, table, name: str = "table1") -> None:
    """Log each row's validation and training accuracy in % beside the paper's (:func:`paper_accuracy`).

    Keys: ``table1/<featurizer>/<task>/<val|train>``; ``table2/<featurizer>/<layers>/<task>/<val|train>``.
    An undefined task logs None, with the reason as the note.

    Example
    -------
    >>> from invlib.results import Run
    >>> import pandas as pd
    >>> run = Run("demo", "smoke")
    >>> log_table(run, pd.DataFrame([dict(featurizer="DCT", layers="all", task="zoom_in", train_acc=0.6,
    ...                                   val_acc=0.5, undefined="")]))
    >>> run.metrics["table1/DCT/zoom_in/val"], run.paper["table1/DCT/zoom_in/val"]
    (50.0, 46.6)
    """
    for r in table.itertuples():
        paper = paper_accuracy(r, name) or (None, None)
        key = f"{name}/{r.featurizer}/{r.task}" if name == "table1" else f"{name}/{r.featurizer}/{r.layers}/{r.task}"
        note = f"undefined: {r.undefined}" if r.undefined else ""
        run.log(f"{key}/val", 100 * r.val_acc, paper=paper[1], note=note)
        run.log(f"{key}/train", 100 * r.train_acc, paper=paper[0], note=note)


def side_by_side(table, column: str = "val_acc", name: str = "table1"):
    """This run's accuracy in % with the paper's in brackets: a DataFrame of featurizers (``"table2"``:
    featurizer and layers) x tasks; an undefined task reads "undefined".

    Example
    -------
    >>> import pandas as pd
    >>> side_by_side(pd.DataFrame([dict(featurizer="DCT", layers="all", task="zoom_in", train_acc=0.6,
    ...                                 val_acc=0.5, undefined="")])).loc["DCT", "zoom_in"]
    '50.0 (46.6)'
    """
    import pandas as pd

    which = 0 if column == "train_acc" else 1
    cells = {}
    for r in table.itertuples():
        paper = paper_accuracy(r, name)
        value = getattr(r, column)
        text = "undefined" if math.isnan(value) else f"{100 * value:.1f}"
        row = r.featurizer if name == "table1" else (r.featurizer, r.layers)
        cells.setdefault(row, {})[r.task] = text + (f" ({paper[which]:.1f})" if paper else "")
    return pd.DataFrame(cells).T[[t for t in TASKS if t in set(table.task)]]


def validation(table, layers: str = "all") -> dict:
    """``{(featurizer, task): validation accuracy in %}`` of the rows probing ``layers`` (NaN: undefined).

    Example
    -------
    >>> import pandas as pd
    >>> validation(pd.DataFrame([dict(featurizer="DCT", layers="all", task="hue", val_acc=0.5)]))
    {('DCT', 'hue'): 50.0}
    """
    return {(r.featurizer, r.task): 100 * r.val_acc for r in table[table.layers == layers].itertuples()}


def percent(value: float) -> str:
    """``"71.6%"``, or ``"undefined"`` for NaN (a task the images cannot pose).

    Example
    -------
    >>> percent(71.63), percent(math.nan)
    ('71.6%', 'undefined')
    """
    return "undefined" if math.isnan(value) else f"{value:.1f}%"


# ----------------------------------------------------------------------------------------- claims
def _claim(run, cid: str, claim: str, paper: list[float], ours: list[float], test, criterion: str,
           enough: float = 1.0) -> str:
    """Record a claim made of several comparisons ``test(x)``: reproduced when the share that pass is at least
    ``enough`` (default: all), partly when at least half pass, not measurable when a value is NaN (a task the
    images cannot pose) or there is none. Recorded numbers: the worst (smallest) value when all must pass,
    else "k of n" passing. ``claim/<claim>`` is logged as this run's yes/no beside the paper's."""
    def holds(values):
        return bool(values) and sum(bool(test(x)) for x in values) >= enough * len(values)

    def summary(values):
        return round(min(values), 1) if enough == 1 else f"{sum(bool(test(x)) for x in values)} of {len(values)}"

    run.log(f"claim/{claim}", holds(ours), paper=holds(paper))
    measurable = bool(ours) and not any(math.isnan(x) for x in ours)
    if not measurable:
        criterion += " [not measurable: " + ("a task it needs is undefined on these images]" if ours
                                             else "it needs two backbones]")
    half = sum(bool(test(x)) for x in ours) >= len(ours) / 2
    return run.claim(cid, claim, paper=summary(paper), ours=summary(ours) if measurable else None,
                     criterion=criterion, reproduced=measurable and holds(ours), partly=measurable and half,
                     measurable=measurable)


def record_table1_claims(run, table, backbones: list[str]) -> None:
    """Record the paper's Table 1 claims (sections 5 and 6), with verdicts computed from ``table``.

    ``table``: :func:`run_table`'s, with the baselines of :func:`baselines` and the ``backbones`` rows. Each
    claim compares validation accuracies in %, the paper's ResNet-18 and ResNet-50 against this run's
    ``backbones``; paper and this run are recorded as the worst case of the comparisons (see the criterion).
    Also logs, as before, ``claim/<claim>`` (yes/no) and ``claim/... and the DCT of magnitudes too`` (not a
    claim of the paper: the DCT of magnitudes is this book's second reading of its DCT baseline).

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=acc[1] / 100)
    ...         for f, tasks in PAPER_TABLE1.items() for t, acc in tasks.items()]
    >>> rows += [dict(featurizer="DCT (magnitude)", layers="all", task=t, val_acc=0.5) for t in GEOMETRIC]
    >>> run = Run("demo", "smoke")
    >>> record_table1_claims(run, pd.DataFrame(rows), ["ResNet-18", "ResNet-50"])
    >>> {c["verdict"] for c in run.claims.values()}  # the paper's own numbers reproduce every claim
    {'reproduced'}
    """
    ours, mine = validation(table), list(backbones)
    paper = {(f, t): acc[1] for f, tasks in PAPER_TABLE1.items() for t, acc in tasks.items()}
    theirs = ["ResNet-18", "ResNet-50"]
    easy = ["saturation", "contrast", "brightness"]

    def both(values):  # the same comparison on the paper's numbers and on ours
        return values(paper, theirs), values(ours, mine)

    def beat(base):
        return lambda v, rows: [v[r, t] - v[base, t] for r in rows for t in GEOMETRIC]

    _claim(run, "table1/resnets_beat_dct", "ResNets beat the (signed) DCT on scale and aspect ratio",
           *both(beat("DCT")), lambda x: x > 0,
           "ResNet minus DCT validation accuracy > 0 points for every ResNet on zoom in, zoom out and aspect ratio; "
           "the numbers are the smallest difference (partly: half of the comparisons)")
    magnitude = [ours[r, t] > ours["DCT (magnitude)", t] for r in mine for t in GEOMETRIC]
    run.log("claim/... and the DCT of magnitudes too", all(magnitude))
    _claim(run, "table1/resnets_beat_pixels", "ResNets beat raw pixels on scale and aspect ratio",
           *both(beat("Passthrough")), lambda x: x > 0,
           "ResNet minus passthrough validation accuracy > 0 points for every ResNet on zoom in, zoom out and "
           "aspect ratio; the numbers are the smallest difference (partly: half of the comparisons)")
    _claim(run, "table1/colour_near_100", "Saturation, contrast, brightness near 100% (>= 90%) from ResNet features",
           *both(lambda v, rows: [v[r, t] for r in rows for t in easy]), lambda x: x >= 90,
           "validation accuracy >= 90 % for every ResNet on saturation, contrast and brightness; the numbers are "
           "the lowest (partly: half of them)")
    _claim(run, "table1/contrast_far_above_pixels", "Contrast: ResNets far above raw pixels (> 20 points)",
           *both(lambda v, rows: [v[r, "contrast"] - v["Passthrough", "contrast"] for r in rows]), lambda x: x > 20,
           "ResNet minus passthrough validation accuracy on contrast > 20 points for every ResNet; the numbers are "
           "the smallest difference (partly: for half of the ResNets)")
    _claim(run, "table1/zoom_out_harder", "Zoom-out is harder than zoom-in for the ResNets",
           *both(lambda v, rows: [v[r, "zoom_in"] - v[r, "zoom_out"] for r in rows]), lambda x: x > 0,
           "zoom-in minus zoom-out validation accuracy > 0 points for every ResNet; the numbers are the smallest "
           "difference (partly: for half of the ResNets)")
    _claim(run, "table1/hue_hardest_colour", "Hue is the hardest colour task for the ResNets",
           *both(lambda v, rows: [min(v[r, t] for t in easy) - v[r, "hue"] for r in rows]), lambda x: x > 0,
           "lowest of saturation, contrast, brightness minus hue validation accuracy > 0 points for every ResNet; "
           "the numbers are the smallest difference (partly: for half of the ResNets)")
    _claim(run, "table1/resnet18_at_least_resnet50", "ResNet-18 ranks at least as well as ResNet-50 on most tasks",
           *both(lambda v, rows: [v[rows[0], t] - v[rows[1], t] for t in TASKS] if len(rows) > 1 else []),
           lambda x: x >= 0, f"first ResNet's validation accuracy >= the second's on at least 4 of the {len(TASKS)} "
           "tasks; the numbers count the tasks where it is", enough=4 / len(TASKS))


def record_layer_claims(run, depths, table) -> None:
    """Record section 6.1's claims (Figures 5, 6 and Table 2), with verdicts computed from this run.

    ``depths``: importance-weighted depth per task (rows) and backbone (columns), from :func:`layer_depths`;
    ``table``: :func:`run_table`'s with ``layers=halves``. Table 2's claims use the ResNet-18 row (else the
    first backbone), on the paper's three tasks. Also logs, as before, ``colour_tasks_earlier_than_geometric``
    and ``first_half_at_least_second/<backbone>`` (share of all defined tasks).

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> depths = pd.DataFrame({"ResNet-18": dict(zip(ORDER, [0.1, 0.1, 0.1, 0.5, 0.6, 0.6, 0.6]))})
    >>> rows = [dict(featurizer="ResNet-18", layers=h, task=t, val_acc=acc[1] / 100, train_acc=acc[0] / 100)
    ...         for h, tasks in PAPER_TABLE2.items() for t, acc in tasks.items()]
    >>> run = Run("demo", "smoke")
    >>> record_layer_claims(run, depths, pd.DataFrame(rows))
    >>> {c["id"]: c["verdict"] for c in run.claims.values()}["table2/first_half_at_least_second"]
    'reproduced'
    """
    d = depths.reindex(list(ORDER))
    names = list(d.columns)
    colour, geo = d.loc[list(COLOUR)].mean(skipna=False), d.loc[list(GEOMETRIC)].mean(skipna=False)
    run.log("colour_tasks_earlier_than_geometric", bool((colour < geo).all()), paper=True)
    measurable = not (colour.isna().any() or geo.isna().any() or d.loc["contrast"].isna().any())
    why = "" if measurable else " [not measurable: a task it needs is undefined on these images]"
    gap = geo - colour
    run.claim("fig5_6/colour_earlier", "Colour tasks (brightness, saturation, hue) are read from earlier layers "
              "than scale and aspect ratio", paper="yes (Figures 5, 6)",
              ours={n: f"{colour[n]:.2f} vs {geo[n]:.2f}" for n in names},
              criterion="mean importance-weighted depth (0 = first layer, 1 = last) of the colour tasks < that "
              "of zoom in, zoom out, aspect ratio, for every backbone (partly: for one)" + why,
              reproduced=measurable and bool((gap > 0).all()), partly=measurable and bool((gap > 0).any()),
              measurable=measurable)
    latest = d.loc[list(COLOUR)].max(skipna=False)
    later = d.loc["contrast"] - latest
    run.claim("fig5_6/contrast_later", "Contrast depends more on later layers than the other colour tasks",
              paper="yes (section 5, Figures 5, 6)",
              ours={n: f"{d.loc['contrast', n]:.2f} vs {latest[n]:.2f}" for n in names},
              criterion="importance-weighted depth of contrast > the largest of brightness, saturation and hue, "
              "for every backbone (partly: for one)" + why, reproduced=measurable and bool((later > 0).all()),
              partly=measurable and bool((later > 0).any()), measurable=measurable)
    acc = table.pivot_table(index=["featurizer", "task"], columns="layers", values="val_acc", dropna=False)
    first_wins = (acc["first half"] >= acc["second half"]).astype(float).where(acc["all"].notna())
    for name, share in first_wins.groupby("featurizer").mean().items():
        run.log(f"first_half_at_least_second/{name}", float(share), paper=1.0,
                note="share of tasks; paper: 3 of 3 ResNet-18 tasks")
    row = "ResNet-18" if "ResNet-18" in names else names[0]
    tasks = list(PAPER_TABLE2["all"])
    v = {(h, t): 100 * acc.loc[(row, t), h] for h in PAPER_TABLE2 for t in tasks}
    p = {(h, t): PAPER_TABLE2[h][t][1] for h in PAPER_TABLE2 for t in tasks}
    ok = not any(math.isnan(x) for x in v.values())
    why = "" if ok else " [not measurable: a task it needs is undefined on these images]"
    for cid, claim, wins, enough, criterion in (
            ("table2/first_half_at_least_second", "The first half of the layers ranks at least as well as the "
             "second half", lambda a: sum(a["first half", t] >= a["second half", t] for t in tasks), 3,
             "first half >= second half validation accuracy on all 3 of the paper's tasks (zoom in, aspect ratio, "
             "hue; partly: on 2)"),
            ("table2/first_half_beats_all", "On some tasks the first half alone ranks better than all layers",
             lambda a: sum(a["first half", t] > a["all", t] for t in tasks), 1,
             "first half > all layers validation accuracy on at least 1 of the paper's 3 tasks (zoom in, aspect "
             "ratio, hue)")):
        run.claim(cid, claim, paper=f"{wins(p)} of 3 (ResNet-18)", ours=f"{wins(v)} of 3 ({row})" if ok else None,
                  criterion=criterion + why, reproduced=ok and wins(v) >= enough, partly=ok and wins(v) >= 2,
                  measurable=ok)


def table1_readings(table, backbones: list[str]) -> dict[str, str]:
    """The numbers the prose of chapter A1 quotes, as text (:func:`percent`; "undefined" for a task the
    images cannot pose): the best hue accuracy and its reading, passthrough on zoom-out, contrast and
    saturation, the first backbone on saturation.

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=0.5) for f in ("Passthrough", "R") for t in TASKS]
    >>> table1_readings(pd.DataFrame(rows), ["R"])["hue_verdict"]
    'at chance'
    """
    v = validation(table)
    hue = max((v[f, "hue"] for f in table.featurizer.unique()), default=math.nan)
    verdict = "undefined on these images" if math.isnan(hue) else "at chance" if hue < 60 else "above chance"
    return dict(hue_verdict=verdict, hue_best=percent(hue), zo_pass=percent(v["Passthrough", "zoom_out"]),
                con_pass=percent(v["Passthrough", "contrast"]), sat_pass=percent(v["Passthrough", "saturation"]),
                sat_r18=percent(v[backbones[0], "saturation"]))


# ----------------------------------------------------------------------------------------- figures and layers
def task_table():
    """The seven tasks: sampled range and what is ranked, a DataFrame indexed by task.

    Example
    -------
    >>> task_table().loc["zoom_out", "range"]
    '[0.1, s]'
    """
    import pandas as pd

    return pd.DataFrame([dict(task=t.name, range=f"[{t.low:g}, {'s' if math.isnan(t.high) else f'{t.high:g}'}]",
                              ranked=t.value) for t in TASKS.values()]).set_index("task")


def figure2(images: torch.Tensor, boxes: torch.Tensor, size: int, seed: int = 0, k: int = 6):
    """The paper's Figure 2: one image under every task, ``k`` views each sorted by the ranked value.

    The image is the one of the first 64 of ``images`` ``(N, C, H, W)`` with most room to zoom out.

    Example
    -------
    >>> x, b = torch.randint(0, 255, (2, 3, 32, 32), dtype=torch.uint8), torch.tensor([[8.0, 8, 24, 24]] * 2)
    >>> len(figure2(x, b, 16, k=3).axes)
    21
    """
    from . import plots

    example = int(torch.argmax(zoom_out_slack(boxes[:64], images.shape[-2:])))
    rows, titles = [], []
    for task in TASKS:
        views, values = ladder(images[example], boxes[example], task, size, k=k, seed=seed)
        rows.append(views)
        titles += [f"{task} {v:.2f}" for v in values.tolist()]
    return plots.image_grid(torch.cat(rows), titles, ncols=k, suptitle="Figure 2: views ordered by the ranked value")


def figure3(images: torch.Tensor, boxes: torch.Tensor, size: int):
    """The paper's Figure 3: mean 8x8 block-DCT magnitudes of the objects at three scales (zoomed out as far as
    the image allows, at the box, zoomed in by half), as maps and as curves in zig-zag order.

    Returns ``(figure, {scale: share})``: per scale, the mean magnitude of the upper 32 AC coefficients over
    that of all 63.

    Example
    -------
    >>> x, b = torch.randint(0, 255, (4, 3, 32, 32), dtype=torch.uint8), torch.tensor([[8.0, 8, 24, 24]] * 4)
    >>> fig, high = figure3(x, b, 16)
    >>> list(high)
    ['small (zoom-out, m = s)', 'box', 'large (zoom-in, t = 0.5)']
    """
    import matplotlib.pyplot as plt

    hw = images.shape[-2:]
    scales = {"small (zoom-out, m = s)": crops_for("zoom_out", boxes, hw, zoom_out_slack(boxes, hw))[0],
              "box": crops_for("zoom_in", boxes, hw, torch.zeros(len(boxes)))[0],
              "large (zoom-in, t = 0.5)": crops_for("zoom_in", boxes, hw, torch.full((len(boxes),), 0.5))[0]}
    dct = {name: block_dct(render(images, crops[:, None], size, "zoom_in")).mean((0, 1))
           for name, crops in scales.items()}
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.4), gridspec_kw=dict(width_ratios=[1, 1, 1, 1.8]),
                             layout="constrained")
    inverse = torch.argsort(zigzag(8))  # zig-zag position -> 8x8 cell
    vmax = max(float(v.log10().max()) for v in dct.values())
    for ax, (name, coef) in zip(axes, dct.items()):
        im = ax.imshow(coef[inverse].view(8, 8).log10().numpy(), vmin=vmax - 3, vmax=vmax, cmap="magma")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
        axes[-1].semilogy(coef.numpy(), label=name)
    fig.colorbar(im, ax=axes[2], fraction=0.05, label="log10 mean |coefficient|")
    axes[-1].set_xlabel("coefficient, zig-zag order")
    axes[-1].legend(fontsize=8)
    fig.suptitle("Figure 3: 8x8 block DCT magnitude at three object scales")
    return fig, {name: float(coef[32:].mean() / coef[1:].mean()) for name, coef in dct.items()}


def table1_bars(table):
    """Table 1 as bars: validation accuracy per task and featurizer, the paper's as black ticks.

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, task=t, val_acc=0.7) for f in ("DCT", "R") for t in TASKS]
    >>> len(table1_bars(pd.DataFrame(rows)).axes[0].patches)
    14
    """
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(table.featurizer.unique())
    val = table.pivot_table(index="task", columns="featurizer", values="val_acc", dropna=False).reindex(
        index=list(TASKS), columns=names)
    fig, ax = plt.subplots(figsize=(11, 3.6))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        x = np.arange(len(val)) + (k - len(names) / 2 + 0.5) * width
        ax.bar(x, 100 * val[name], width, label=name)
        paper = [PAPER_TABLE1.get(name, {}).get(t, (None, np.nan))[1] for t in val.index]
        ax.scatter(x, paper, marker="_", s=120, color="black", zorder=3, label="paper" if k == 0 else None)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(val)), val.index)
    ax.set_ylabel("validation accuracy %")
    ax.set_ylim(30, 102)
    ax.legend(ncols=len(names) + 1, fontsize=8, loc="lower left")
    ax.set_title("Table 1 as bars: this run (bars) and the paper (black ticks)")
    return fig


def layer_importance(trained: dict, names: list[str], tasks=ORDER) -> dict:
    """``{(backbone, "mean" | "max"): DataFrame tasks x layers}`` of :func:`importance` (each row sums to 1),
    from :func:`run_table`'s probes on all layers; tasks without a probe (undefined) are left out.

    Example
    -------
    >>> p = Probe(torch.tensor([1.0, 3.0, 4.0]), torch.ones(3), torch.arange(3), [("a", 2), ("b", 1)], 0.0)
    >>> layer_importance({("R", "all", "hue"): p}, ["R"])["R", "mean"].round(2).to_dict("index")
    {'hue': {'a': 0.33, 'b': 0.67}}
    """
    import pandas as pd

    out = {}
    for name in names:
        per_task = {t: importance(trained[name, "all", t]) for t in tasks if (name, "all", t) in trained}
        for agg in ("mean", "max"):
            out[name, agg] = pd.DataFrame({t: imp[agg] for t, imp in per_task.items()}).T
    return out


def layer_depths(maps: dict, names: list[str]):
    """``(depths, first_block)``: per task (rows) and backbone (columns), the importance-weighted depth
    (:func:`depth`, 0 = first layer) and the share of the stem and first stage, from the "mean" maps of
    :func:`layer_importance`.

    Example
    -------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"stem.0": [0.5], "layer1.0": [0.25], "layer2.0": [0.25]}, index=["hue"])
    >>> depths, first = layer_depths({("R", "mean"): m}, ["R"])
    >>> float(depths.loc["hue", "R"]), float(first.loc["hue", "R"])
    (0.375, 0.75)
    """
    import pandas as pd

    depths = pd.DataFrame({n: {t: depth(row) for t, row in maps[n, "mean"].iterrows()} for n in names})
    first = {}
    for n in names:
        m = maps[n, "mean"]
        first[n] = m[[c for c in m.columns if c.split(".")[0] in ("stem", "conv1", "bn1", "layer1")]].sum(axis=1)
    return depths, pd.DataFrame(first)


def log_layers(run, maps: dict, depths, first_block) -> None:
    """Log ``importance/<backbone>/<task>/<mean|max>`` (layer -> share), ``depth/<backbone>/<task>`` and
    ``first_block/<backbone>/<task>``.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> m = pd.DataFrame({"stem.0": [0.5], "layer2.0": [0.5]}, index=["hue"])
    >>> run = Run("demo", "smoke")
    >>> log_layers(run, {("R", "mean"): m}, *layer_depths({("R", "mean"): m}, ["R"]))
    >>> run.metrics["depth/R/hue"], run.metrics["importance/R/hue/mean"]
    (0.5, {'stem.0': 0.5, 'layer2.0': 0.5})
    """
    for (name, agg), m in maps.items():
        for t in m.index:
            run.log(f"importance/{name}/{t}/{agg}", m.loc[t].round(5).to_dict())
    for name in depths.columns:
        for t in depths.index:
            run.log(f"depth/{name}/{t}", depths.loc[t, name])
            run.log(f"first_block/{name}/{t}", float(first_block.loc[t, name]))


def bar_panels(frames: dict, xlim: dict | None = None, figsize=(11, 3.2)):
    """One horizontal bar chart per ``{title: DataFrame}``, side by side (rows top-down, a bar per column);
    ``xlim``: ``{title: (low, high)}``.

    Example
    -------
    >>> import pandas as pd
    >>> len(bar_panels({"a": pd.DataFrame({"x": [1, 2]}), "b": pd.DataFrame({"y": [3, 4]})}).axes)
    2
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(frames), figsize=figsize)
    for ax, (title, frame) in zip(axes, frames.items()):
        frame.plot.barh(ax=ax, title=title, xlim=(xlim or {}).get(title))
        ax.invert_yaxis()
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig

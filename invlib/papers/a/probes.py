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
-> :func:`train_probe` -> :func:`accuracy`, :func:`importance`, :func:`halves`. The chapters A1 and A2 run it
through :mod:`invlib.papers.a.tables` (their settings, images and :func:`~invlib.papers.a.tables.run_table`) and
record the paper's claims with :mod:`invlib.papers.a.probes_reports`.

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

from ... import streaming, transforms
from ...linear import fit_logistic
from ...models import weights_key
from ...streaming import batches
from ...utils import cached_many, check_choice, check_images, digest, resolve_device
from ...utils import progress as bar_of

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
    """Centre ``(N, C, H, W)`` uint8 images on a black canvas ``factor`` times larger; shift the boxes. Images on
    disk (:class:`invlib.streaming.ImageFiles`) stay there and get their margin as they are decoded.

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
    if streaming.is_lazy(images):  # on disk: each image gets its margin as it is decoded
        if h != w or images.margin != 1:
            raise ValueError("add_margin on images from disk needs square images without a margin yet.")
        return images.with_margin(factor), boxes + torch.tensor([left, top, left, top], dtype=boxes.dtype)
    out = images.new_zeros((n, c, big_h, big_w))
    out[:, :, top:top + h, left:left + w] = images
    return out, boxes + torch.tensor([left, top, left, top], dtype=boxes.dtype)


def textured_background(images: torch.Tensor, seed: int = 0, threshold: int = 8) -> torch.Tensor:
    """Fill the black background of ``(N, 3, H, W)`` uint8 images (every pixel whose channels are all at most
    ``threshold``) with a random texture: a smooth colour field (4 x 4 random colours, bicubic) mixed 3:2 with pixel
    noise, at a random brightness per image (30-100 %). Returns a new ``(N, 3, H, W)`` uint8 tensor.

    Garments on black (Fashion-MNIST, a black canvas) let raw pixels rank zoom-out (the number of lit pixels
    measures how much of the view the object fills) and contrast (lowering it lifts the whole background towards
    the mean grey): both are linear in the pixels, which the paper's photographs are not (its passthrough ranks
    them 46-62 % right). A background of varying colour and brightness takes that handle away, as a photograph's
    does; the object and its box stay as they were.

    Example
    -------
    >>> im = torch.zeros(2, 3, 8, 8, dtype=torch.uint8)
    >>> im[:, :, 2:6, 2:6] = 200
    >>> out = textured_background(im, seed=0)
    >>> bool((out[:, :, 2:6, 2:6] == 200).all()), bool((out[:, :, :2] > 0).any()), out.dtype
    (True, True, torch.uint8)
    """
    if streaming.is_lazy(images):
        raise ValueError("textured_background needs images in memory; images read from disk have their own "
                         "background (use background='as_is').")
    if images.ndim != 4 or images.shape[1] != 3 or images.dtype != torch.uint8:
        raise ValueError(f"textured_background takes (N, 3, H, W) uint8 images; got {tuple(images.shape)} "
                         f"{images.dtype}.")
    n, _, h, w = images.shape
    g = torch.Generator().manual_seed(seed)
    smooth = nn.functional.interpolate(torch.rand(n, 3, 4, 4, generator=g), size=(h, w), mode="bicubic",
                                       align_corners=False)
    texture = 0.6 * smooth.clamp(0, 1) + 0.4 * torch.rand(n, 3, h, w, generator=g)
    texture = texture * (0.3 + 0.7 * torch.rand(n, 1, 1, 1, generator=g))
    background = images.amax(1, keepdim=True) <= threshold
    return torch.where(background, (texture * 255).round().to(torch.uint8), images)


BACKGROUNDS = ("auto", "as_is", "texture")
ON_BLACK = ("fashion_mnist", "fashion_mnist_color")  # datasets whose objects sit on black (background "auto": texture)


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
    from ...models import probe_layers

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
        self.key = "backbone-" + digest(type(model).__name__, self.layers, weights_key(model))
        self.groups = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        from ...models import features

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
        cache: read/write ``<cache>/probes/<kind>-<task>-<hash>-v<CACHE_VERSION>.pt`` (:func:`cache_name`) through
            :func:`invlib.utils.cached_many` (keyed by featurizer weights, images, boxes, task, size, seed).
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
    names = {name: cache_name(f, task, digest(f.key, data_key, task, size, seed)) for name, f in featurizers.items()}
    made, t0, t_make = {}, time.perf_counter(), None

    def make(missing):  # one pass over the views for every featurizer not cached yet
        nonlocal t_make
        t_make = time.perf_counter()
        made.update(_extract({name: featurizers[name] for name in missing}, images, boxes, task, size, seed,
                             batch_size, resolve_device(device), progress))
        return {name: vars(made[name]) for name in missing}

    saved = cached_many("probes", names, make, version=CACHE_VERSION, disk=cache, weights_only=True)
    read = [name for name in featurizers if name not in made]  # their seconds: a share of reading the cache
    seconds = ((t_make or time.perf_counter()) - t0) / max(1, len(read))
    for name in read:
        featurizers[name].groups = featurizers[name].groups or saved[name]["groups"]
        made[name] = Features(**{**saved[name], "seconds": seconds})
    return {name: made[name] for name in featurizers}


def cache_name(featurizer, task: str, key: str) -> str:
    """The features' file name under ``<cache>/probes``: the featurizer's kind (the head of its ``key``), the task and
    ``key``, never its label, so that one backbone under two labels (chapter A1's "ResNet-18" and chapter A2's
    "trained, standard augmentation") is extracted once.

    Example
    -------
    >>> cache_name(DCT(), "hue", "0123"), cache_name(Passthrough(), "hue", "0123")
    ('dct8-hue-0123', 'passthrough-hue-0123')
    """
    return f"{featurizer.key.split('-')[0]}-{task}-{key}"


def _extract(featurizers: dict, images, boxes, task, size, seed, batch_size, device, progress) -> dict:
    t0 = time.perf_counter()
    views = sample(task, boxes, images.shape[-2:], seed)
    idx = views.keep.nonzero().flatten()
    diffs = {name: [] for name in featurizers}
    total, total_sq, seconds = dict.fromkeys(featurizers, 0.0), dict.fromkeys(featurizers, 0.0), {}
    pairs = max(1, batch_size // 2)
    steps = range(0, len(idx), pairs)
    steps = bar_of(steps, progress, f"{'+'.join(f.name for f in featurizers.values())}/{task}")
    for start, source in zip(steps, batches(images, pairs, idx, device)):  # decoded by workers when on disk
        i = idx[start:start + pairs]
        mags = None if views.magnitudes is None else views.magnitudes[i].to(device)
        x = render(source.to(device), views.crops[i].to(device), size, task, mags)
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
    """Train ``w`` by full-batch L-BFGS on the pairwise logistic loss plus ``weight_decay / 2 |w|^2``
    (:func:`invlib.linear.fit_logistic`, binary, no bias).

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
    w, _ = fit_logistic(x, y, 0.5 * weight_decay, max_iter=max_iter, tolerance_grad=1e-6)
    groups = [(n, d) for n, d in train.groups if layers is None or n in layers]
    return Probe(w, std, cols, groups, weight_decay)


def correct(probe: Probe, feats: Features) -> torch.Tensor:
    """``(N,)`` bool: whether the probe orders each pair of ``feats`` right (ties count as wrong). These are the
    evaluation items a claim about one given backbone resamples (:func:`invlib.results.bootstrap_interval`).

    Example
    -------
    >>> f = Features(torch.tensor([[1.0], [-2.0]]), torch.tensor([1.0, 1.0]), torch.zeros(2, 2), torch.ones(1),
    ...              [("x", 1)])
    >>> correct(Probe(torch.ones(1), torch.ones(1), torch.arange(1), [("x", 1)], 0.0), f).tolist()
    [True, False]
    """
    return torch.sign(probe.scores(feats)) == feats.labels


def accuracy(probe: Probe, feats: Features) -> float:
    """Fraction of pairs whose order the probe gets right (ties count as wrong): the mean of :func:`correct`.

    Example
    -------
    >>> f = Features(torch.tensor([[1.0], [-2.0]]), torch.tensor([1.0, 1.0]), torch.zeros(2, 2), torch.ones(1),
    ...              [("x", 1)])
    >>> accuracy(Probe(torch.ones(1), torch.ones(1), torch.arange(1), [("x", 1)], 0.0), f)
    0.5
    """
    return float(correct(probe, feats).float().mean())


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


def fold_depths(train: Features, folds: int, weight_decay: float = 1e-3) -> tuple[float, ...]:
    """The importance-weighted :func:`depth` (mean over channels) of ``folds`` probes on all layers, each trained on
    one disjoint share of the training pairs (rows ``k, k + folds, k + 2 folds, ...``): independent replicates of
    where a given backbone's probe puts its weight, for an interval over them. The features keep the scale of
    all training views (``train.std``), so each fold's importance is on the same footing as the full probe's.

    Example
    -------
    >>> f = Features(torch.randn(300, 4), torch.ones(300), torch.zeros(300, 2), torch.ones(4), [("a", 2), ("b", 2)])
    >>> f.labels = torch.sign(f.diff[:, 3])  # only layer "b" ranks the pairs
    >>> depths = fold_depths(f, 3)
    >>> len(depths), all(d > 0.8 for d in depths)  # depth 1 is the last layer
    (3, True)
    """
    if folds < 2 or folds > len(train):
        raise ValueError(f"fold_depths needs 2 <= folds <= {len(train)} training pairs, got {folds}")
    out = []
    for k in range(folds):
        rows = torch.arange(k, len(train), folds)
        part = Features(train.diff[rows], train.labels[rows], train.values[rows], train.std, train.groups)
        out.append(depth(importance(train_probe(part, weight_decay=weight_decay))["mean"]))
    return tuple(out)


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


# ----------------------------------------------------------------------------------------- tasks the images pose
def undefined_tasks(images: torch.Tensor) -> dict[str, str]:
    """The tasks that ``images`` ``(N, C, H, W)`` cannot pose, each with the reason.

    Hue and saturation leave a greyscale image (one channel, or all channels equal) unchanged: both views of
    a pair are the same image and no probe can rank them. :func:`invlib.papers.a.tables.run_table` reports such a
    task as undefined (accuracy NaN), not as a score of 0 %.

    Example
    -------
    >>> grey = torch.randint(0, 255, (4, 1, 8, 8), dtype=torch.uint8).expand(4, 3, 8, 8)
    >>> sorted(undefined_tasks(grey)), undefined_tasks(torch.rand(4, 3, 8, 8))
    (['hue', 'saturation'], {})
    """
    grey = images.shape[1] == 1 or all(bool((b == b[:, :1]).all()) for b in batches(images, 4096))
    why = "greyscale images (hue and saturation leave them unchanged)"
    return {t: why for t in TASKS if TASKS[t].op in ("hue", "saturation")} if grey else {}

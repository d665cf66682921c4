"""One model factory over timm, torchvision and our small nets; layer listing and feature extraction.

Our CPU-sized nets are registered in timm's registry, so ``timm.create_model("small_resnet18")`` works
too and a single factory, :func:`create`, serves every name:

| name             | what                                                                   |
|------------------|------------------------------------------------------------------------|
| small_resnet18   | CIFAR-style ResNet, BasicBlocks [2, 2, 2, 2], widths 16-128 (0.7M)     |
| small_resnet18_s2| the same with a stride-2 stem, for 48-64 px scenes (56 px costs 28 px) |
| small_resnet18_s4| the same with torchvision's stem (stride 2, max-pool): 56 px at 2.3x the speed |
| small_resnet50   | CIFAR-style ResNet, Bottlenecks [3, 4, 6, 3], widths 16-128 x4 (1.5M)  |
| small_resnet50_s2| the same with a stride-2 stem (28 px at about a quarter of the cost)   |
| small_vit        | timm VisionTransformer, patch 7, dim 128, depth 4, 4 heads (0.6M)      |
| small_vit_p14    | the same with 14 px patches, for 48-64 px scenes (56 px costs 28 px)    |
| small_vit_p14_cls| small_vit_p14 with a class token: its embedding is the LayerNorm'd CLS  |
| conv4            | AugNet's Table 1 trunk: 4 conv-BN-ReLU (32-256), 3 max-pools, max, FC  |
| signal_cnn       | AugNet's Table 2 trunk for 1-D signals ``(B, C, T)``: 2 convs, pool, FC |
| signal_mlp       | an MLP over a flattened signal, ``width`` x ``depth`` hidden units      |
| any timm name    | e.g. ``resnet18``, ``vit_small_patch16_224``                            |
| ``tv/<name>``    | a torchvision model, e.g. ``tv/resnet18`` (bare names timm lacks work) |

All models take images in [0, 1]; hub-pretrained ones get their normalisation as a forward pre-hook.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import itertools
import math
import os
import weakref
from pathlib import Path

import timm
import torch
import torchvision
from timm.models import register_model
from timm.models.vision_transformer import VisionTransformer
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

from .streaming import batches
from .utils import check_choice, check_images, digest, is_online, seeded

OURS = ("small_resnet18", "small_resnet18_s2", "small_resnet18_s4", "small_resnet50", "small_resnet50_s2", "small_vit",
        "small_vit_p14", "small_vit_p14_cls", "conv4")
SIGNAL_NETS = ("signal_cnn", "signal_mlp")
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
# Images per forward pass of batched() (and so of train.evaluate) by device type when none is asked for: 128 on CPU,
# where a batch's activations then stay in cache (2-3x the images/s of batch 1024, the same logits:
# benchmarks/measurements/foundation.md); 1024 on CUDA.
EVAL_BATCH = {"cpu": 128, "cuda": 1024}


class PretrainedUnavailableError(RuntimeError):
    """Pretrained weights were asked for but cannot be had (offline, or none exist)."""


class CheckpointError(RuntimeError):
    """A weights file is missing, corrupt, or does not fit the model."""


# ----------------------------------------------------------------------------- small CIFAR-style ResNets
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, width: int, stride: int = 1):
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
        )
        self.shortcut = _shortcut(cin, cout, stride)

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1):
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )
        self.shortcut = _shortcut(cin, cout, stride)

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


def _shortcut(cin: int, cout: int, stride: int) -> nn.Module:
    if stride == 1 and cin == cout:
        return nn.Identity()
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


class SmallResNet(nn.Module):
    """ResNet for 28-64 px inputs: 3x3 stem (stride ``stem_stride``: 1 for 28-32 px, 2 for canvases of 48-64 px,
    which then cost what 28 px cost at stride 1, as ImageNet ResNets downsample early), no max-pool, four stages
    (strides 1, 2, 2, 2),
    global average pooling and a linear head. Follows timm's model interface (``num_features``,
    ``feature_info``, ``forward_features``, ``forward_head``, ``get_classifier``, ``reset_classifier``).

    Input ``(B, in_chans, H, W)`` -> logits ``(B, num_classes)``.
    """

    def __init__(self, block, layers, widths=(16, 32, 64, 128), num_classes=10, in_chans=3, drop_rate=0.0,
                 stem_stride: int = 1, stem_pool: bool = False):
        super().__init__()
        self.num_classes, self.drop_rate = num_classes, drop_rate
        self.stem = nn.Sequential(
            nn.Conv2d(in_chans, widths[0], 3, stem_stride, 1, bias=False), nn.BatchNorm2d(widths[0]),
            nn.ReLU(inplace=True), *([nn.MaxPool2d(3, 2, 1)] if stem_pool else [])
        )
        stem_stride *= 2 if stem_pool else 1
        cin, self.feature_info = widths[0], []
        for i, (n, w) in enumerate(zip(layers, widths)):
            stride = 1 if i == 0 else 2
            blocks = [block(cin if j == 0 else w * block.expansion, w, stride if j == 0 else 1) for j in range(n)]
            self.add_module(f"layer{i + 1}", nn.Sequential(*blocks))
            cin = w * block.expansion
            self.feature_info.append(dict(num_chs=cin, reduction=stem_stride * 2**i, module=f"layer{i + 1}"))
        self.num_features = cin
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes) if num_classes else nn.Identity()
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, Bottleneck):  # 16 bottlenecks diverge at lr 0.1 unless each starts as identity
                nn.init.zeros_(m.body[-1].weight)
        # (BasicBlocks keep the default: zero-init slows the first hundred steps of small-batch CPU training a lot;
        # both: benchmarks/measurements/foundation.md)

    def get_classifier(self) -> nn.Module:
        return self.fc

    def reset_classifier(self, num_classes: int, global_pool: str | None = None) -> None:
        self.num_classes = num_classes
        self.fc = nn.Linear(self.num_features, num_classes) if num_classes else nn.Identity()

    def forward_features(self, x):
        x = self.stem(x)
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))

    def forward_head(self, x, pre_logits: bool = False):
        x = self.global_pool(x).flatten(1)
        x = nn.functional.dropout(x, self.drop_rate, self.training)
        return x if pre_logits else self.fc(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def _ours(model: nn.Module, name: str, in_chans: int, pretrained: bool) -> nn.Module:
    if pretrained:
        raise PretrainedUnavailableError(
            f"{name!r} has no hub weights: train it with invlib.zoo (python -m invlib zoo train) "
            "or pass pretrained='path/to/weights.pt'."
        )
    model.pretrained_cfg = dict(architecture=name, mean=(0.0,) * in_chans, std=(1.0,) * in_chans, num_classes=0)
    return model


def _drop_timm_args(kwargs: dict) -> dict:
    """timm's factory passes these to every entry point; ResNets have no use for ``img_size``."""
    for key in ("pretrained_cfg", "pretrained_cfg_overlay", "cache_dir", "img_size"):
        kwargs.pop(key, None)
    return kwargs


@register_model
def small_resnet18(pretrained=False, num_classes=10, in_chans=3, **kwargs):
    """CIFAR-style ResNet-18 shape (BasicBlock [2, 2, 2, 2]) with widths (16, 32, 64, 128)."""
    kwargs = _drop_timm_args(kwargs)
    net = SmallResNet(BasicBlock, (2, 2, 2, 2), num_classes=num_classes, in_chans=in_chans, **kwargs)
    return _ours(net, "small_resnet18", in_chans, pretrained)


@register_model
def small_resnet50(pretrained=False, num_classes=10, in_chans=3, **kwargs):
    """CIFAR-style ResNet-50 shape (Bottleneck [3, 4, 6, 3], expansion 4) with widths (16, 32, 64, 128)."""
    kwargs = _drop_timm_args(kwargs)
    net = SmallResNet(Bottleneck, (3, 4, 6, 3), num_classes=num_classes, in_chans=in_chans, **kwargs)
    return _ours(net, "small_resnet50", in_chans, pretrained)


@register_model
def small_resnet50_s2(pretrained=False, num_classes=10, in_chans=3, **kwargs):
    """:func:`small_resnet50` with a stride-2 stem, as :func:`small_resnet18_s2` is to :func:`small_resnet18`: its
    first stage sees half the side (14 px of a 28 px image), so every stage costs about a quarter."""
    kwargs = _drop_timm_args(kwargs)
    net = SmallResNet(Bottleneck, (3, 4, 6, 3), num_classes=num_classes, in_chans=in_chans, stem_stride=2, **kwargs)
    return _ours(net, "small_resnet50_s2", in_chans, pretrained)


@register_model
def small_resnet18_s2(pretrained=False, num_classes=10, in_chans=3, **kwargs):
    """:func:`small_resnet18` with a stride-2 stem, for 48-64 px images (``scenes``): a 56 px image costs what a
    28 px one costs :func:`small_resnet18`."""
    kwargs = _drop_timm_args(kwargs)
    net = SmallResNet(BasicBlock, (2, 2, 2, 2), num_classes=num_classes, in_chans=in_chans, stem_stride=2, **kwargs)
    return _ours(net, "small_resnet18_s2", in_chans, pretrained)


@register_model
def small_resnet18_s4(pretrained=False, num_classes=10, in_chans=3, **kwargs):
    """:func:`small_resnet18` with torchvision's ResNet stem: a stride-2 convolution then a 3x3 max-pool of stride
    2, so the first stage sees a quarter of the side (14 px of a 56 px scene, as ImageNet's ResNet-18 sees 56 of
    224). At 56 px it trains and evaluates faster than :func:`small_resnet18_s2` and :func:`small_resnet18` at
    28 px (``benchmarks/measurements/foundation.md``)."""
    kwargs = _drop_timm_args(kwargs)
    net = SmallResNet(BasicBlock, (2, 2, 2, 2), num_classes=num_classes, in_chans=in_chans, stem_stride=2,
                      stem_pool=True, **kwargs)
    return _ours(net, "small_resnet18_s4", in_chans, pretrained)


@register_model
def small_vit(pretrained=False, num_classes=10, in_chans=3, img_size=28, **kwargs):
    """A small ViT through timm's VisionTransformer: patch 7 (16 tokens at 28 px), width 128, depth 4, 4 heads,
    global-average pooling. Patch 7 beat patch 4 / width 96 here on speed (1400 vs 750 img/s) and on
    Fashion-MNIST accuracy after the same CPU budget.

    It takes images of any side, as the ResNets do: the position embeddings (a grid of ``ceil(img_size / 7)``
    patches a side) are resampled to the input's grid, and a side that 7 does not divide is zero-padded on the
    right and bottom to the next multiple (timm's ``dynamic_img_pad``). A side that 7 divides, such as 28, is
    untouched, so those models, their weights and their outputs are the same as without padding."""
    return _small_vit("small_vit", 7, pretrained, num_classes, in_chans, img_size, kwargs)


@register_model
def small_vit_p14(pretrained=False, num_classes=10, in_chans=3, img_size=56, **kwargs):
    """:func:`small_vit` with patches of 14 px, for 48-64 px scenes: 16 tokens at 56 px, as small_vit has at 28, so
    a 56 px scene costs about what a 28 px image costs :func:`small_vit`."""
    return _small_vit("small_vit_p14", 14, pretrained, num_classes, in_chans, img_size, kwargs)


@register_model
def small_vit_p14_cls(pretrained=False, num_classes=10, in_chans=3, img_size=56, **kwargs):
    """:func:`small_vit_p14` with a class token that the head reads (timm's ``class_token=True,
    global_pool="token"``), as ViT-B/16 and ViT-L/16 do: its penultimate output (``forward_head(...,
    pre_logits=True)``) is the LayerNorm'd CLS token, the embedding paper B's authors measure. ``small_vit`` and
    ``small_vit_p14`` average the patch tokens instead.

    Example
    -------
    >>> net = small_vit_p14_cls().eval()
    >>> z = net.forward_head(net.forward_features(torch.rand(2, 3, 56, 56)), pre_logits=True)
    >>> net.cls_token.shape, net.global_pool, z.shape
    (torch.Size([1, 1, 128]), 'token', torch.Size([2, 128]))
    """
    kwargs = {"class_token": True, "global_pool": "token", **kwargs}
    return _small_vit("small_vit_p14_cls", 14, pretrained, num_classes, in_chans, img_size, kwargs)


def _small_vit(name, patch, pretrained, num_classes, in_chans, img_size, kwargs):
    kwargs = _drop_timm_args(kwargs)
    args = dict(patch_size=patch, embed_dim=128, depth=4, num_heads=4, mlp_ratio=2.0, global_pool="avg",
                class_token=False, dynamic_img_size=True, dynamic_img_pad=True)
    net = VisionTransformer(img_size=img_size, num_classes=num_classes, in_chans=in_chans, **{**args, **kwargs})
    return _ours(net, name, in_chans, pretrained)


def _conv_bn(conv, cin: int, cout: int, kernel: int = 3) -> list[nn.Module]:
    norm = nn.BatchNorm2d if conv is nn.Conv2d else nn.BatchNorm1d
    return [conv(cin, cout, kernel, 1, 1, bias=False), norm(cout), nn.ReLU(inplace=True)]


class _Trunk(nn.Module):
    """``features`` then ``pool`` (a global pool to ``(B, C, 1...)``) then a linear ``fc``."""

    def __init__(self, features: nn.Module, pool: nn.Module, width: int, num_classes: int):
        super().__init__()
        self.features, self.pool, self.num_features = features, pool, width
        self.fc = nn.Linear(width, num_classes) if num_classes else nn.Identity()

    def get_classifier(self) -> nn.Module:
        return self.fc

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


@register_model
def conv4(pretrained=False, num_classes=10, in_chans=3, widths=(32, 64, 128, 256), **kwargs):
    """AugNet's Table 1 trunk (sprites): conv3x3-BN-ReLU x4 with a 2x max-pool after convs 2-4, a global
    max-pool (the paper's "MaxPool 4" on 32 px) and a linear head. ``widths`` scales it for the CPU."""
    _drop_timm_args(kwargs)
    layers, cin = [], in_chans
    for i, w in enumerate(widths):
        layers += _conv_bn(nn.Conv2d, cin, w) + ([nn.MaxPool2d(2)] if i > 0 else [])
        cin = w
    net = _Trunk(nn.Sequential(*layers), nn.AdaptiveMaxPool2d(1), cin, num_classes)
    return _ours(net, "conv4", in_chans, pretrained)


@register_model
def signal_cnn(pretrained=False, num_classes=4, in_chans=1, widths=(2, 2), first_kernel=100, **kwargs):
    """AugNet's Table 2 trunk for signals ``(B, C, T)``: two conv-BN-ReLU, a 2x max-pool, global average
    pooling and a linear head. The first convolution is ``first_kernel`` samples wide: the authors' code
    uses two periods of the slowest class (2 x 0.5 s x 100 Hz = 100 samples); the paper's Table 2 prints 3.
    2 filters per conv, as the paper: 232 parameters for 4 classes (38 with ``first_kernel=3``)."""
    _drop_timm_args(kwargs)
    layers = (_conv_bn(nn.Conv1d, in_chans, widths[0], first_kernel) + _conv_bn(nn.Conv1d, widths[0], widths[1])
              + [nn.MaxPool1d(2)])
    net = _Trunk(nn.Sequential(*layers), nn.AdaptiveAvgPool1d(1), widths[1], num_classes)
    return _ours(net, "signal_cnn", in_chans, pretrained)


@register_model
def signal_mlp(pretrained=False, num_classes=4, in_chans=1, length=1000, width=16, depth=1, **kwargs):
    """An MLP over the flattened signal ``(B, C, T)``: ``depth`` hidden layers of ``width`` ReLU units."""
    _drop_timm_args(kwargs)
    layers, cin = [nn.Flatten()], in_chans * length
    for _ in range(depth):
        layers += [nn.Linear(cin, width), nn.ReLU(inplace=True)]
        cin = width
    net = _Trunk(nn.Sequential(*layers), nn.Identity(), cin, num_classes)
    return _ours(net, "signal_mlp", in_chans, pretrained)


# ----------------------------------------------------------------------------- the factory
def available(kind: str | None = None) -> list[str]:
    """Our registered small nets (``kind``: ``"image"`` or ``"signal"``, default both); besides these, any
    timm name and any ``tv/<torchvision name>`` works.

    Example
    -------
    >>> "small_resnet18" in available("image"), available("signal")
    (True, ['signal_cnn', 'signal_mlp'])
    """
    kinds = {"image": list(OURS), "signal": list(SIGNAL_NETS)}
    if kind is None:
        return kinds["image"] + kinds["signal"]
    return kinds[check_choice(kind, kinds, "kind")]


def _source(name: str) -> tuple[str, str]:
    for prefix in ("tv/", "torchvision/"):
        if name.startswith(prefix):
            return "torchvision", _check_tv(name[len(prefix):])
    if timm.is_model(name):
        return "timm", name
    if name in torchvision.models.list_models():
        return "torchvision", name
    pool = list(dict.fromkeys(available() + timm.list_models() + ["tv/" + n for n in torchvision.models.list_models()]))
    close = difflib.get_close_matches(name, pool, n=5, cutoff=0.6)
    raise ValueError(
        f"Unknown model {name!r}. Our small nets: {', '.join(available())}; or any timm model name "
        f"(timm.list_models()) or 'tv/<name>' for torchvision (torchvision.models.list_models())."
        + (f" Close matches: {', '.join(close)}." if close else "")
    )


def check_name(name: str) -> str:
    """``name`` when :func:`create` knows it (our small nets, a timm name, ``tv/<name>``); else ``ValueError`` listing
    our nets and the closest timm, torchvision and book names.

    Example
    -------
    >>> check_name("tv/resnet18")
    'tv/resnet18'
    >>> check_name("resnet81")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown model 'resnet81'. Our small nets: ... Close matches: ...
    """
    _source(name)
    return name


def _check_tv(name: str) -> str:
    if name not in torchvision.models.list_models():
        raise ValueError(f"Unknown torchvision model {name!r}. Valid: {', '.join(torchvision.models.list_models())}.")
    return name


def create(name: str, num_classes: int = 10, in_chans: int = 3, img_size: int | None = None,
           pretrained: bool | str | os.PathLike = False, normalize: bool | None = None, seed: int | None = None,
           **kwargs) -> nn.Module:
    """Create a model by name.

    Args:
        name: one of :func:`available`, any timm name, or ``tv/<torchvision name>``.
        num_classes: size of the classification head (0 = no head, features only).
        in_chans: input channels (1 for Fashion-MNIST, 3 for RGB).
        img_size: input side in pixels, for models that need it (ViTs).
        pretrained: ``False``; ``True`` = hub weights (needs the network: offline it raises
            :class:`PretrainedUnavailableError` at once); or a path to a local weights file
            (a state dict, or a dict with a ``"model"`` / ``"state_dict"`` entry) loaded with ``weights_only=True``.
        normalize: add the weights' mean/std normalisation as a forward pre-hook so the model takes
            ``[0, 1]`` images; default: only for hub weights.
        seed: initialise the weights from this seed (the same weights as ``torch.manual_seed(seed)`` before
            the call), leaving the caller's random state untouched; ``None``: from the current random state.
        kwargs: passed to the model constructor.

    Returns:
        ``nn.Module`` mapping ``(B, in_chans, H, W)`` in [0, 1] to ``(B, num_classes)`` logits.

    Example
    -------
    >>> m = create("small_resnet18", num_classes=10, in_chans=3)
    >>> m(torch.rand(2, 3, 28, 28)).shape
    torch.Size([2, 10])
    >>> a, b = create("conv4", seed=1), create("conv4", seed=1)
    >>> all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    True
    """
    if seed is not None:
        with seeded(seed):
            return create(name, num_classes, in_chans, img_size, pretrained, normalize, **kwargs)
    source, base = _source(name)
    from_hub = pretrained is True
    if from_hub:
        _require_online(name, source)
    if source == "timm":
        args = dict(pretrained=from_hub, num_classes=num_classes, in_chans=in_chans, **kwargs)
        try:
            model = timm.create_model(base, img_size=img_size, **args)
        except TypeError as err:  # convnets take no img_size
            if "img_size" not in str(err):
                raise
            model = timm.create_model(base, **args)
        mean, std = model.pretrained_cfg.get("mean", IMAGENET_MEAN), model.pretrained_cfg.get("std", IMAGENET_STD)
    else:
        model = _create_torchvision(base, num_classes, in_chans, from_hub, **kwargs)
        mean, std = IMAGENET_MEAN, IMAGENET_STD
    if pretrained not in (True, False, None):
        load_weights(model, pretrained)
    if normalize if normalize is not None else from_hub:
        _add_normalization(model, mean, std)
    return model


def _require_online(name: str, source: str) -> None:
    host = "huggingface.co" if source == "timm" else "download.pytorch.org"
    if not is_online(host, timeout=3.0):
        raise PretrainedUnavailableError(
            f"Pretrained weights for {name!r} come from {host}, which cannot be reached "
            f"(offline, or HF_HUB_OFFLINE is set). Either: (1) pass pretrained='path/to/weights.pth' with a "
            f"local file; (2) run once online to fill the cache (~/.cache/huggingface or ~/.cache/torch); "
            f"(3) use pretrained=False and train the model (invlib.zoo)."
        )


def _create_torchvision(name, num_classes, in_chans, from_hub, **kwargs) -> nn.Module:
    if in_chans != 3:
        raise ValueError(f"torchvision models take 3 input channels, got in_chans={in_chans}; "
                         "repeat grey images to RGB (x.expand(-1, 3, -1, -1)).")
    model = torchvision.models.get_model(name, weights="DEFAULT" if from_hub else None, **kwargs)
    head = _classifier(model)
    if isinstance(head, nn.Linear) and head.out_features != num_classes:
        parent, attr = _parent(model, _classifier_name(model))
        setattr(parent, attr, nn.Linear(head.in_features, num_classes) if num_classes else nn.Identity())
    return model


def weights_key(model: nn.Module) -> str:
    """The identity of a model's weights: :func:`invlib.utils.digest` of its state dict (parameter and buffer
    names and values), the one key every cache of a model's outputs uses. A model measured in bf16
    (:func:`mark_precision`) has its own key: its outputs differ from float32's in their last bits.

    Example
    -------
    >>> a, b = create("small_resnet18", seed=0), create("small_resnet18", seed=0)
    >>> weights_key(a) == weights_key(b) != weights_key(create("small_resnet18", seed=1))
    True
    >>> weights_key(mark_precision(b, "bf16")) != weights_key(a)
    True
    """
    state = model.state_dict()
    if precision(model) == "bf16":
        return digest(*state, *state.values(), "bf16")
    return digest(*state, *state.values())


_PRECISION = "_invlib_precision"  # the attribute mark_precision sets on a model and every module inside it


def mark_precision(model: nn.Module, precision: str) -> nn.Module:
    """Record that ``model`` was trained under bf16 autocast on the CPU (``"bf16"``) or in float32
    (``"float32"``), on the model and every module inside it (a measurement may run a part, e.g. an encoder's
    backbone). :func:`for_inference` then runs a bf16 model's measuring passes under the same autocast, as it
    trained: 1.6x (56 px, small_resnet18_s4) to 2.5x (28 px, small_resnet18) the images/s of float32 on one
    thread of a CPU with bf16 instructions (``benchmarks/measurements/foundation.md``). The zoo marks a model by
    its :attr:`~invlib.zoo.Spec.precision`, :func:`invlib.train.fit` by its config's ``cpu_bf16``. Returns
    ``model``.

    Example
    -------
    >>> net = mark_precision(create("small_resnet18"), "bf16")
    >>> precision(net), precision(net.stem), precision(create("small_resnet18"))
    ('bf16', 'bf16', 'float32')
    """
    check_choice(precision, ("bf16", "float32"), "precision")
    for m in model.modules():
        setattr(m, _PRECISION, precision)
    return model


def precision(model: nn.Module) -> str:
    """``"bf16"`` when ``model`` was marked so by :func:`mark_precision`, else ``"float32"``."""
    return getattr(model, _PRECISION, "float32")


def _bf16_on_cpu(model: nn.Module) -> bool:
    """Whether ``model``'s measuring passes run under bf16 autocast: marked bf16, every parameter on the CPU."""
    return precision(model) == "bf16" and all(t.device.type == "cpu" for t in model.parameters())


@contextlib.contextmanager
def measuring(model: nn.Module):
    """The module whose own methods a measurement calls (``forward_features``, ``forward_head``: what
    :func:`for_inference`'s wrapped ``forward`` does not cover), as every measurement of ``model`` runs it: a model
    marked bf16 (:func:`mark_precision`) in eval mode on the CPU gives its :func:`for_inference` copy, called under
    bf16 autocast (its outputs are bf16: the caller makes them float32); any other model is itself, as it is.

    Example
    -------
    >>> net = mark_precision(create("small_resnet18"), "bf16").eval()
    >>> with measuring(net) as fast:
    ...     h = fast.forward_features(torch.rand(2, 3, 28, 28))
    >>> h.dtype, fast is for_inference(net)
    (torch.bfloat16, True)
    >>> with measuring(create("small_resnet18").eval()) as same:
    ...     type(same).__name__
    'SmallResNet'
    """
    if _bf16_on_cpu(model) and not model.training:
        fast = for_inference(model)  # folded in float32, outside the autocast
        with torch.autocast("cpu", dtype=torch.bfloat16):
            yield fast
    else:
        yield model


def _float32(y):
    """Floating tensors (in a tuple, list or dict too) as float32; anything else as it is."""
    if isinstance(y, torch.Tensor):
        return y.float() if y.is_floating_point() else y
    if isinstance(y, dict):
        return {k: _float32(v) for k, v in y.items()}
    if isinstance(y, (tuple, list)):
        return type(y)(_float32(v) for v in y)
    return y


def _in_bf16(forward):
    """``forward`` under bf16 autocast on the CPU, its floating outputs returned as float32."""
    def run(*args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = forward(*args, **kwargs)
        return _float32(y)
    return run


def read_checkpoint(path: str | os.PathLike):
    """``torch.load(path, weights_only=True)`` onto the CPU, with :class:`CheckpointError` naming the file
    when it is missing or unreadable (truncated zip, pickle garbage, ...). Used for every weights file.

    Example
    -------
    >>> read_checkpoint("/no/such/file.pt")
    Traceback (most recent call last):
    ...
    invlib.models.CheckpointError: Weights file '/no/such/file.pt' does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"Weights file {str(path)!r} does not exist.")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise CheckpointError(f"Weights file {str(path)!r} is corrupt or not a torch file ({err}). "
                              "Delete it and retrain or download it again.") from err


def read_weights(path: str | os.PathLike) -> dict:
    """The state dict a weights file holds: :func:`read_checkpoint`, then the ``"model"`` or ``"state_dict"`` entry
    of a training checkpoint when there is one, with the ``"module."`` prefix of ``nn.DataParallel`` removed.

    Raises :class:`CheckpointError` naming the file when it is missing, unreadable or holds no state dict.

    Example
    -------
    >>> torch.save({"model": {"module.w": torch.zeros(2)}, "epoch": 3}, "/tmp/ckpt.pt")
    >>> read_weights("/tmp/ckpt.pt")
    {'w': tensor([0., 0.])}
    """
    state = read_checkpoint(path)
    if isinstance(state, dict):
        state = state.get("model", state.get("state_dict", state))
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"Weights file {str(path)!r} holds a {type(state).__name__}, not a state dict "
                              "(save one with torch.save(model.state_dict(), path)).")
    return {k.removeprefix("module."): v for k, v in state.items()}


def _listed(names: list[str], first: int = 4) -> str:
    """``"a, b, c"``: the first ``first`` names, and how many more."""
    return ", ".join(names[:first]) + (f" and {len(names) - first} more" if len(names) > first else "")


def _misfits(model: nn.Module, state: dict) -> tuple[list[str], list[str], list[str]]:
    """``(missing, unexpected, mismatched)`` keys of ``state`` against ``model.state_dict()``."""
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    shapes = [k for k in own if k in state and tuple(getattr(state[k], "shape", ())) != tuple(own[k].shape)]
    return missing, unexpected, shapes


def misfit(model: nn.Module, state: dict) -> str:
    """What keeps ``state`` from loading into ``model`` (strictly): its missing and unexpected keys (counts and the
    first few) and its shape mismatches, as one line; ``""`` when every tensor fits.

    Example
    -------
    >>> net = create("small_resnet18", num_classes=10)
    >>> misfit(net, net.state_dict())
    ''
    >>> misfit(net, create("small_resnet18", num_classes=5).state_dict())
    '2 shape mismatches: fc.weight file (5, 128) vs model (10, 128), fc.bias file (5,) vs model (10,)'
    >>> misfit(net, {"fc.bias": torch.zeros(10), "extra": torch.zeros(1)})  # doctest: +ELLIPSIS
    '121 missing keys (in the model, not in the file): stem.0.weight, ... and 117 more; 1 unexpected key (in the ...'
    """
    own = model.state_dict()
    missing, unexpected, shapes = _misfits(model, state)
    s = lambda n, one, many: f"{n} {one if n == 1 else many}"  # noqa: E731
    parts = []
    if missing:
        parts.append(f"{s(len(missing), 'missing key', 'missing keys')} (in the model, not in the file): "
                     f"{_listed(missing)}")
    if unexpected:
        parts.append(f"{s(len(unexpected), 'unexpected key', 'unexpected keys')} (in the file, not in the model): "
                     f"{_listed(unexpected)}")
    if shapes:
        sizes = [f"{k} file {tuple(state[k].shape)} vs model {tuple(own[k].shape)}" for k in shapes]
        parts.append(f"{s(len(shapes), 'shape mismatch', 'shape mismatches')}: {_listed(sizes, 3)}")
    return "; ".join(parts)


def load_weights(model: nn.Module, path: str | os.PathLike, state: dict | None = None) -> nn.Module:
    """Load a local weights file into ``model`` (:func:`read_weights`, then ``load_state_dict``, strict);
    ``state``: the file's state dict when the caller has read it already.

    Raises :class:`CheckpointError` naming the file when it is missing, corrupt or does not fit: then the message
    lists the missing and unexpected keys (counts and the first few) and the shape mismatches (:func:`misfit`), and
    says when only the classifier differs (another ``num_classes``) or most tensors do (another architecture).

    Example
    -------
    >>> m = create("small_resnet18"); torch.save(m.state_dict(), "/tmp/w.pt")
    >>> _ = load_weights(create("small_resnet18"), "/tmp/w.pt")
    >>> load_weights(create("small_resnet18", num_classes=3), "/tmp/w.pt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    invlib.models.CheckpointError: Weights in '/tmp/w.pt' do not fit this SmallResNet: 2 shape mismatches: ...
    """
    state = read_weights(path) if state is None else state
    problem = misfit(model, state)
    if not problem:
        try:
            model.load_state_dict(state)
            return model
        except RuntimeError as err:  # what misfit() does not see (a custom load_state_dict, ...)
            problem = str(err)
    bad = set().union(*_misfits(model, state))
    head, hint = _head_key(model), ""
    if head in state and bad and all(k.startswith(head.rsplit(".", 1)[0] + ".") for k in bad):
        hint = (f" Only the classifier differs: the file's has {state[head].shape[0]} outputs "
                f"(num_classes={state[head].shape[0]}).")
    elif len(bad) > len(model.state_dict()) // 2:
        hint = " Most tensors differ: was the file saved from another architecture?"
    raise CheckpointError(f"Weights in {str(path)!r} do not fit this {type(model).__name__}: {problem}.{hint}")


def _head_key(model: nn.Module) -> str:
    """The state-dict key of the weight of the classifier's (last) linear layer; ``""`` when it has none."""
    try:
        name = _classifier_name(model)
        head = model.get_submodule(name)
    except (AttributeError, StopIteration):
        return ""
    linears = [(n, m) for n, m in head.named_modules() if isinstance(m, nn.Linear)]
    if not linears:
        return ""
    sub = linears[-1][0]
    return f"{name}.{sub}.weight" if sub else f"{name}.weight"


def head_outputs(name: str, state: dict, default: int = 1000) -> int:
    """The number of classes the classifier of architecture ``name`` has in the weights ``state``: the rows of
    its head's weight; ``0`` when the file holds every tensor but the head's (a feature extractor saved with
    ``num_classes=0``); ``default`` when it cannot tell. Counted on a model built on the meta device (no memory,
    no computation).

    Example
    -------
    >>> head_outputs("small_resnet18", create("small_resnet18", num_classes=7).state_dict())
    7
    >>> head_outputs("small_resnet18", create("small_resnet18", num_classes=0).state_dict())
    0
    """
    try:
        with torch.device("meta"):
            skeleton = create(name, num_classes=default)
    except Exception:  # an architecture the meta device cannot build: the default
        return default
    key = _head_key(skeleton)
    if key in state and getattr(state[key], "ndim", 0) == 2:
        return int(state[key].shape[0])
    missing, unexpected, _ = _misfits(skeleton, state)
    prefix = key.rsplit(".", 1)[0] + "." if key else None
    if prefix and missing and all(k.startswith(prefix) for k in missing) and not unexpected:
        return 0
    return default


def _add_normalization(model: nn.Module, mean, std) -> None:
    mean_t = torch.tensor(mean).view(1, -1, 1, 1)
    std_t = torch.tensor(std).view(1, -1, 1, 1)

    def normalize(_module, args):
        x = args[0]
        return ((x - mean_t.to(x)) / std_t.to(x),) + tuple(args[1:])

    model.register_forward_pre_hook(normalize)
    model.input_normalization = (tuple(mean), tuple(std))


# ----------------------------------------------------------------------------- layers and features
def _classifier_name(model: nn.Module) -> str:
    cfg = getattr(model, "pretrained_cfg", None) or {}
    if cfg.get("classifier"):
        return cfg["classifier"]
    if hasattr(model, "get_classifier"):
        head = model.get_classifier()
        return next(n for n, m in model.named_modules() if m is head)
    for candidate in ("fc", "classifier", "heads", "head"):
        if hasattr(model, candidate):
            return candidate
    return list(dict(model.named_children()))[-1]


def _classifier(model: nn.Module) -> nn.Module:
    return model.get_submodule(_classifier_name(model))


def _parent(model: nn.Module, name: str):
    *path, attr = name.split(".")
    return model.get_submodule(".".join(path)) if path else model, attr


def probe_layers(model: nn.Module) -> list[str]:
    """The layers worth probing, shallow to deep, ending with ``"pre_logits"`` (the classifier's input).

    timm models use their ``feature_info``; torchvision models their top-level stages.

    Example
    -------
    >>> probe_layers(create("small_resnet18"))
    ['layer1', 'layer2', 'layer3', 'layer4', 'pre_logits']
    """
    info = getattr(model, "feature_info", None)
    if info:
        names = [f["module"] for f in (info.get_dicts() if hasattr(info, "get_dicts") else info)]
    else:
        head = _classifier_name(model)
        names = [n for n, m in model.named_children() if n != head and len(list(m.children())) > 0]
    return names + ["pre_logits"]


STAGES = 4  # stages a long stack of blocks is thinned to (a ViT's blocks at quarter depths)


def _spread(names: list[str], k: int = STAGES) -> list[str]:
    """``k`` of ``names`` at even depths ending with the last (quarter depths for ``k=4``): blocks 2, 5, 8, 11 of
    12; all of them when there are at most ``k``."""
    n = len(names)
    return list(names) if n <= k else [names[math.ceil(i * n / k) - 1] for i in range(1, k + 1)]


def stages(model: nn.Module) -> list[str]:
    """The model's stages, shallow to deep, then ``"pre_logits"`` (the classifier's input, the embedding every
    paper's S1 measure reads): the default layers at which "your model" is measured. Every name is a module name
    (``model.get_submodule(name)``) or ``"pre_logits"``, which :func:`features` (so paper A's probe backbone and
    paper C's layer features) takes.

    - A model with timm's ``feature_info`` (timm's models, the book's small nets): its module names, without a
      stem that is a single layer (timm's ResNet lists ``act1``) when two or more blocks remain. When every entry
      has the same reduction (a ViT's blocks, all at stride 16), the blocks at quarter depths (``blocks.2,
      blocks.5, blocks.8, blocks.11`` of 12): four points along the depth cost a quarter of twelve and show
      the same trend, and a CNN's four stages are four too.
    - Otherwise (torchvision's models, a model of your own): the top-level blocks of the graph that torchvision's
      feature extraction traces (:func:`torchvision.models.feature_extraction.get_graph_node_names`; registration
      order when the model cannot be traced): the modules below the root that hold layers of their own, the head
      left out (``layer1..layer4`` of ``tv/resnet18``). One such block alone is entered (``encoder`` then
      ``encoder.layers`` of ``tv/vit_b_16``); a level of single layers (``conv4``'s ``features``) is cut after
      each convolution's group (conv, norm, activation, pool). More than four blocks: four at quarter depths.

    Example
    -------
    >>> stages(create("small_resnet18_s4"))
    ['layer1', 'layer2', 'layer3', 'layer4', 'pre_logits']
    >>> stages(create("small_vit_p14_cls"))
    ['blocks.0', 'blocks.1', 'blocks.2', 'blocks.3', 'pre_logits']
    >>> stages(create("conv4"))
    ['features.2', 'features.6', 'features.10', 'features.14', 'pre_logits']
    """
    modules = dict(model.named_modules())
    info = getattr(model, "feature_info", None)
    entries = [d for d in ((info.get_dicts() if hasattr(info, "get_dicts") else info) or []) if d["module"] in modules]
    if entries:
        blocks = [d for d in entries if next(modules[d["module"]].children(), None) is not None]
        entries = blocks if len(blocks) >= 2 else entries
        names = [d["module"] for d in entries]
        if len({d.get("reduction") for d in entries}) == 1:
            names = _spread(names)
    else:
        names = _graph_blocks(model, modules)
    return names + ["pre_logits"]


_NOT_A_STAGE = (nn.Flatten, nn.Dropout, nn.Identity, nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool1d,
                nn.AdaptiveMaxPool2d)


def _graph_blocks(model: nn.Module, modules: dict) -> list[str]:
    """:func:`stages` of a model without ``feature_info``: its top-level blocks, in the order the graph runs them."""
    from torchvision.models.feature_extraction import get_graph_node_names

    try:
        nodes = get_graph_node_names(model, suppress_diff_warning=True)[1]
    except Exception:  # a forward that cannot be traced (data-dependent control flow): the registration order
        nodes = list(modules)
    try:
        head = _classifier_name(model)
    except (AttributeError, StopIteration, IndexError):
        head = None
    order = {}  # every module on the path of every node, first seen first
    for node in nodes:
        parts = node.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in modules and name:
                order.setdefault(name, None)
    order = [n for n in order if head is None or not (n == head or n.startswith(head + "."))]
    prefix = ""
    while True:
        children = [n for n in order if n.startswith(prefix) and "." not in n[len(prefix):]]
        blocks = [n for n in children if any(m.startswith(n + ".") for m in order)]
        if len(blocks) != 1:
            break
        prefix = blocks[0] + "."
    if len(blocks) >= 2:
        return _spread(blocks)
    ends = []  # a level of single layers: the last layer of each group that a convolution (or linear layer) opens
    for n in children:
        if isinstance(modules[n], _NOT_A_STAGE):  # what only reshapes the classifier's input (pre_logits itself)
            continue
        if isinstance(modules[n], (nn.modules.conv._ConvNd, nn.Linear)) and ends:
            ends.append(n)
        elif ends:
            ends[-1] = n
        else:
            ends.append(n)
    return _spread(ends)


def check_layers(model: nn.Module, layers) -> list[str]:
    """``layers`` as a list when every one is a layer of ``model`` (``"pre_logits"`` or a name of
    ``model.named_modules()``); else ``ValueError`` naming the unknown one and listing the model's
    :func:`stages` (and close module names). A single name may be given as a string.

    Example
    -------
    >>> net = create("small_resnet18")
    >>> check_layers(net, ["layer2", "layer2.0.body.0", "pre_logits"])
    ['layer2', 'layer2.0.body.0', 'pre_logits']
    >>> check_layers(net, ["layer5"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: SmallResNet has no layer 'layer5'. Did you mean ...? Its stages: layer1, layer2, layer3, layer4, ...
    """
    layers = [layers] if isinstance(layers, str) else list(layers)
    modules = {n for n, _ in model.named_modules() if n}
    for layer in layers:
        if layer != "pre_logits" and layer not in modules:
            close = difflib.get_close_matches(str(layer), sorted(modules | {"pre_logits"}), n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"{type(model).__name__} has no layer {layer!r}.{hint} Its stages: "
                             f"{', '.join(stages(model))}; or any name of model.named_modules().")
    return layers


def _expects(model: nn.Module) -> list[str]:
    """What ``model`` says about its input, as phrases: timm's ``pretrained_cfg`` input size, a ViT's patch-embedding
    image size, the first convolution's input channels."""
    said = []
    size = (getattr(model, "pretrained_cfg", None) or {}).get("input_size")
    if size:
        said.append(f"input_size {tuple(size)} (C, H, W) in its pretrained_cfg")
    embed = getattr(model, "patch_embed", None)
    if getattr(embed, "img_size", None) is not None and getattr(embed, "strict_img_size", False):
        said.append(f"a fixed image size {tuple(embed.img_size)} (its patch embedding)")
    first = next((m for m in model.modules() if isinstance(m, nn.modules.conv._ConvNd)), None)
    if first is not None:
        kind = "1-D signals (B, C, T)" if isinstance(first, nn.Conv1d) else f"{first.in_channels}-channel images"
        said.append(f"{first.in_channels} input channels ({kind}: its first convolution)")
    return said


def check_input(model: nn.Module, side: int, channels: int = 3) -> int:
    """One forward pass of ``model`` on a ``(1, channels, side, side)`` zero image under ``torch.inference_mode``
    (on the model's device): the number of outputs ``K`` of its ``(1, K)`` output. A model that rejects the input,
    or gives no ``(1, K)`` tensor, is a ``ValueError`` that says what the model expects where it can tell
    (its ``pretrained_cfg`` input size, a ViT's fixed image size, its first convolution's input channels), with
    the original error's text.

    Example
    -------
    >>> check_input(create("small_resnet18", num_classes=10).eval(), 28)
    10
    >>> check_input(create("small_resnet18", in_chans=1).eval(), 28)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: SmallResNet rejects a (1, 3, 28, 28) input. It expects 1 input channels (1-channel images: ...
    """
    param = next(itertools.chain(model.parameters(), model.buffers()), None)
    x = torch.zeros(1, channels, side, side, device=param.device if param is not None else "cpu")
    shape = f"(1, {channels}, {side}, {side})"
    expects = _expects(model)
    said = f" It expects {'; '.join(expects)}." if expects else ""
    try:
        with torch.inference_mode():
            y = model(x)
    except Exception as err:
        raise ValueError(f"{type(model).__name__} rejects a {shape} input.{said} The error: "
                         f"{type(err).__name__}: {err}") from err
    if not isinstance(y, torch.Tensor) or y.ndim != 2 or y.shape[0] != 1:
        got = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
        raise ValueError(f"{type(model).__name__} gives {got} for a {shape} input; the book's measures need a "
                         "(1, K) tensor (logits, or an embedding).")
    return int(y.shape[1])


_INFERENCE = weakref.WeakKeyDictionary()  # model -> {(keep, bf16): (stamp, its inference copy)}
_CONVS, _NORMS = (nn.Conv1d, nn.Conv2d), (nn.BatchNorm1d, nn.BatchNorm2d)


def for_inference(model: nn.Module, keep=()) -> nn.Module:
    """What a measurement's forward passes run: a copy of an eval-mode ``model`` in which every BatchNorm that
    directly follows a convolution inside an ``nn.Sequential`` is folded into that convolution (the BatchNorm
    becomes ``nn.Identity``, so every module keeps its name). Same outputs to float rounding, fewer passes over
    memory: 1.07x to 1.2x the images/s on one CPU thread (``benchmarks/bench_inference.py``;
    ``benchmarks/measurements/foundation.md``). :func:`batched` and
    :func:`features` run every module through it.

    ``keep``: module names whose own output must stay as it is (a hooked convolution keeps its BatchNorm).
    A model marked bf16 (:func:`mark_precision`: trained under bf16 autocast on the CPU) is measured as it
    trained: its copy's forward runs under that autocast and returns float32.
    A model in training mode, or (float32) without such pairs, is returned as it is. The copy is cached per model and
    made anew when the model's parameters or buffers change (other tensors, or the same ones written in place).

    Example
    -------
    >>> net = create("small_resnet18").eval()
    >>> fast = for_inference(net)
    >>> type(fast.stem[1]).__name__, fast is for_inference(net), for_inference(net.train()) is net
    ('Identity', True, True)
    >>> x = torch.rand(4, 3, 28, 28)
    >>> with torch.inference_mode():
    ...     torch.allclose(fast(x), net.eval()(x), atol=1e-5)
    True
    """
    if model.training:
        return model
    bf16 = _bf16_on_cpu(model)
    tensors = itertools.chain(model.parameters(), model.buffers())
    stamp = tuple((t.data_ptr(), t._version) for t in tensors)
    copies = _INFERENCE.setdefault(model, {})  # one copy per (keep, precision): passes that alternate reuse theirs
    hit = copies.get((tuple(keep), bf16))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    with torch.inference_mode(False), torch.no_grad():
        try:
            fast = copy.deepcopy(model)
        except (RuntimeError, TypeError):  # a module that cannot be copied runs as it is
            return model
        names = {id(m): n for n, m in fast.named_modules()}
        folded = 0
        for parent in list(fast.modules()):
            if not isinstance(parent, nn.Sequential):
                continue
            kids = list(parent._modules.items())
            for (ka, a), (kb, b) in zip(kids, kids[1:]):
                if (type(a) in _CONVS and type(b) in _NORMS and b.track_running_stats and b.running_mean is not None
                        and names[id(a)] not in keep and names[id(b)] not in keep):
                    parent._modules[ka] = fuse_conv_bn_eval(a, b)
                    parent._modules[kb] = nn.Identity()
                    folded += 1
    fast = fast.to(memory_format=torch.channels_last) if folded or bf16 else model  # the layout batched() gives
    if bf16:  # the copy's own forward (never the model's): measured under the autocast it trained in
        fast.forward = _in_bf16(fast.forward)
    copies[tuple(keep), bf16] = (stamp, fast)
    return fast


def features(model: nn.Module, x: torch.Tensor, layers: list[str] | None = None, grad: bool = False,
             pool: bool = False) -> dict[str, torch.Tensor]:
    """Outputs of several layers from ONE forward pass (forward hooks).

    Args:
        model: any model from :func:`create`.
        x: images ``(B, C, H, W)`` in [0, 1].
        layers: names from :func:`probe_layers` (default: all of them) or any module name;
            ``"pre_logits"`` is the input of the classifier (e.g. the 512-d pooled ResNet embedding).
        grad: keep the graph (for fine-tuning); default runs under ``torch.inference_mode``.
        pool: global-average-pool 4-D outputs to ``(B, C)`` (token outputs ``(B, N, D)`` are averaged over N).

    Returns:
        dict layer name -> tensor, ``(B, C, h, w)`` for conv stages, ``(B, N, D)`` for transformer blocks,
        ``(B, D)`` for ``pre_logits`` (or ``(B, C)`` everywhere with ``pool=True``).

    Example
    -------
    >>> m = create("small_resnet18").eval()
    >>> f = features(m, torch.rand(4, 3, 28, 28), ["layer2", "pre_logits"])
    >>> f["layer2"].shape, f["pre_logits"].shape
    (torch.Size([4, 32, 14, 14]), torch.Size([4, 128]))
    """
    check_images(x)
    layers = list(layers or probe_layers(model))
    model = model if grad else for_inference(model, keep=layers)
    modules = dict(model.named_modules())
    # pooled inside the hook, while the activation is still in cache; float32 whatever precision the pass ran in
    keep = (lambda y: _pool(_float32(y))) if pool else _float32
    out, handles = {}, []
    for name in layers:
        if name == "pre_logits":
            handles.append(_classifier(model).register_forward_pre_hook(
                lambda _m, args, name=name: out.__setitem__(name, keep(args[0]))))
        elif name in modules:
            handles.append(modules[name].register_forward_hook(
                lambda _m, _a, y, name=name: out.__setitem__(name, keep(y))))
        else:
            raise ValueError(f"Model has no layer {name!r}. Probe-able layers: {', '.join(probe_layers(model))} "
                             "(or any name from model.named_modules()).")
    try:
        with torch.enable_grad() if grad else torch.inference_mode():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return {name: out[name] for name in layers}


def batched(fn, x: torch.Tensor, batch_size: int | None = None, device: str | torch.device | None = None,
            transform=None, channels_last: bool = True, out_device: str | torch.device | None = "cpu",
            transform_device: str | torch.device | None = None) -> torch.Tensor:
    """``fn`` over ``x`` in batches, under ``torch.inference_mode``: every batched forward pass of the book.

    Each batch ``x[i:i + batch_size]`` is moved to ``transform_device`` (default ``device``), converted to float
    (uint8 to [0, 1] by ``/ 255``; other dtypes by ``.float()``), passed through ``transform(xb, k)`` (``k`` the
    batch's index) when given, moved to ``device``, made channels_last when ``channels_last`` and 4-D (contiguous
    when not 4-D; ``channels_last=False`` leaves the layout as it is), given to ``fn``; floating outputs become
    float32, integer ones (class indices) keep their dtype.

    Args:
        fn: ``(B, ...) -> (B, ...)``: a model, an embedding, ``lambda b: model(b).argmax(1)``.
        x: ``(N, C, H, W)`` images (uint8, or float in [0, 1]) or ``(N, C, T)`` signals, on any device, or images
            on disk (:class:`invlib.streaming.ImageFiles`, read through :func:`invlib.streaming.batches`).
        batch_size: default :data:`EVAL_BATCH` of ``device``'s type (128 on CPU, 1024 on CUDA).
        device: where ``fn`` runs; default the device of ``fn``'s parameters when it is a module, else the CPU.
        transform_device: where the conversion and ``transform`` run: ``"cpu"`` keeps a transform that draws from
            a CPU generator bit-identical whatever ``device`` (interpolation differs between CPU and CUDA).
        out_device: where the outputs are gathered (``None``: stay on ``device``).

    Returns:
        ``fn``'s outputs of all batches concatenated, ``(N, ...)`` (a normal tensor, not an inference tensor);
        ``{key: (N, ...)}`` when ``fn`` returns a dict of tensors (several layers of one forward pass).

    Example
    -------
    >>> m = create("small_resnet18").eval()
    >>> x = torch.randint(0, 256, (5, 3, 28, 28), dtype=torch.uint8)
    >>> z = batched(m, x, batch_size=2)
    >>> z.shape, z.dtype, torch.equal(z, batched(m, x.float() / 255, batch_size=2))
    (torch.Size([5, 10]), torch.float32, True)
    >>> batched(lambda b: m(b).argmax(1), x, transform=lambda b, k: b.flip(-1)).dtype
    torch.int64
    >>> {k: v.shape for k, v in batched(lambda b: {"z": m(b), "top": m(b).argmax(1)}, x, batch_size=2).items()}
    {'z': torch.Size([5, 10]), 'top': torch.Size([5])}
    """
    if len(x) == 0:
        raise ValueError(f"batched() needs at least one input, got x of shape {tuple(x.shape)}.")
    if device is None:
        params = next(fn.parameters(), None) if isinstance(fn, nn.Module) else None
        device = params.device if params is not None else "cpu"
    device = torch.device(device)
    prepare_on = device if transform_device is None else torch.device(transform_device)
    batch_size = batch_size or EVAL_BATCH.get(device.type, 1024)
    fn = for_inference(fn) if isinstance(fn, nn.Module) else fn
    out = []
    with torch.inference_mode():
        for k, xb in enumerate(batches(x, batch_size, device=device)):  # decoded by workers when on disk
            xb = xb.to(prepare_on)
            xb = xb.float().div_(255) if xb.dtype == torch.uint8 else xb.float()
            if transform is not None:
                xb = transform(xb, k)
            xb = xb.to(device)
            if channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last if xb.ndim == 4 else torch.contiguous_format)
            y = fn(xb)
            out.append({k: _gathered(v, out_device) for k, v in y.items()} if isinstance(y, dict)
                       else _gathered(y, out_device))
    if isinstance(out[0], dict):  # several outputs a pass (layers of one forward): concatenated each
        return {k: torch.cat([o[k] for o in out]) for k in out[0]}
    return torch.cat(out)  # outside inference_mode: a normal tensor, which callers may modify in place


def _gathered(y: torch.Tensor, out_device) -> torch.Tensor:
    y = y.float() if y.is_floating_point() else y
    return y if out_device is None else y.to(out_device)


def _pool(y: torch.Tensor) -> torch.Tensor:
    """Global average pool: ``(B, C, h, w)`` -> ``(B, C)``, tokens ``(B, N, D)`` -> ``(B, D)``."""
    return y.mean((2, 3)) if y.ndim == 4 else y.mean(1) if y.ndim == 3 else y


def logits_from(model: nn.Module, layer: str, feats: torch.Tensor, x: torch.Tensor | None = None) -> torch.Tensor:
    """The logits ``(B, K)`` that the rest of ``model`` gives when layer ``layer`` outputs ``feats`` instead of
    its own output: the frozen "remaining layers" of paper C's classification measures.

    For ``"pre_logits"`` only the classifier runs (``x`` unused). For any other layer the whole model runs on the
    images ``x`` ``(B, C, H, W)`` with that layer's output replaced by ``feats`` (the earlier layers' work is
    discarded). Gradients flow as usual; wrap in ``torch.inference_mode()`` to measure.

    Example
    -------
    >>> m = create("small_resnet18").eval()
    >>> x = torch.rand(2, 3, 28, 28)
    >>> f = features(m, x, ["layer4", "pre_logits"])   # inference tensors: measure under inference_mode
    >>> with torch.inference_mode():
    ...     same = [torch.allclose(logits_from(m, "pre_logits", f["pre_logits"]), m(x), atol=1e-5),
    ...             torch.allclose(logits_from(m, "layer4", f["layer4"], x), m(x), atol=1e-5)]
    >>> same
    [True, True]
    """
    if layer == "pre_logits":
        return _classifier(model)(feats)
    modules = dict(model.named_modules())
    if layer not in modules:
        raise ValueError(f"Model has no layer {layer!r}. Probe-able layers: {', '.join(probe_layers(model))} "
                         "(or any name from model.named_modules()).")
    if x is None:
        raise ValueError(f"logits_from(..., {layer!r}, ...) runs the model with that layer replaced: pass images x.")
    handle = modules[layer].register_forward_hook(lambda _m, _a, _y: feats)
    try:
        return model(x)
    finally:
        handle.remove()

"""AugNet (Rommel et al., 2022): augmentation layers learned end to end with the trunk.

One layer holds Q operations; each has a weight ``w_q = softmax(w' / T)_q`` and a magnitude
``mu_q in [0, 1]``. In training a layer returns ``sum_q w_q T_q(x; v_q)`` with per-sample values
``v_q = U(-1, 1) * mu_q * scale_q`` for symmetric operations (the affine ones, contrast, brightness,
frequency shift) and ``v_q = mu_q * scale_q`` for the others, whose randomness is inside the operation
(sample pairing's partner, FT surrogate's phases, the noise), so gradients reach every weight and
magnitude; at evaluation each sample goes through one operation drawn from ``w``. Layers
stack. The loss adds ``lam * R`` with the selective regulariser ``R = -||w * mu||_2`` (summed over
layers), or Augerino's ``-||mu||_2``, or nothing (the paper's ablation).

Settings from the authors' code (github.com/cedricrommel/augnet, its operation classes): temperature
``T = 0.01`` (near-hard selection); operation scales translate 0.45 of the size (their ``TranslateX``;
the paper says "half the image"), rotate pi radians (section 4.1: "an angle of +-pi"), shear 0.3,
contrast and brightness factor ``1 +- 1``, sample pairing up to the partner alone (weight 1), frequency
shift 2 Hz, FT surrogate 0.1 of 2 pi, Gaussian noise 0.1; the weight logits ``w'`` start at 1 (their
``_weights``: the same uniform weights as 0, but not the same path under weight decay), and at
evaluation their layer draws one operation per batch (``eval_draw="batch"``; ours draws one per sample
by default). Magnitudes are free parameters passed through :func:`invlib.learned.unit_clamp`, which keeps
a gradient at exactly 0 (``torch.clamp`` has none there in torch 2.14.1). Scales, ``scales=`` overrides
and :meth:`AugLayer.state` are in the units of :data:`invlib.learned.UNITS` (radians for rotate).

Example
-------
>>> from invlib import models
>>> trunk = models.create("conv4", num_classes=4, in_chans=1, widths=(8, 8, 8, 8))
>>> net = augnet(trunk, ops="geometric", layers=1, reg=0.5, init_magnitude=1 / 8)
>>> st = net.state()["layer0"]["rotate"]
>>> st["magnitude"], round(st["max_value"], 4)  # 1/8 of +-pi radians
(0.125, 0.3927)
>>> float(net.penalty()) < 0
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import kornia
import torch
from torch import nn

from .. import transforms as T
from ..utils import check_choice
from . import Invariant, in_float32, unit_clamp

REGULARISERS = ("selective", "augerino", "none")
EVAL_DRAWS = ("sample", "batch")


@dataclass(frozen=True)
class AugOp:
    """One differentiable operation of an AugNet layer.

    Attributes
    ----------
    name:   registry key
    fn:     ``fn(x, v, fs) -> x``: images ``(B, C, H, W)`` or signals ``(B, C, T)``, values ``v`` ``(B,)`` in
            ``unit`` (in degrees when ``degrees``), ``fs`` the sampling rate (signals only)
    scale:  the value at magnitude 1, in ``unit``
    symmetric: values are drawn uniformly in ``[-mu, mu] * scale``; else every sample gets ``mu * scale``
    unit:   what a value measures (the unit of ``max_value`` in :meth:`AugLayer.state`)
    kind:   ``"image"`` or ``"signal"``
    degrees: ``unit`` is radians but ``fn`` takes degrees (:func:`invlib.transforms.rotate`'s unit): the layer
            draws values in degrees, so the draws are those of a scale of 180 degrees, to the bit
    per_sample: a sample's output depends on that sample and its value alone, and ``fn`` draws no random numbers
            (the affine warps): at evaluation a layer of such ops runs each op on the samples that drew it only
    """

    name: str
    fn: Callable
    scale: float
    symmetric: bool
    unit: str
    kind: str
    degrees: bool = False
    per_sample: bool = False


def _image(name: str, convert=lambda v: v):
    op = T.get(name)
    return lambda x, v, fs: op.fn(x, convert(v)).clamp(0, 1)


def _kornia_shear(axis: int):
    """kornia's shear, ``[[1, s, 0], [0, 1, 0]]`` about the top-left corner (so it also shifts content)."""
    def fn(x, v, fs):
        s = torch.zeros(len(x), 2, device=x.device, dtype=x.dtype)
        s = s.index_copy(1, torch.tensor([axis], device=x.device), v.unsqueeze(1))
        return kornia.geometry.transform.shear(x, s, padding_mode="zeros")
    return fn


def _sample_pairing(x, v, fs):
    """Mix each image with another of the batch: ``(1 - v) x + v x[perm]`` (its label kept)."""
    other = x[torch.randperm(len(x), device=x.device)]
    return x + v.view(-1, *[1] * (x.ndim - 1)) * (other - x)


OPS: dict[str, AugOp] = {op.name: op for op in [
    AugOp("translate_x", _image("translate_x"), 0.45, True, "fraction of width", "image", per_sample=True),
    AugOp("translate_y", _image("translate_y"), 0.45, True, "fraction of height", "image", per_sample=True),
    AugOp("rotate", _image("rotate"), math.pi, True, "radians", "image", degrees=True, per_sample=True),
    AugOp("shear_x", _kornia_shear(0), 0.3, True, "shear coefficient", "image", per_sample=True),
    AugOp("shear_y", _kornia_shear(1), 0.3, True, "shear coefficient", "image", per_sample=True),
    AugOp("contrast", _image("contrast", lambda v: 1 + v), 1.0, True, "factor - 1", "image"),
    AugOp("brightness", _image("brightness", lambda v: 1 + v), 1.0, True, "factor - 1", "image"),
    AugOp("sample_pairing", _sample_pairing, 1.0, False, "mixing weight", "image"),
    AugOp("frequency_shift", lambda x, v, fs: T.frequency_shift(x, v, fs), 2.0, True, "Hz", "signal"),
    AugOp("ft_surrogate", lambda x, v, fs: T.ft_surrogate(x, v), 0.1, False, "fraction of 2 pi", "signal"),
    AugOp("gaussian_noise", lambda x, v, fs: T.signal_noise(x, v), 0.1, False, "std", "signal"),
]}

# The paper's layer types: five affine ops (sections 4.1, 5.1), three non-geometric ones (5.1), three EEG ops (4.2).
GROUPS = {
    "geometric": ["translate_x", "translate_y", "rotate", "shear_x", "shear_y"],
    "appearance": ["contrast", "brightness", "sample_pairing"],
    "signal": ["frequency_shift", "ft_surrogate", "gaussian_noise"],
}


def layer_ops(ops) -> list[str]:
    """The operation names of one layer: a group name (:data:`GROUPS`), one name or a list of names, checked.

    Example
    -------
    >>> layer_ops("signal"), layer_ops("rotate")
    (['frequency_shift', 'ft_surrogate', 'gaussian_noise'], ['rotate'])
    """
    names = GROUPS[ops] if isinstance(ops, str) and ops in GROUPS else ([ops] if isinstance(ops, str) else list(ops))
    for n in names:
        if n not in OPS:
            raise ValueError(f"Unknown AugNet operation {n!r}. Operations: {', '.join(sorted(OPS))}; "
                             f"groups: {', '.join(GROUPS)}.")
    if len(set(OPS[n].kind for n in names)) > 1:
        raise ValueError(f"One layer cannot mix image and signal operations: {names}.")
    return names


class AugLayer(nn.Module):
    """One augmentation layer: Q operations, learned weights ``w`` and magnitudes ``mu``.

    Args:
        ops: operation names or a group name (``geometric``, ``appearance``, ``signal``); see :data:`OPS`.
        init_magnitude: starting ``mu`` for every operation (a float, or ``{name: float}``).
        temperature: ``T`` of ``softmax(w' / T)``.
        scales: ``{name: value at magnitude 1}`` in the op's unit, overriding :data:`OPS` (e.g.
            ``{"rotate": math.pi / 6}``).
        fs: sampling rate in Hz, for signal operations.
        init_logit: starting value of every weight logit ``w'`` (the authors' code: 1).
        eval_draw: at evaluation, one operation drawn from ``w`` per ``"sample"`` or one per ``"batch"``
            (the authors' code).

    ``forward(x)``: ``(B, ...)`` -> ``(B, ...)``, the weighted mixture in training and one operation per
    sample (or per batch, ``eval_draw``) drawn from ``w`` at evaluation.

    Example
    -------
    >>> layer = AugLayer("signal", init_magnitude=0.0, fs=100)
    >>> x = torch.randn(4, 1, 1000)
    >>> torch.allclose(layer.eval()(x), x, atol=1e-5)  # magnitude 0 is the identity
    True
    """

    def __init__(self, ops="geometric", init_magnitude=0.5, temperature: float = 0.01,
                 scales: dict | None = None, fs: float | None = None, init_logit: float = 1.0,
                 eval_draw: str = "sample"):
        super().__init__()
        self.eval_draw = check_choice(eval_draw, EVAL_DRAWS, "eval_draw")
        self.names = layer_ops(ops)
        if OPS[self.names[0]].kind == "signal" and fs is None:
            raise ValueError("Signal operations need the sampling rate: pass fs=<Hz>.")
        self.fs, self.temperature = fs, float(temperature)
        unknown = sorted(set(scales or {}) - set(self.names))
        if unknown:
            raise ValueError(f"scales for operations not in this layer: {unknown}; its operations: {self.names}.")
        self.scales = [float((scales or {}).get(n, OPS[n].scale)) for n in self.names]  # in each op's unit
        # the scales in the units the ops take (degrees for rotate)
        self._fn_scales = [math.degrees(s) if OPS[n].degrees else s for n, s in zip(self.names, self.scales)]
        init = [float(init_magnitude.get(n, 0.5) if isinstance(init_magnitude, dict) else init_magnitude)
                for n in self.names]
        if not all(0 <= m <= 1 for m in init):
            raise ValueError(f"init_magnitude must be in [0, 1], got {init}.")
        # per-op constants of values(), built once (non-persistent: they follow the layer to its device)
        self.register_buffer("_scale", torch.tensor(self._fn_scales), persistent=False)
        self.register_buffer("_symmetric", torch.tensor([OPS[n].symmetric for n in self.names]), persistent=False)
        self.logits = nn.Parameter(torch.full((len(self.names),), float(init_logit)))  # w' (uniform weights)
        self.magnitude = nn.Parameter(torch.tensor(init))  # mu before the clamp

    def weights(self) -> torch.Tensor:
        """``(Q,)`` the operation weights ``softmax(w' / T)``."""
        return torch.softmax(self.logits / self.temperature, 0)

    def magnitudes(self) -> torch.Tensor:
        """``(Q,)`` the magnitudes ``mu`` in [0, 1]."""
        return unit_clamp(self.magnitude)

    def values(self, n: int, device=None) -> torch.Tensor:
        """``(n, Q)`` per-sample values, ``U(-1, 1) * mu * scale`` for symmetric operations and
        ``mu * scale`` for the others (differentiable in ``mu``), in the units the ops' ``fn`` take (degrees
        for rotate)."""
        device = device or self._scale.device
        u = torch.rand(n, len(self.names), device=device) * 2 - 1
        u = torch.where(self._symmetric.to(device), u, torch.ones_like(u))
        return u * self.magnitudes().to(device) * self._scale.to(device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = self.values(len(x), x.device).to(x.dtype)
        w = self.weights().to(x.dtype)
        shape = (-1,) + (1,) * (x.ndim - 1)
        if self.training:  # the sum from its first term (``sum()`` adds them to 0 first: the same floats)
            terms = (w[q] * OPS[n].fn(x, v[:, q], self.fs) for q, n in enumerate(self.names))
            out = next(terms)
            for term in terms:
                out = out + term
            return out
        pick = torch.multinomial(w.detach().float(), len(x) if self.eval_draw == "sample" else 1,
                                 replacement=True).to(x.device).expand(len(x))
        if all(OPS[n].per_sample for n in self.names):
            return self._each_by_its_pick(x, v, pick)
        out = torch.zeros_like(x)
        for q, n in enumerate(self.names):  # Q ops on the whole batch, each sample keeps the one it drew
            chosen = pick == q
            if chosen.any():
                out = torch.where(chosen.view(shape), OPS[n].fn(x, v[:, q], self.fs), out)
        return out

    def _each_by_its_pick(self, x: torch.Tensor, v: torch.Tensor, pick: torch.Tensor) -> torch.Tensor:
        """Evaluation of a layer of per-sample ops (:attr:`AugOp.per_sample`): each op on the samples that drew
        it, so every sample is warped once. The same floats as running every op on the whole batch and keeping
        each sample's own (tests/test_augnet.py checks it), for 1/Q of the warping."""
        out = torch.empty_like(x)
        for q, n in enumerate(self.names):
            chosen = pick == q
            if chosen.all():
                return OPS[n].fn(x, v[:, q], self.fs)
            if chosen.any():
                out[chosen] = OPS[n].fn(x[chosen], v[chosen, q], self.fs)
        return out

    def state(self) -> dict:
        """``{op: {"weight", "magnitude", "max_value"}}``: ``max_value = mu * scale`` in the op's unit
        (radians for rotate; see :data:`invlib.learned.UNITS`)."""
        w, mu = self.weights().tolist(), self.magnitudes().tolist()
        top = [mu[q] * s for q, s in enumerate(self._fn_scales)]
        top = [math.radians(t) if OPS[n].degrees else t for n, t in zip(self.names, top)]
        return {n: dict(weight=w[q], magnitude=mu[q], max_value=top[q]) for q, n in enumerate(self.names)}


class AugModule(nn.Module):
    """Stacked :class:`AugLayer` s and the regulariser.

    Args:
        layers: the layers, applied in order.
        reg: the regularisation strength ``lambda``.
        regulariser: ``"selective"`` (``-||w * mu||_2``, AugNet), ``"augerino"`` (``-||mu||_2``) or ``"none"``.
    """

    def __init__(self, layers: list[AugLayer], reg: float = 0.5, regulariser: str = "selective"):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.reg, self.regulariser = float(reg), check_choice(regulariser, REGULARISERS, "regulariser")

    @in_float32
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def penalty(self) -> torch.Tensor:
        """``lambda * R``: the sum over layers of ``-||w * mu||_2`` (or ``-||mu||_2``, or 0)."""
        if self.regulariser == "none" or self.reg == 0:
            return self.layers[0].magnitude.new_zeros(())
        terms = [(layer.weights() * layer.magnitudes() if self.regulariser == "selective" else layer.magnitudes())
                 for layer in self.layers]
        return -self.reg * sum(torch.linalg.vector_norm(t) for t in terms)

    def state(self) -> dict:
        return {f"layer{i}": layer.state() for i, layer in enumerate(self.layers)}


def augnet(trunk: nn.Module, ops="geometric", layers: int = 1, reg: float = 0.5, regulariser: str = "selective",
           copies: int = 4, init_magnitude=0.5, temperature: float = 0.01, scales: dict | None = None,
           fs: float | None = None, init_logit: float = 1.0, eval_draw: str = "sample") -> Invariant:
    """An AugNet: ``layers`` augmentation layers in front of ``trunk``, ``copies`` copies at evaluation.

    Args:
        trunk: any classifier (e.g. from :func:`invlib.models.create`).
        ops: the operations of every layer (a group name or a list), or one entry per layer, e.g.
            ``["appearance", "geometric", "geometric"]`` for the paper's three-layer CIFAR-10 model.
        layers: number of layers when ``ops`` names one set for all.
        reg, regulariser: see :class:`AugModule`.
        copies, init_magnitude, temperature, scales, fs, init_logit, eval_draw: see
            :class:`invlib.learned.Invariant` and :class:`AugLayer`.

    Returns:
        an :class:`invlib.learned.Invariant`; train it with :func:`invlib.train.fit` (Adam; the
        augmentation parameters take ``TrainConfig.aug_lr`` and ``aug_weight_decay``).

    Example
    -------
    >>> from invlib import models
    >>> net = augnet(models.create("signal_cnn"), ops="signal", fs=100, init_magnitude=0.05)
    >>> [round(s["max_value"], 3) for s in net.state()["layer0"].values()]
    [0.1, 0.005, 0.005]
    """
    per_layer = ops if isinstance(ops, (list, tuple)) and all(o in GROUPS for o in ops) else [ops] * layers
    mods = [AugLayer(o, init_magnitude, temperature, scales, fs, init_logit, eval_draw) for o in per_layer]
    return Invariant(AugModule(mods, reg, regulariser), trunk, copies)


def selected(state: dict) -> dict:
    """Per layer, the operation with the largest weight: ``{layer: (name, weight, max_value)}``.

    Example
    -------
    >>> selected({"layer0": {"rotate": dict(weight=0.9, magnitude=0.25, max_value=0.785),
    ...                      "shear_x": dict(weight=0.1, magnitude=0.5, max_value=0.15)}})
    {'layer0': ('rotate', 0.9, 0.785)}
    """
    out = {}
    for layer, ops in state.items():
        name = max(ops, key=lambda n: ops[n]["weight"])
        out[layer] = (name, ops[name]["weight"], ops[name]["max_value"])
    return out

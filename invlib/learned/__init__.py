"""Invariances learned end to end: augmentation modules in front of a trunk, averaged over copies.

The three methods share one wrapper, :class:`Invariant`: an augmentation module makes ``C`` transformed copies
of the input, the trunk maps each, and an aggregation step averages the copies' log-probabilities (``C = 1`` in
training, ``C = copies`` at evaluation, as the papers do; InstaAug averages logits, as its paper does).

- :mod:`invlib.learned.augnet`: AugNet (Rommel et al.), stacked layers of softmax-weighted operations
  with learned magnitudes and the selective regulariser ``-||w * mu||_2`` (paper E).
- :mod:`invlib.learned.augerino`: Augerino (Benton et al.), uniform distributions over the Lie algebra of
  the 2-D affine group with learned widths and the regulariser ``-||width||_2`` (paper E, and paper B's App. G).
- :mod:`invlib.learned.instaaug`: InstaAug (Miao et al.), an invariance module that reads each input and
  outputs that input's own distribution of crops or colour and rotation ranges, held in an entropy band (paper D).

The papers' experiments that train them live in their packages: :mod:`invlib.papers.e.experiments` (chapters
E1 to E4), :mod:`invlib.papers.b.rrc` (chapter B6) and the modules of :mod:`invlib.papers.d` (chapters D1 to D5).

An augmentation module is any ``nn.Module`` with ``forward(x) -> x`` (random, differentiable),
``penalty() -> scalar`` (the regulariser, already times its strength) and ``state() -> dict`` (what it has
learned, for logging). :func:`invlib.train.fit` trains an :class:`Invariant` like any model: it adds
:meth:`Invariant.penalty` to the loss, gives :meth:`Invariant.augmentation_parameters` their own
learning rate and weight decay (``TrainConfig.aug_lr``, ``aug_weight_decay``) and records ``state()`` after
every epoch.

What was learned: one shape, one unit per quantity
---------------------------------------------------
``state()`` of both methods is ``{layer: {op: {"weight": w, "magnitude": m, "max_value": v}}}`` (plain floats):

- ``layer``: ``"layer0"``, ``"layer1"``, ... in the order they apply (Augerino has one layer).
- ``op``: an operation name. Names shared by the two methods mean the same transformation in the same unit
  (``translate_x``, ``translate_y``, ``rotate``); :data:`UNITS` gives every name's unit.
- ``weight``: AugNet's ``softmax(w' / T)`` (sums to 1 over a layer); Augerino 1 (every generator applies to
  every image).
- ``magnitude``: AugNet's ``mu`` in [0, 1]; Augerino's full width ``theta`` of the uniform coefficient.
- ``max_value``: the largest transformation the op applies, in its unit: **radians** for rotations,
  **fractions of the width / height** for translations, **Hz** for frequency shifts, and the units of
  :data:`UNITS` for the rest (AugNet: ``mu * scale``; Augerino: ``theta / 2`` in Lie-algebra coefficients,
  which is radians for ``rotate`` and ``theta / 4`` of the size for the translations).

Example
-------
>>> from invlib import models
>>> from invlib.learned import augnet
>>> net = augnet.augnet(models.create("conv4", num_classes=4, in_chans=1, widths=(8, 8, 8, 8)),
...                     ops="geometric", copies=4)
>>> net.train()(torch.rand(5, 1, 28, 28)).shape, net.eval()(torch.rand(5, 1, 28, 28)).shape
(torch.Size([5, 4]), torch.Size([5, 4]))
>>> round(max_rotation(net.state()), 4)  # magnitude 0.5 of +-pi
1.5708
"""

from __future__ import annotations

import functools

import torch
from torch import nn

__all__ = ["UNITS", "Invariant", "in_float32", "max_rotation", "unit_clamp"]

UNITS = {  # op name -> unit of its max_value in state()
    "translate_x": "fraction of width", "translate_y": "fraction of height", "rotate": "radians",
    "shear_x": "shear coefficient", "shear_y": "shear coefficient", "contrast": "factor - 1",
    "brightness": "factor - 1", "sample_pairing": "mixing weight", "frequency_shift": "Hz",
    "ft_surrogate": "fraction of 2 pi", "gaussian_noise": "std", "scale": "log of the zoom factor",
    "stretch": "log of the stretch factor", "shear": "Lie-algebra coefficient",
}


def in_float32(method):
    """Run a learned augmentation's ``method(self, x, ...)`` in float32, whatever autocast surrounds it.

    A model trained under bf16 autocast (:attr:`invlib.train.TrainConfig.cpu_bf16`) runs its classifier in bf16;
    the augmentation's few parameters (widths, magnitudes, crop logits) and the warps they drive stay in float32:
    rounded to bf16's 8 bits, Augerino's warp matrices drove chapter B6's runs to NaN weights within an epoch.
    The warps are a small share of a training step. ``x`` ``(B, ...)`` is cast to float32 when it is floating.

    Example
    -------
    >>> class Scale(nn.Module):
    ...     @in_float32
    ...     def forward(self, x):
    ...         return x @ torch.eye(2)
    >>> with torch.autocast("cpu", dtype=torch.bfloat16):
    ...     Scale()(torch.rand(3, 2)).dtype
    torch.float32
    """
    @functools.wraps(method)
    def wrapper(self, x, *args, **kwargs):
        with torch.autocast(x.device.type, enabled=False):
            return method(self, x.float() if x.is_floating_point() else x, *args, **kwargs)

    return wrapper


def unit_clamp(x: torch.Tensor) -> torch.Tensor:
    """``x`` clamped to [0, 1], with gradient 1 everywhere (a straight-through clamp).

    ``torch.clamp`` passes no gradient at exactly 0 in torch 2.14.1, so a magnitude that starts at 0 (the
    AugNet paper's sinusoid setting) would never move; nor would one that a step pushed just below 0.
    Passing the gradient through keeps every magnitude trainable: below 0 the layer applies 0 (the
    identity) and the parameter can still come back.

    Example
    -------
    >>> m = torch.zeros(2, requires_grad=True)
    >>> unit_clamp(m).sum().backward()
    >>> m.grad
    tensor([1., 1.])
    """
    return x + (x.detach().clamp(0, 1) - x.detach())


class Invariant(nn.Module):
    """``trunk`` averaged over ``augment``-ed copies of its input.

    Args:
        augment: augmentation module (see the package docstring).
        trunk: any classifier mapping the augmented input to logits ``(B, K)``.
        copies: ``C`` at evaluation (1 copy in training).

    ``forward(x)`` with ``x`` ``(B, ...)`` returns ``(B, K)``: the trunk's logits in training; in evaluation
    the mean over ``C`` copies of their log-softmax (``reduce="logits"``: the mean of the logits, the
    pre-softmax output the invariance measure of :mod:`invlib.metrics` compares).

    Example
    -------
    >>> net = Invariant(nn.Identity(), nn.Linear(3, 2), copies=4).eval()
    >>> net(torch.rand(6, 3)).exp().sum(1).allclose(torch.ones(6))  # copies agree: log-probabilities
    True
    """

    def __init__(self, augment: nn.Module, trunk: nn.Module, copies: int = 4):
        super().__init__()
        if int(copies) != copies or copies < 1:
            raise ValueError(f"copies must be a positive integer, got {copies!r}.")
        self.augment, self.trunk, self.copies = augment, trunk, int(copies)

    def forward(self, x: torch.Tensor, copies: int | None = None, reduce: str = "log_softmax") -> torch.Tensor:
        if copies is not None and (int(copies) != copies or copies < 1):
            raise ValueError(f"copies must be a positive integer, got {copies!r}.")
        c = copies or (1 if self.training else self.copies)
        if reduce not in ("log_softmax", "logits"):
            raise ValueError(f"reduce must be 'log_softmax' or 'logits', got {reduce!r}.")
        out = self.trunk(self.augment(x.repeat(c, *([1] * (x.ndim - 1))) if c > 1 else x))
        if c == 1 and (self.training or reduce == "logits"):
            return out
        out = out.float().log_softmax(-1) if reduce == "log_softmax" else out.float()
        return out.view(c, len(x), -1).mean(0)

    def penalty(self) -> torch.Tensor:
        """The augmentation module's regulariser (added to the training loss by :func:`invlib.train.fit`)."""
        return self.augment.penalty()

    def augmentation_parameters(self):
        """The parameters :func:`invlib.train.make_optimizer` puts in their own group."""
        return self.augment.parameters()

    def state(self) -> dict:
        """What the augmentation module has learned (plain numbers)."""
        return self.augment.state()


def max_rotation(state: dict) -> float:
    """The largest rotation, in radians, that a learned augmentation applies: the ``max_value`` of the
    ``rotate`` op in the first layer that has one (whatever its weight), 0 when no layer has one.

    Args:
        state: ``state()`` of an AugNet or Augerino module (see the package docstring).

    Example
    -------
    >>> max_rotation({"layer0": {"rotate": {"weight": 1.0, "magnitude": 1.5708, "max_value": 0.7854}}})
    0.7854
    >>> max_rotation({"layer0": {"contrast": {"weight": 1.0, "magnitude": 0.5, "max_value": 0.5}}})
    0.0
    """
    for ops in state.values():
        if "rotate" in ops:
            return ops["rotate"]["max_value"]
    return 0.0

"""Invariances learned end to end: augmentation modules in front of a trunk, averaged over copies.

Both methods of paper E share one wrapper, :class:`Invariant`: an augmentation module makes ``C``
transformed copies of the input, the trunk maps each, and an aggregation step averages the copies'
log-probabilities (``C = 1`` in training, ``C = copies`` at evaluation, as both papers do).

- :mod:`invlib.learned.augnet`: AugNet (Rommel et al.), stacked layers of softmax-weighted operations
  with learned magnitudes and the selective regulariser ``-||w * mu||_2``.
- :mod:`invlib.learned.augerino`: Augerino (Benton et al.), uniform distributions over the Lie algebra of
  the 2-D affine group with learned widths and the regulariser ``-||width||_2``.

An augmentation module is any ``nn.Module`` with ``forward(x) -> x`` (random, differentiable),
``penalty() -> scalar`` (the regulariser, already times its strength) and ``state() -> dict`` (what it has
learned, for logging). :func:`invlib.train.fit` trains an :class:`Invariant` like any model: it adds
:meth:`Invariant.penalty` to the loss and gives :meth:`Invariant.augmentation_parameters` their own
learning rate and weight decay (``TrainConfig.aug_lr``, ``aug_weight_decay``).

Example
-------
>>> from invlib import models
>>> from invlib.learned import augnet
>>> net = augnet.augnet(models.create("conv4", num_classes=4, in_chans=1, widths=(8, 8, 8, 8)),
...                     ops="geometric", copies=4)
>>> net.train()(torch.rand(5, 1, 28, 28)).shape, net.eval()(torch.rand(5, 1, 28, 28)).shape
(torch.Size([5, 4]), torch.Size([5, 4]))
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import train as _train

__all__ = ["Invariant", "fit", "max_rotation", "settings", "unit_clamp"]


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


def fit(model: nn.Module, train, cfg: _train.TrainConfig, val=None, test=None, progress: bool = False,
        checkpoint=None, augment=None) -> list[dict]:
    """Train ``model`` with :func:`invlib.train.fit`, recording after every epoch what it has learned.

    Args:
        model: an :class:`Invariant` (its ``state()`` is logged) or any classifier.
        train, val, test: ``Dataset`` or ``(x (N, ...), labels (N,))``; val and test are evaluated after
            every epoch (at ``C`` copies for an :class:`Invariant`).
        cfg: :class:`invlib.train.TrainConfig`.
        augment: a fixed augmentation ``augment(x, generator) -> x`` for plain models (the baselines).

    Returns:
        the history: one dict per epoch with ``loss``, ``train_acc``, ``val_acc``, ``test_acc``,
        ``test_at_best_val`` (the early-stopped test accuracy) and ``state`` (the learned augmentation).

    Example
    -------
    >>> from invlib import models
    >>> from invlib.learned import augnet
    >>> x, y = torch.rand(64, 1, 28, 28), torch.randint(0, 4, (64,))
    >>> net = augnet.augnet(models.create("conv4", num_classes=4, in_chans=1, widths=(4, 4, 4, 4)), "geometric")
    >>> hist = fit(net, (x, y), _train.TrainConfig(epochs=2, batch_size=32, optimizer="adam", lr=1e-3),
    ...            val=(x, y))
    >>> sorted(hist[-1]["state"]["layer0"])[:2], len(hist)
    (['rotate', 'shear_x'], 2)
    """
    best = {"val": -1.0, "test": None}

    def record(epoch: int, rec: dict) -> None:
        if hasattr(model, "state"):
            rec["state"] = model.state()
        if val is not None:
            rec["val_acc"] = _train.evaluate(model, val, cfg.eval_batch_size)["acc"]
        if test is not None:
            rec["test_acc"] = _train.evaluate(model, test, cfg.eval_batch_size)["acc"]
            if val is None or rec["val_acc"] > best["val"]:
                best["val"], best["test"] = rec.get("val_acc", -1.0), rec["test_acc"]
            rec["test_at_best_val"] = best["test"]

    return _train.fit(model, train, cfg, augment=augment, progress=progress, callback=record, checkpoint=checkpoint)


# ----------------------------------------------------------------------------- per-profile settings
# The paper's settings at ``paper`` (and ``gpu``); ``cpu`` and ``smoke`` keep the method and shrink data,
# trunk width and epochs to the 3-minute / 60-second budgets of a 2-core machine. Each notebook says
# where it departs from the paper and why.
_PAPER = {
    "sprites": dict(n_train=10_000, n_test=5_000, size=32, epochs=20, batch_size=128, widths=(32, 64, 128, 256),
                    lr=5e-4, aug_lr=5e-4, augerino_lr=1e-2, reg=0.5, augerino_reg=0.05, init_magnitude=1 / 8),
    "sinusoids": dict(n_train=400, n_test=200, epochs=50, batch_size=32, widths=(2, 2), lr=1e-2, reg=0.2,
                      weight_decay=1e-4, init_magnitude=0.0, seeds=(0, 1, 2, 3, 4, 5), copies=4),
    "capacity": dict(n_train=400, n_test=200, epochs=50, batch_size=32, lr=1e-2, reg=0.8, weight_decay=1e-4,
                     init_magnitude=0.05, copies=10, widths=(4, 16, 64), depths=(1, 2, 3)),
    "images": dict(dataset="cifar10", n_train=50_000, n_test=10_000, val_fraction=0.2, epochs=200, batch_size=128,
                   trunk="small_resnet18", widths=None, lr=1e-2, aug_lr=5e-4, augnet_lr=5e-4, weight_decay=1e-4,
                   augerino_reg=0.01, reg=(0.1, 0.1, 0.5), init_magnitude=0.5, copies=4),
}
_SMALLER = {
    "gpu": {"images": dict(epochs=30)},
    "cpu": {"sprites": dict(n_train=2560, n_test=1000, size=28, epochs=12, widths=(8, 16, 32, 64), aug_lr=2e-3),
            "capacity": dict(widths=(4, 16, 64), depths=(1, 2)),
            "images": dict(dataset="fashion_mnist", n_train=5000, n_test=2000, epochs=4, trunk="conv4",
                           widths=(8, 16, 32, 64), aug_lr=2e-3, augnet_lr=2e-3)},
    "smoke": {"sprites": dict(n_train=1024, n_test=500, size=28, epochs=3, widths=(8, 16, 32, 64), aug_lr=2e-3),
              "sinusoids": dict(epochs=12, seeds=(0,)),
              "capacity": dict(epochs=12, widths=(4, 64), depths=(1,)),
              "images": dict(dataset="fashion_mnist", n_train=1500, n_test=500, epochs=2, trunk="conv4",
                             widths=(8, 16, 32, 64), aug_lr=2e-3, augnet_lr=2e-3)},
}


def settings(experiment: str, profile, **overrides) -> dict:
    """The settings of one of paper E's experiments (``sprites``, ``sinusoids``, ``capacity``, ``images``)
    on a profile, with the notebook's overrides that are not ``None``.

    Example
    -------
    >>> settings("sprites", "paper")["epochs"], settings("sprites", "cpu", epochs=5)["epochs"]
    (20, 5)
    """
    from ..profiles import get_profile
    from ..utils import check_choice

    check_choice(experiment, _PAPER, "experiment")
    name = get_profile(profile).name
    out = {**_PAPER[experiment], **_SMALLER.get(name, {}).get(experiment, {})}
    unknown = sorted(set(overrides) - set(out))
    if unknown:
        raise ValueError(f"Unknown setting(s) {unknown} for {experiment!r}; valid: {sorted(out)}.")
    return {**out, **{k: v for k, v in overrides.items() if v is not None}}


def max_rotation(state: dict) -> float:
    """The largest rotation, in radians, that a learned augmentation applies: ``mu * scale`` of AugNet's
    rotate op (first layer that has one, whatever its weight) or Augerino's ``theta_rotation / 2``.

    Example
    -------
    >>> max_rotation({"rotation": {"width": 1.5708, "max_value": 0.7854}})
    0.7854
    >>> round(max_rotation({"layer0": {"rotate": {"weight": 1.0, "magnitude": 0.25, "max_value": 45.0}}}), 4)
    0.7854
    """
    if "rotation" in state:
        return state["rotation"]["max_value"]
    for ops in state.values():
        if "rotate" in ops:
            return math.radians(ops["rotate"]["max_value"])
    return 0.0

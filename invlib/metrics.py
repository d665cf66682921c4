"""Measures shared by the papers: relative invariance of a representation to a transformation.

``relative_invariance`` is paper B's per-image score (Bouchacourt et al., section 3), reused by AugNet's
Eq. 4: ``(b - d(z, z_t)) / b`` with ``d`` the cosine distance ``1 - cos``, ``z`` the representation of
``x``, ``z_t`` that of ``T(x)``, and ``b = d(z, z_t[perm])`` the distance to a random other image's
transformed representation. 1 means ``T`` does not move the representation at all, 0 that it moves it as
far as swapping the image for another, below 0 farther.

Example
-------
>>> z = torch.randn(100, 8)
>>> round(float(relative_invariance(z, z).min()), 4)  # the identity transform
1.0
>>> summary(relative_invariance(z, torch.randn(100, 8)))["median"] < 0.5
True
"""

from __future__ import annotations

import functools

import torch


def cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``1 - cos(a_i, b_i)`` per row: ``(N, D), (N, D) -> (N,)``.

    Example
    -------
    >>> cosine_distance(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 2.0]]))
    tensor([1.])
    """
    return 1 - torch.nn.functional.cosine_similarity(a.flatten(1).float(), b.flatten(1).float(), dim=1, eps=1e-12)


def relative_invariance(z: torch.Tensor, z_t: torch.Tensor, perm: torch.Tensor | None = None,
                        generator: torch.Generator | None = None) -> torch.Tensor:
    """Per-sample relative invariance ``(b - d(z, z_t)) / b``, ``b = d(z, z_t[perm])``: ``(N, D) x2 -> (N,)``.

    ``perm`` (default: a random permutation with no fixed point, drawn from ``generator``) pairs each image
    with another one. Needs ``N >= 2``.

    Example
    -------
    >>> z = torch.eye(3)
    >>> relative_invariance(z, z, perm=torch.tensor([1, 2, 0]))
    tensor([1., 1., 1.])
    """
    if z.shape != z_t.shape or len(z) < 2:
        raise ValueError(f"z and z_t must have the same shape (N, ...) with N >= 2, got {tuple(z.shape)} "
                         f"and {tuple(z_t.shape)}.")
    if perm is None:  # a random derangement: shift a random order by one
        order = torch.randperm(len(z), generator=generator)
        perm = torch.empty_like(order)
        perm[order] = order.roll(1)
    b = cosine_distance(z, z_t[perm.to(z.device)])
    return (b - cosine_distance(z, z_t)) / b.clamp_min(1e-12)


@torch.inference_mode()
def invariance(model, x: torch.Tensor, transform, batch_size: int = 512,
               seed: int = 0, device: str | torch.device | None = None) -> torch.Tensor:
    """Relative invariance of ``model``'s outputs to ``transform``, one score per input: ``(N, ...) -> (N,)``.

    Args:
        model: maps a batch to representations ``(B, D)`` (e.g. pre-softmax outputs); put it in eval mode.
            An ``nn.Module`` or any callable (e.g. ``lambda b: net(b, reduce="logits")``).
        x: inputs ``(N, ...)``, on any device.
        transform: ``transform(x_batch, generator) -> x_batch``, random or not; it gets the batches on
            ``x``'s device with a CPU ``generator``, so its draws do not depend on where the model runs.
        seed: seeds the transformation draws and the pairing permutation.
        device: where ``model`` runs; each batch (and its transform) is moved there. Default: the device of
            the model's parameters when it is an ``nn.Module`` that has some (also inside a ``functools.partial``
            or a bound method), else (a plain callable) ``x``'s.

    Example
    -------
    >>> pool = lambda b: (b - 0.5).mean((2, 3))  # invariant to any permutation of the pixels
    >>> x = torch.rand(16, 3, 8, 8)
    >>> shuffle = lambda b, g: b.flatten(2)[..., torch.randperm(64, generator=g)].view_as(b)
    >>> bool(invariance(pool, x, shuffle).min() > 0.999)
    True
    """
    device = torch.device(device) if device is not None else _device_of(model, x)
    gen = torch.Generator().manual_seed(seed)
    z, z_t = [], []
    for i in range(0, len(x), batch_size):
        xb = x[i:i + batch_size]
        z.append(model(xb.to(device)).float().cpu())
        z_t.append(model(transform(xb, gen).to(device)).float().cpu())
    return relative_invariance(torch.cat(z), torch.cat(z_t), generator=gen)


def _device_of(model, x: torch.Tensor) -> torch.device:
    """The device of ``model``'s first parameter (or buffer), looking through ``functools.partial`` and bound
    methods to the module; ``x``'s for a callable without any."""
    while isinstance(model, functools.partial):
        model = model.func
    model = getattr(model, "__self__", model)
    if isinstance(model, torch.nn.Module):
        for t in (*model.parameters(), *model.buffers()):
            return t.device
    return x.device


def summary(scores: torch.Tensor) -> dict:
    """``{"median", "q25", "q75", "mean"}`` of per-sample scores (the paper reports medians and quartiles).

    Example
    -------
    >>> summary(torch.arange(5.0))
    {'median': 2.0, 'q25': 1.0, 'q75': 3.0, 'mean': 2.0}
    """
    q = torch.quantile(scores.float(), torch.tensor([0.5, 0.25, 0.75]))
    return dict(median=float(q[0]), q25=float(q[1]), q75=float(q[2]), mean=float(scores.float().mean()))

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

import numpy as np
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
    _check_pair(z, z_t)
    if perm is None:  # a random derangement: shift a random order by one
        order = torch.randperm(len(z), generator=generator)
        perm = torch.empty_like(order)
        perm[order] = order.roll(1)
    b = cosine_distance(z, z_t[perm.to(z.device)])
    return (b - cosine_distance(z, z_t)) / b.clamp_min(1e-12)


def _check_pair(z: torch.Tensor, z_t: torch.Tensor) -> None:
    """Representations of images and of their transformed versions: the same shape ``(N, ...)``, ``N >= 2``."""
    if z.shape != z_t.shape or len(z) < 2:
        raise ValueError(f"z and z_t must have the same shape (N, ...) with N >= 2, got {tuple(z.shape)} "
                         f"and {tuple(z_t.shape)}.")


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


def equivariance_alignment(z: torch.Tensor, z_t: torch.Tensor, generator: torch.Generator | None = None) -> float:
    """Paper B's equivariance score (App. D): how much more aligned the responses ``D = z - z_t`` are than
    a baseline ``B`` made of ``D`` with every column shuffled independently over the rows.

    ``(N, D), (N, D) -> float``: mean pairwise cosine distance of the rows of ``B`` minus that of ``D``, over
    all pairs ``i != j`` (the expectation of the authors' ``cosdist(B, B[perm]) - cosdist(D, D[perm])`` over
    random pairings). Higher means the transform moves every representation in a more consistent direction
    than chance; 0 means no alignment beyond the columns' own distributions. A row of zeros (the image did
    not move) has cosine 0 with every row. Needs ``N >= 2``.

    Example
    -------
    >>> g = torch.Generator().manual_seed(0)
    >>> z = torch.randn(200, 16, generator=g)
    >>> abs(equivariance_alignment(z, z + torch.randn(200, 16, generator=g), g)) < 0.05  # random responses
    True
    >>> step = torch.randn(16, generator=g)  # every response along one direction, of varying length
    >>> equivariance_alignment(z, z - torch.rand(200, 1, generator=g).mul(3).exp() * step, g) > 0.3
    True
    """
    _check_pair(z, z_t)
    d = (z - z_t).flatten(1).float()
    order = torch.rand(d.shape, generator=generator).argsort(0).to(d.device)
    b = d.gather(0, order)
    return float(_mean_pair_cosine_distance(b) - _mean_pair_cosine_distance(d))


def _mean_pair_cosine_distance(rows: torch.Tensor) -> torch.Tensor:
    """Mean of ``1 - cos(r_i, r_j)`` over all pairs ``i != j`` of the rows ``(N, D)``."""
    u = torch.nn.functional.normalize(rows, dim=1, eps=1e-12)
    n = len(u)
    total = u.sum(0).square().sum() - u.square().sum()  # sum over i != j of <u_i, u_j>
    return 1 - total / (n * (n - 1))


def rank(x: torch.Tensor) -> torch.Tensor:
    """Ranks ``0 .. N-1`` along the last dimension, ties sharing their average rank: ``(..., N) -> (..., N)``.

    Example
    -------
    >>> rank(torch.tensor([10.0, 30.0, 20.0, 20.0])).tolist()
    [0.0, 3.0, 1.5, 1.5]
    """
    x = torch.as_tensor(x, dtype=torch.float64)
    if x.isnan().any():
        raise ValueError("rank: the values hold NaN, which has no rank; drop or fill them first.")
    v, order = x.sort(dim=-1)
    left = torch.searchsorted(v.contiguous(), v.contiguous(), side="left")
    right = torch.searchsorted(v.contiguous(), v.contiguous(), side="right")
    return torch.empty_like(x).scatter_(-1, order, (left + right - 1).to(x.dtype) / 2)


def spearman(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Spearman rank correlation along the last dimension (average ranks for ties): ``(..., N) x2 -> (...)``.

    NaN where one side is constant.

    Example
    -------
    >>> float(spearman(torch.tensor([1.0, 2, 3, 4]), torch.tensor([10.0, 20, 25, 99])))
    1.0
    >>> float(spearman(torch.tensor([1.0, 2, 3]), torch.tensor([3.0, 2, 1])))
    -1.0
    """
    return _pearson(rank(a), rank(b))


def rank_correlation_test(a, b, permutations: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Spearman's rho of two paired samples ``(N,)`` and its two-sided permutation p-value.

    The p-value is ``(1 + #{|rho_perm| >= |rho|}) / (1 + permutations)`` over random re-pairings of ``b``
    (exact up to Monte Carlo error; no distributional assumption).

    A constant sample gives ``(nan, nan)``; NaN values raise ``ValueError``.

    Example
    -------
    >>> rho, p = rank_correlation_test(torch.arange(30.0), torch.arange(30.0) ** 2)
    >>> rho, p < 0.001
    (1.0, True)
    """
    a = torch.as_tensor(np.array(a, dtype=np.float64))
    b = torch.as_tensor(np.array(b, dtype=np.float64))
    if a.shape != b.shape or a.ndim != 1 or len(a) < 3:
        raise ValueError(f"need two paired samples of the same length >= 3, got {tuple(a.shape)}, {tuple(b.shape)}")
    if a.isnan().any() or b.isnan().any():
        raise ValueError("the samples hold NaN (e.g. a WordNet similarity between synsets with no common path); "
                         "drop those pairs first.")
    if len(a.unique()) == 1 or len(b.unique()) == 1:
        return float("nan"), float("nan")  # a constant sample has no ranking to correlate
    ra, rb = rank(a), rank(b)
    rho = float(_pearson(ra, rb))
    g = torch.Generator().manual_seed(seed)
    hits = 0
    for start in range(0, permutations, 1000):  # re-pairing the ranks re-pairs the samples
        k = min(1000, permutations - start)
        null = _pearson(ra.expand(k, -1), rb[torch.rand(k, len(rb), generator=g).argsort(1)])
        hits += int((null.abs() >= abs(rho) - 1e-12).sum())
    return rho, (1 + hits) / (1 + permutations)


def _pearson(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a - a.mean(-1, keepdim=True), b - b.mean(-1, keepdim=True)
    return (a * b).sum(-1) / (a.square().sum(-1) * b.square().sum(-1)).sqrt()


def iou(a, b) -> float:
    """Intersection over union of two collections taken as sets (1.0 for two empty ones).

    Example
    -------
    >>> iou(["rotate", "color"], ["color", "invert", "solarize"])
    0.25
    """
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def sem(values) -> float:
    """Standard error of the mean, ``std / sqrt(n)`` (``n - 1`` in the std); NaN for fewer than 2 values.

    Example
    -------
    >>> round(sem([1.0, 2.0, 3.0, 4.0]), 4)
    0.6455
    """
    v = torch.as_tensor(np.asarray(values, dtype=np.float64)).flatten()
    return float(v.std() / len(v) ** 0.5) if len(v) >= 2 else float("nan")


# ---------------------------------------------------------------------- per-class comparisons (paper B, App. B, D.1)
def per_class_accuracy(pred, labels, num_classes: int) -> np.ndarray:
    """``(K,)`` accuracy of predictions ``pred`` ``(N,)`` per class of ``labels`` ``(N,)`` (NaN for a class with no
    sample).

    Example
    -------
    >>> per_class_accuracy(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]), 4).round(2).tolist()
    [1.0, 1.0, 0.5, nan]
    """
    pred, labels = (torch.as_tensor(v).long().flatten() for v in (pred, labels))
    if pred.shape != labels.shape:
        raise ValueError(f"pred and labels must have the same length, got {len(pred)} and {len(labels)}.")
    total = torch.bincount(labels, minlength=num_classes)[:num_classes].double()
    right = torch.bincount(labels[pred == labels], minlength=num_classes)[:num_classes].double()
    return (right / total).numpy()  # 0 / 0 = NaN for an empty class


def class_comparison(acc_a, acc_b) -> dict:
    """Per-class comparison of two groups of runs, every run of ``a`` against every run of ``b``
    (App. D.1: ``a`` = RandomResizedCrop seeds, ``b`` = no-augmentation seeds).

    Args:
        acc_a: ``(Sa, K)`` per-class accuracies of the runs of ``a``; acc_b: ``(Sb, K)`` those of ``b``.

    Returns:
        ``{"hurt": (K,) share of the Sa x Sb comparisons where ``a`` is below ``b``, "helped": (K,) share where it
        is above, "loss": (K,) mean of ``b - a`` over the comparisons where ``a`` is hurt (NaN if never),
        "comparisons": Sa * Sb}``

    Example
    -------
    >>> c = class_comparison([[0.5, 0.9], [0.6, 0.9]], [[0.7, 0.8]])
    >>> c["hurt"].tolist(), c["helped"].tolist(), c["loss"].round(2).tolist(), c["comparisons"]
    ([1.0, 0.0], [0.0, 1.0], [0.15, nan], 2)
    """
    a, b = np.asarray(acc_a, dtype=np.float64), np.asarray(acc_b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"acc_a and acc_b must be (runs, classes) with the same classes, got {a.shape}, {b.shape}.")
    diff = b[None, :, :] - a[:, None, :]  # (Sa, Sb, K): positive where a is hurt
    hurt = diff > 0
    with np.errstate(invalid="ignore"):
        loss = np.where(hurt, diff, 0).sum((0, 1)) / hurt.sum((0, 1))
    return dict(hurt=hurt.mean((0, 1)), helped=(diff < 0).mean((0, 1)), loss=loss, comparisons=len(a) * len(b))


def helped(pred_base, pred, labels) -> np.ndarray:
    """Indices of the samples that ``pred_base`` gets wrong and ``pred`` right (App. B's "helped samples").

    Example
    -------
    >>> helped([0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 1, 1]).tolist()
    [1, 3]
    """
    base, new, y = (np.asarray(v) for v in (pred_base, pred, labels))
    return np.flatnonzero((base != y) & (new == y))


def mean_iou(lists_a, lists_b=None) -> float:
    """Mean :func:`iou` over all pairs of lists, one from ``lists_a`` and one from ``lists_b``; without
    ``lists_b``, over the pairs of distinct lists of ``lists_a`` (App. B's intra-method IoU).

    Example
    -------
    >>> mean_iou([[1, 2], [2, 3]]), mean_iou([[1, 2]], [[1, 2], [3]])
    (0.3333333333333333, 0.5)
    """
    if lists_b is None:
        pairs = [(a, b) for i, a in enumerate(lists_a) for b in lists_a[i + 1:]]
    else:
        pairs = [(a, b) for a in lists_a for b in lists_b]
    if not pairs:
        raise ValueError("mean_iou needs at least one pair of lists (two lists within one group).")
    return float(np.mean([iou(a, b) for a, b in pairs]))

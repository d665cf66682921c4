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

from .streaming import batches


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
    for xb in batches(x, batch_size, device=device):  # decoded by workers when x is on disk
        xb = xb.float().div(255) if xb.dtype == torch.uint8 else xb
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
    all pairs ``i != j``. The authors' ``cosdist(B, B[perm]) - cosdist(D, D[perm])`` uses one random
    permutation, which can pair a row with itself (distance 0), so its expectation is ``(N - 1) / N`` times this
    (15/16 at 16 rows, 0.9999 at their 9,600). Higher means the transform moves every representation in a more
    consistent direction than chance; 0 means no alignment beyond the columns' own distributions. A row of zeros
    (the image did not move) has cosine 0 with every row. Needs ``N >= 2``.

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
    d, b = alignment_responses(z, z_t, generator)
    return float(_mean_pair_cosine_distance(b) - _mean_pair_cosine_distance(d))


def alignment_responses(z: torch.Tensor, z_t: torch.Tensor,
                        generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The two sets of rows :func:`equivariance_alignment` compares: the responses ``D = z - z_t`` flattened to
    ``(N, D)`` float and their baseline ``B``, each column of ``D`` shuffled over the rows by one draw from
    ``generator`` (the one draw of the metric, so a per-pair form of it gets the same baseline).

    Example
    -------
    >>> z = torch.arange(12.0).reshape(4, 3)
    >>> d, b = alignment_responses(z, torch.zeros(4, 3), torch.Generator().manual_seed(0))
    >>> torch.equal(d, z), torch.equal(b.sort(0).values, z)  # every column keeps its values
    (True, True)
    """
    _check_pair(z, z_t)
    d = (z - z_t).flatten(1).float()
    order = torch.rand(d.shape, generator=generator).argsort(0).to(d.device)
    return d, d.gather(0, order)


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
    v = torch.tensor(np.asarray(values, dtype=np.float64)).flatten()  # a copy: read-only arrays (pandas) warn
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


# ---------------------------------------------------------------------- learned maps between representations (paper C)
def rms_scale(r: torch.Tensor) -> torch.Tensor:
    """``(D,)`` root mean square of each dimension of features ``r`` ``(N, D)`` (1 where a dimension is all 0).

    Dividing features by it gives every dimension a similar magnitude, as paper C does before its L2 measures.

    Example
    -------
    >>> rms_scale(torch.tensor([[3.0, 0.0], [4.0, 0.0]])).tolist()
    [3.535533905029297, 1.0]
    """
    rms = r.float().pow(2).mean(0).sqrt()
    return torch.where(rms > 0, rms, torch.ones_like(rms))


def normalized_l2(r: torch.Tensor, r_hat: torch.Tensor) -> torch.Tensor:
    """Paper C's ``L_L2``: ``||r - r_hat|| / ||r||`` per sample over the last dimension; ``(..., N, D)`` ->
    ``(..., N)`` (0 where both are 0).

    Example
    -------
    >>> normalized_l2(torch.tensor([[3.0, 4.0]]), torch.tensor([[3.0, 0.0]])).tolist()
    [0.800000011920929]
    """
    norm = r.norm(dim=-1)
    return (r - r_hat).norm(dim=-1) / torch.where(norm > 0, norm, torch.ones_like(norm))


class LinearMaps(torch.nn.Module):
    """``G`` independent maps of features, fitted together: ``ReLU(r + W r + b)`` (``residual=True``, paper C's
    ``M_g``, Eq. 8: the identity when ``W = 0, b = 0``) or ``ReLU(W r + b)`` (the ``E`` of Eq. 4).

    ``forward(r)``: ``(G, N, D_in)`` (or ``(N, D_in)``, the same inputs for every map) -> ``(G, N, D_out)``.
    ``W`` starts at ``N(0, init_std^2)``, ``b`` at 0 (:func:`fit_maps` starts a non-residual ``b`` at the mean
    target).

    Example
    -------
    >>> maps = LinearMaps(3, 8)
    >>> maps(torch.rand(5, 8)).shape
    torch.Size([3, 5, 8])
    """

    def __init__(self, groups: int, d_in: int, d_out: int | None = None, residual: bool = True,
                 init_std: float = 1e-3, generator: torch.Generator | None = None):
        super().__init__()
        d_out = d_in if d_out is None else d_out
        if residual and d_out != d_in:
            raise ValueError(f"A residual map keeps the width: d_out must equal d_in ({d_in}), got {d_out}.")
        self.residual = residual
        self.weight = torch.nn.Parameter(torch.randn(groups, d_out, d_in, generator=generator) * init_std)
        self.bias = torch.nn.Parameter(torch.zeros(groups, 1, d_out))

    def forward(self, r: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(r, self.weight.transpose(1, 2)) + self.bias
        return torch.relu(r + y if self.residual else y)


def fit_maps(inputs: torch.Tensor, targets: torch.Tensor, residual: bool = True, epochs: int = 10,
             batch_size: int = 16, lr: float = 0.3, momentum: float = 0.9, weight_decay: float = 1e-5,
             init_std: float = 1e-3, seed: int = 0, loss: str = "l2", head=None, labels=None) -> LinearMaps:
    """Fit ``G`` :class:`LinearMaps` at once by mini-batch SGD with momentum (paper C, Sec. 5.2-5.3).

    Args:
        inputs: ``(G, N, D_in)`` features to map (e.g. of ``G`` transformed versions of ``N`` images, or of ``G``
            other networks).
        targets: ``(N, D_out)`` or ``(G, N, D_out)`` features to reach (e.g. of the untransformed images).
        loss: ``"l2"``: squared error averaged over dimensions (the paper's L2, divided by the width so that the
            learning rate does not depend on it); ``"ce"``: cross-entropy of ``head(mapped)`` against ``labels``
            ``(N,)`` (the frozen classifier, the alternative of Sec. 3.3).
        epochs, batch_size, lr, momentum, weight_decay, init_std: the optimiser. The paper: online SGD (batch 1),
            10 epochs, learning rate 1e-3 on the summed squared error, momentum 0.9, weight decay 1e-5, W with
            std 1e-3. Mini-batches of 16 at 0.3 on the mean reach the same fit ~10x faster here.

    Returns:
        the fitted maps (``requires_grad`` off), in eval use: ``maps(inputs)`` is ``(G, N, D_out)``.

    Example
    -------
    >>> r = torch.rand(2, 400, 6)
    >>> target = torch.relu(r[0] @ torch.tensor([[1.0, 0.5], [0.0, 1.0], [0, 0], [0, 0], [0, 0], [0, 0]]))
    >>> maps = fit_maps(r, target, residual=False, epochs=30)
    >>> err = normalized_l2(target, maps(r)).mean(-1)
    >>> bool(err[0] < 0.05), bool(err[1] > 0.2)   # the related input is mapped, the unrelated one is not
    (True, True)
    """
    if inputs.ndim != 3:
        raise ValueError(f"inputs must be (G, N, D_in), got shape {tuple(inputs.shape)}.")
    g, n, d_in = inputs.shape
    targets = targets.expand(g, -1, -1) if targets.ndim == 2 else targets
    if targets.shape[:2] != (g, n):
        raise ValueError(f"targets must be (N, D_out) or (G, N, D_out) with N = {n}, got {tuple(targets.shape)}.")
    check_loss = ("l2", "ce")
    if loss not in check_loss:
        raise ValueError(f"Unknown loss {loss!r}. Valid losses: {', '.join(check_loss)}.")
    if loss == "ce" and (head is None or labels is None):
        raise ValueError("loss='ce' needs the frozen classifier head and the labels (N,).")
    gen = torch.Generator().manual_seed(seed)
    maps = LinearMaps(g, d_in, targets.shape[-1], residual, init_std, gen).to(inputs.device)
    if not residual:  # start E at the mean target, every unit active (from b = 0 large steps can kill them)
        maps.bias.data.copy_(targets.detach().float().mean(1, keepdim=True))
    opt = torch.optim.SGD(maps.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    inputs, targets = inputs.detach().float(), targets.detach().float()
    with torch.enable_grad():
        for _ in range(epochs):
            order = torch.randperm(n, generator=gen).to(inputs.device)
            for i in range(0, n, batch_size):
                idx = order[i:i + batch_size]
                out = maps(inputs[:, idx])
                if loss == "l2":
                    value = (out - targets[:, idx]).pow(2).mean(-1).mean(-1).sum()
                else:
                    logits = head(out.flatten(0, 1))
                    value = torch.nn.functional.cross_entropy(logits, labels[idx].repeat(g)) * g
                opt.zero_grad(set_to_none=True)
                value.backward()
                opt.step()
    return maps.requires_grad_(False)


def representation_distances(features: list[torch.Tensor], fit: int, per_image: bool = False,
                             **fit_options) -> torch.Tensor:
    """Paper C's one-way distances between representations (Eq. 4): ``(M, M)`` with entry ``[i, j]`` the mean
    :func:`normalized_l2` error of predicting network ``i``'s features from network ``j``'s by a fitted
    ``E(r) = ReLU(W r + b)`` (0 on the diagonal); with ``per_image``, ``(M, M, N - fit)``: the same errors on each
    scoring image, before the mean (so that a pair's asymmetry can get an interval over the images).

    Args:
        features: ``M`` tensors ``(N, D_m)`` of the same ``N`` images, each already divided by its
            :func:`rms_scale`; the first ``fit`` rows fit the maps, the rest score them.
        fit_options: passed to :func:`fit_maps` (``residual`` is False here).

    The distance of Eq. 4 is ``d + d.T``; its asymmetry (Eq. 9) ``|d - d.T|``.

    Example
    -------
    >>> a = torch.rand(300, 4)
    >>> d = representation_distances([a, a.clone(), torch.rand(300, 4)], fit=200, epochs=30)
    >>> bool(d[0, 1] < 0.05 < d[0, 2])
    True
    >>> tuple(representation_distances([a, a.clone()], fit=200, per_image=True, epochs=30).shape)
    (2, 2, 100)
    """
    m = len(features)
    if len({len(f) for f in features}) != 1 or not 0 < fit < len(features[0]):
        raise ValueError(f"features must share N rows and 0 < fit < N; got N = {[len(f) for f in features]}, "
                         f"fit = {fit}.")
    out = torch.zeros(m, m, len(features[0]) - fit)
    widths = {f.shape[1] for f in features}
    for i in range(m):
        others = [j for j in range(m) if j != i]
        groups = [[j for j in others if features[j].shape[1] == w] for w in widths]  # same width: one fit
        for js in filter(None, groups):
            src = torch.stack([features[j] for j in js])
            maps = fit_maps(src[:, :fit], features[i][:fit], residual=False, **fit_options)
            with torch.no_grad():
                out[i, js] = normalized_l2(features[i][fit:], maps(src[:, fit:])).cpu()
    return out if per_image else out.mean(-1)


def knn_same_group_rate(distance: np.ndarray, groups, ks=None) -> dict:
    """Paper C's Fig. 3a: for every ordered pair ``(a, b)`` of distinct items of the same group, whether ``b`` is
    among the ``k`` nearest neighbours of ``a`` (by ``distance``, ``(M, M)``, symmetric, the diagonal ignored).

    Returns ``{"k": [...], "rate": [...] (share of same-group pairs within k), "chance": [...] (k / (M - 1),
    the rate of a random ordering), "pairs": number of ordered same-group pairs}``.

    Example
    -------
    >>> d = np.array([[0, 1, 5, 5], [1, 0, 5, 5], [5, 5, 0, 1], [5, 5, 1, 0]], dtype=float)
    >>> r = knn_same_group_rate(d, ["a", "a", "b", "b"])
    >>> r["rate"], r["chance"][0]
    ([1.0, 1.0, 1.0], 0.3333333333333333)
    """
    d = np.asarray(distance, dtype=float).copy()
    m = len(d)
    if d.shape != (m, m) or len(groups) != m:
        raise ValueError(f"distance must be (M, M) and groups M long, got {d.shape} and {len(groups)}.")
    np.fill_diagonal(d, np.inf)
    order = np.argsort(d, axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(m)[:, None], order] = np.arange(m)[None]  # rank[a, b]: 0 = nearest
    pairs = [(a, b) for a in range(m) for b in range(m) if a != b and groups[a] == groups[b]]
    ks = list(ks or range(1, m))
    rate = [float(np.mean([rank[a, b] < k for a, b in pairs])) if pairs else float("nan") for k in ks]
    return dict(k=ks, rate=rate, chance=[k / (m - 1) for k in ks], pairs=len(pairs))

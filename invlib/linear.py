"""Linear read-outs of frozen features: an L2-penalised logistic regression fitted by full-batch L-BFGS.

:func:`fit_logistic` is the one fit behind the papers' linear probes; the labels pick the form of the loss:

=======================  ==================================================  ==========================
labels ``y`` ``(N,)``    loss (mean over the ``N`` rows)                      weights
=======================  ==================================================  ==========================
float, -1 or +1          ``log(1 + exp(-y s))``, ``s = x w (+ b)``            ``w`` ``(D,)``, ``b`` ``()``
integer class indices    cross-entropy of ``s = x W (+ b)``                   ``W`` ``(D, K)``, ``b`` ``(K,)``
=======================  ==================================================  ==========================

plus ``penalty * |w|^2`` (the bias is never penalised). Paper A ranks pairs of views with the binary form on
feature differences without a bias (:func:`invlib.papers.a.probes.train_probe`); chapter D4 evaluates encoders
with the multinomial form and a bias (:func:`invlib.papers.d.contrastive.linear_probe`). The weights start at
zero, in ``x``'s dtype and on its device, so a fit is deterministic.

Example
-------
>>> x = torch.randn(200, 3, generator=torch.Generator().manual_seed(0))
>>> w, b = fit_logistic(x, torch.sign(x[:, 0]), penalty=1e-3)
>>> w.shape, b, bool(w[0] > w[1:].abs().max())
(torch.Size([3]), None, True)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def fit_logistic(x: torch.Tensor, y: torch.Tensor, penalty: float, *, classes: int | None = None, bias: bool = False,
                 max_iter: int = 100, tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 20) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Fit a logistic regression on ``x`` ``(N, D)`` by full-batch L-BFGS (strong Wolfe line search, step 1).

    ``y`` ``(N,)``: floats in {-1, +1} for the binary loss, or integer class indices for the multinomial one
    (``classes``: ``K``, default ``y.max() + 1``). The objective is the mean loss plus ``penalty * |w|^2``; ``bias``
    adds an unpenalised intercept. ``max_iter``, ``tolerance_grad``, ``tolerance_change`` and ``history_size`` are
    :class:`torch.optim.LBFGS`'s.

    Returns ``(w, b)``: ``w`` ``(D,)`` (binary) or ``(D, K)`` (multinomial); ``b`` ``()`` or ``(K,)``, None without
    ``bias``; detached, in ``x``'s dtype.

    Example
    -------
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.arange(100) % 3
    >>> x = torch.randn(100, 4, generator=g, dtype=torch.float64) + 6 * torch.nn.functional.one_hot(y, 4)
    >>> w, b = fit_logistic(x, y, 1e-3, bias=True)
    >>> w.shape, b.shape, w.dtype, float(((x @ w + b).argmax(1) == y).double().mean())
    (torch.Size([4, 3]), torch.Size([3]), torch.float64, 1.0)
    """
    if x.ndim != 2 or y.shape != x.shape[:1]:
        raise ValueError(f"fit_logistic needs x (N, D) and y (N,), got {tuple(x.shape)} and {tuple(y.shape)}")
    multinomial = not y.is_floating_point()
    shape = (x.shape[1], classes or int(y.max()) + 1) if multinomial else (x.shape[1],)
    w = torch.zeros(shape, dtype=x.dtype, device=x.device, requires_grad=True)
    b = torch.zeros(shape[1:], dtype=x.dtype, device=x.device, requires_grad=True) if bias else None
    opt = torch.optim.LBFGS([w] if b is None else [w, b], lr=1, max_iter=max_iter, history_size=history_size,
                            tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        s = x @ w if b is None else x @ w + b
        loss = F.cross_entropy(s, y) if multinomial else F.softplus(-y * s).mean()
        loss = loss + penalty * (w ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach(), None if b is None else b.detach()

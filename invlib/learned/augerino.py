"""Augerino (Benton et al., 2020): learned uniform distributions over 2-D affine transformations.

Six generators of the affine group's Lie algebra, in the normalised coordinates of ``affine_grid``
(x, y in [-1, 1]): translation in x and in y, rotation, uniform scale, stretch ``diag(1, -1)`` and shear
``[[0, 1], [1, 0]]`` (named as AugNet's operations where they are the same transformation: ``translate_x``,
``translate_y``, ``rotate``). Each image draws coefficients ``eps_k ~ U[-theta_k / 2, theta_k / 2]`` with widths
``theta = softplus(width)``; the transformation is ``matrix_exp(sum_k eps_k G_k)`` (``torch.linalg.matrix_exp``,
no ODE solver), applied with ``affine_grid`` / ``grid_sample``. The loss adds ``-lambda ||theta||_2``
(not squared). ``width`` starts at 0, i.e. ``theta = log 2`` per generator (Benton et al.'s code,
github.com/g-benton/learning-invariances).

The sampled matrix maps output coordinates to input coordinates (inverse warping); for these symmetric
distributions the set of transformations is the same. A rotation coefficient ``eps`` is an angle in
radians, so the largest rotation is ``theta_rotate / 2``; a translation ``eps`` moves by ``eps / 2`` of the size,
so the largest translation is ``theta / 4`` of the size. :meth:`AffineAugment.state` reports these, in the
shape and units of :mod:`invlib.learned` (radians, fractions of the size).

Paper B (Bouchacourt et al., 2021, App. G) runs Augerino on ImageNet with four changes, all keyword arguments
of :class:`AffineAugment` and :func:`augerino` whose defaults are Benton et al.'s method above:

- ``caps``: a cap per generator on ``theta``; a coordinate above its cap drops out of the regulariser.
- ``order="sequential"``: one warp per generator, in the order of ``generators`` (translations, then scale).
- ``zoom_in_only=True``: the scale coefficient is drawn from ``U[-theta / 2, 0]`` (zoom in, never out).
- ``init_width`` as a dict of starting ``theta`` per generator (theirs: 1.2 for the translations, 2.52 for scale).

Example
-------
>>> from invlib import models
>>> net = augerino(models.create("conv4", num_classes=4, in_chans=1, widths=(8, 8, 8, 8)), reg=0.05)
>>> round(net.state()["layer0"]["rotate"]["max_value"], 3)  # softplus(0) / 2 rad
0.347
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..utils import check_choice
from . import Invariant, in_float32

GENERATORS = ("translate_x", "translate_y", "rotate", "scale", "stretch", "shear")
ORDERS = ("joint", "sequential")  # one warp by exp(sum_k eps_k G_k), or one warp per generator in turn
# max_value of state() per unit of width theta: theta / 2 in Lie-algebra coefficients, which is radians for
# rotate; a translation coefficient moves by half of it in fractions of the size
_PER_WIDTH = {"translate_x": 0.25, "translate_y": 0.25, "rotate": 0.5, "scale": 0.5, "stretch": 0.5, "shear": 0.5}


def generators(dtype=torch.float32) -> torch.Tensor:
    """``(6, 3, 3)`` Lie-algebra basis of the 2-D affine group in homogeneous coordinates, in the order of
    :data:`GENERATORS`.

    Example
    -------
    >>> torch.linalg.matrix_exp(0.5 * generators()[2])[:2, :2]  # rotate by 0.5 rad
    tensor([[ 0.8776, -0.4794],
            [ 0.4794,  0.8776]])
    """
    g = torch.zeros(6, 3, 3, dtype=dtype)
    g[0, 0, 2] = 1  # translate x
    g[1, 1, 2] = 1  # translate y
    g[2, 0, 1], g[2, 1, 0] = -1, 1  # rotation
    g[3, 0, 0] = g[3, 1, 1] = 1  # uniform scale
    g[4, 0, 0], g[4, 1, 1] = 1, -1  # stretch
    g[5, 0, 1] = g[5, 1, 0] = 1  # shear
    return g


def transform(x: torch.Tensor, eps: torch.Tensor, which: list[int] | None = None) -> torch.Tensor:
    """Warp images ``x`` ``(B, C, H, W)`` by ``matrix_exp(sum_k eps[:, k] G_k)``, ``eps`` ``(B, 6)``.

    ``eps = 0`` is the identity (exactly: bilinear sampling at the pixel centres).

    Example
    -------
    >>> x = torch.rand(2, 1, 8, 8)
    >>> torch.allclose(transform(x, torch.zeros(2, 6)), x, atol=1e-6)
    True
    """
    g = generators(x.dtype).to(x.device)
    mats = torch.linalg.matrix_exp(torch.einsum("bk,kij->bij", eps, g))
    grid = F.affine_grid(mats[:, :2], list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def _check_keys(what: str, d: dict, names: list[str]) -> None:
    """Raise ``ValueError`` when ``d`` has a key that is not one of the learned generators ``names``."""
    for k in d:
        try:
            check_choice(k, names, "learned generator")
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None


def _inverse_softplus(theta: float) -> float:
    """``w`` with ``softplus(w) = theta`` (``log(expm1(theta))``, written so as not to overflow)."""
    return theta + math.log(-math.expm1(-theta))


class AffineAugment(nn.Module):
    """Augerino's augmentation module: uniform coefficients with learned widths over chosen generators.

    Args:
        reg: ``lambda`` of the regulariser ``-lambda ||softplus(width)||_2``.
        generators: names from :data:`GENERATORS` to learn (the others stay at 0). With ``order="sequential"``
            also the order in which they apply.
        init_width: a float: the starting value of the free ``width`` parameter of every generator
            (``theta = softplus(width)``, so 0 is ``theta = log 2``); or a dict ``{generator: theta}`` of
            starting full widths ``theta > 0`` (after the softplus; ``width = log(expm1(theta))``), the
            generators it leaves out starting at ``theta = log 2``.
        caps: ``None`` or a dict ``{generator: cap > 0}`` of caps on ``theta``. The regulariser becomes
            ``-lambda ||m * theta||_2`` with ``m_k = [theta_k <= cap_k]`` evaluated without gradient: a
            coordinate above its cap is not pushed outward (nothing pulls it back either but the loss); once it
            falls back below, it is regularised again. Generators without a cap are always regularised.
        order: ``"joint"``: one warp by ``matrix_exp(sum_k eps_k G_k)`` (Benton et al.). ``"sequential"``: one
            ``affine_grid`` / ``grid_sample`` warp by ``matrix_exp(eps_k G_k)`` per generator, in the order of
            ``generators`` (paper B: ``translate_x``, ``translate_y``, then ``scale``, so the translation happens
            before the scaling). This is not one warp by the product of the matrices: each intermediate image
            is zero outside the frame and resampled bilinearly, so a zoom in after a shift magnifies the
            zero-filled border, and the interpolations add up; the warps are applied one after another, as
            the authors do.
        zoom_in_only: draw the ``scale`` coefficient from ``U[-theta / 2, 0]`` instead of
            ``U[-theta / 2, theta / 2]``. With inverse warping a negative coefficient samples a smaller region
            of the input, so the content appears larger (a zoom in by up to ``exp(theta / 2)``), as with
            ``RandomResizedCrop``. Needs ``scale`` among ``generators``.

    ``forward(x)``: ``x`` ``(B, C, H, W)`` to ``(B, C, H, W)``, one draw of coefficients per image.

    Example
    -------
    >>> aug = AffineAugment(generators=["translate_x", "translate_y", "scale"], order="sequential",
    ...                     zoom_in_only=True, init_width={"translate_x": 1.2, "translate_y": 1.2, "scale": 2.52},
    ...                     caps={"scale": 3.0})
    >>> aug(torch.rand(2, 3, 16, 16)).shape
    torch.Size([2, 3, 16, 16])
    >>> [round(t, 2) for t in aug.widths().tolist()], aug.at_cap()
    ([1.2, 1.2, 2.52], {'translate_x': False, 'translate_y': False, 'scale': False})
    """

    def __init__(self, reg: float = 0.05, generators=GENERATORS, init_width: float | dict[str, float] = 0.0, *,
                 caps: dict[str, float] | None = None, order: str = "joint", zoom_in_only: bool = False):
        super().__init__()
        self.names = [check_choice(g, GENERATORS, "Augerino generator") for g in generators]
        self.index = [GENERATORS.index(g) for g in self.names]
        self.reg = float(reg)
        self.order = check_choice(order, ORDERS, "Augerino order")
        self.zoom_in_only = bool(zoom_in_only)
        if self.zoom_in_only and "scale" not in self.names:
            raise ValueError(f"zoom_in_only needs the 'scale' generator; the learned generators are {self.names}.")
        if isinstance(init_width, dict):
            _check_keys("init_width", init_width, self.names)
            bad = {k: t for k, t in init_width.items() if not 0 < t < math.inf}
            if bad:
                raise ValueError(f"init_width: the widths theta must be positive and finite, got {bad}.")
            start = [_inverse_softplus(float(init_width.get(n, math.log(2)))) for n in self.names]
            self.width = nn.Parameter(torch.tensor(start, dtype=torch.float64).float())
        else:
            self.width = nn.Parameter(torch.full((len(self.names),), float(init_width)))
        self.caps = None if caps is None else dict(caps)
        if self.caps is not None:
            _check_keys("caps", self.caps, self.names)
            bad = {k: c for k, c in self.caps.items() if not c > 0}
            if bad:
                raise ValueError(f"caps: every cap must be > 0, got {bad}.")
            cap = torch.tensor([float(self.caps.get(n, math.inf)) for n in self.names])
        else:
            cap = None
        self.register_buffer("cap", cap, persistent=False)  # (K,), inf where uncapped; None without caps

    def widths(self) -> torch.Tensor:
        """``(K,)`` the full widths ``theta = softplus(width)`` of the uniform distributions."""
        return F.softplus(self.width)

    def coefficients(self, n: int, device=None, dtype=torch.float32) -> torch.Tensor:
        """``(n, K)`` one draw of the coefficients ``eps`` of the learned generators (differentiable in ``width``).

        Example
        -------
        >>> aug = AffineAugment(generators=["rotate", "scale"], init_width={"scale": 1.0}, zoom_in_only=True)
        >>> eps = aug.coefficients(1000)
        >>> bool(eps[:, 1].max() <= 0 and eps[:, 1].min() >= -0.5 and eps[:, 0].max() > 0)
        True
        """
        u = torch.rand(n, len(self.names), device=device, dtype=dtype) - 0.5
        if self.zoom_in_only:
            s = self.names.index("scale")
            u[:, s] = -u[:, s].abs()  # U[-1/2, 0]
        return u * self.widths().to(dtype)

    @in_float32
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        coef = self.coefficients(len(x), x.device, x.dtype)
        if self.order == "sequential":
            for j, k in enumerate(self.index):
                eps = x.new_zeros(len(x), len(GENERATORS))
                eps[:, k] = coef[:, j]
                x = transform(x, eps)
            return x
        eps = x.new_zeros(len(x), len(GENERATORS))
        eps[:, self.index] = coef
        return transform(x, eps)

    def penalty(self) -> torch.Tensor:
        """``-reg * ||theta||_2``; with ``caps``, ``-reg * ||m * theta||_2``, ``m = [theta <= cap]`` (no gradient).

        Example
        -------
        >>> kw = dict(reg=1.0, generators=["rotate", "scale"], init_width={"rotate": 3.0, "scale": 4.0})
        >>> round(AffineAugment(**kw).penalty().item(), 4)  # -||(3, 4)||
        -5.0
        >>> round(AffineAugment(**kw, caps={"scale": 2.0}).penalty().item(), 4)  # scale is above its cap
        -3.0
        """
        theta = self.widths()
        if self.cap is not None:
            theta = theta * (theta.detach() <= self.cap).to(theta.dtype)
        return -self.reg * torch.linalg.vector_norm(theta)

    def at_cap(self) -> dict[str, bool]:
        """``{generator: bool}``: True where ``theta`` is above its cap, i.e. the regulariser is off for it
        (always False for a generator without a cap).

        Example
        -------
        >>> AffineAugment(generators=["rotate", "scale"], caps={"rotate": 0.5}).at_cap()  # theta = log 2
        {'rotate': True, 'scale': False}
        """
        if self.cap is None:
            return {n: False for n in self.names}
        above = (self.widths().detach() > self.cap).tolist()
        return dict(zip(self.names, above, strict=True))

    def state(self) -> dict:
        """``{"layer0": {generator: {"weight": 1.0, "magnitude": theta, "max_value": v}}}``: every generator
        applies to every image (weight 1); ``v`` is ``theta / 2`` (radians for rotate) or ``theta / 4`` of the
        size for the translations (see :data:`invlib.learned.UNITS`). With ``zoom_in_only`` the ``max_value`` of
        ``scale`` is still ``theta / 2``, the largest ``|eps|`` applied: the log of the largest zoom-in factor.
        Whether a generator is above its cap: :meth:`at_cap`.

        Example
        -------
        >>> st = AffineAugment(generators=["translate_x", "rotate"]).state()["layer0"]
        >>> [round(st[g]["max_value"], 4) for g in st]  # theta = log 2
        [0.1733, 0.3466]
        """
        th = self.widths().tolist()
        return {"layer0": {n: dict(weight=1.0, magnitude=t, max_value=t * _PER_WIDTH[n])
                           for n, t in zip(self.names, th)}}


def augerino(trunk: nn.Module, reg: float = 0.05, copies: int = 4, generators=GENERATORS,
             init_width: float | dict[str, float] = 0.0, *, caps: dict[str, float] | None = None,
             order: str = "joint", zoom_in_only: bool = False) -> Invariant:
    """Augerino around ``trunk``: learned affine augmentation, ``copies`` copies at evaluation.

    ``reg``, ``generators``, ``init_width``, ``caps``, ``order`` and ``zoom_in_only`` go to
    :class:`AffineAugment`. Input ``(B, C, H, W)``, output ``(B, K)`` (see :class:`invlib.learned.Invariant`).
    To evaluate without the augmentation (one un-augmented copy), call the trunk: ``net.trunk(x)``.

    Example
    -------
    >>> net = augerino(nn.Sequential(nn.Flatten(), nn.Linear(64, 3)), generators=["rotate"]).eval()
    >>> net(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 3])
    >>> x = torch.rand(2, 1, 8, 8)
    >>> torch.equal(net.trunk(x), net.trunk[1](x.flatten(1)))  # Augerino disabled: the bare trunk
    True
    >>> b = augerino(nn.Identity(), generators=["translate_x", "translate_y", "scale"], order="sequential",
    ...              zoom_in_only=True, init_width={"translate_x": 1.2, "translate_y": 1.2, "scale": 2.52})
    >>> round(math.exp(b.state()["layer0"]["scale"]["max_value"]), 2)  # largest zoom in: 1 / sqrt(0.08)
    3.53
    """
    return Invariant(AffineAugment(reg, generators, init_width, caps=caps, order=order, zoom_in_only=zoom_in_only),
                     trunk, copies)

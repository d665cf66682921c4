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

Example
-------
>>> from invlib import models
>>> net = augerino(models.create("conv4", num_classes=4, in_chans=1, widths=(8, 8, 8, 8)), reg=0.05)
>>> round(net.state()["layer0"]["rotate"]["max_value"], 3)  # softplus(0) / 2 rad
0.347
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..utils import check_choice
from . import Invariant

GENERATORS = ("translate_x", "translate_y", "rotate", "scale", "stretch", "shear")
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


class AffineAugment(nn.Module):
    """Augerino's augmentation module: uniform coefficients with learned widths over chosen generators.

    Args:
        reg: ``lambda`` of the regulariser ``-lambda ||softplus(width)||_2``.
        generators: names from :data:`GENERATORS` to learn (the others stay at 0).
        init_width: starting value of the free ``width`` parameter (``theta = softplus(width)``).
    """

    def __init__(self, reg: float = 0.05, generators=GENERATORS, init_width: float = 0.0):
        super().__init__()
        self.names = [check_choice(g, GENERATORS, "Augerino generator") for g in generators]
        self.index = [GENERATORS.index(g) for g in self.names]
        self.reg = float(reg)
        self.width = nn.Parameter(torch.full((len(self.names),), float(init_width)))

    def widths(self) -> torch.Tensor:
        """``(K,)`` the full widths ``theta = softplus(width)`` of the uniform distributions."""
        return F.softplus(self.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u = torch.rand(len(x), len(self.names), device=x.device, dtype=x.dtype) - 0.5
        eps = x.new_zeros(len(x), len(GENERATORS))
        eps[:, self.index] = u * self.widths().to(x.dtype)
        return transform(x, eps)

    def penalty(self) -> torch.Tensor:
        return -self.reg * torch.linalg.vector_norm(self.widths())

    def state(self) -> dict:
        """``{"layer0": {generator: {"weight": 1.0, "magnitude": theta, "max_value": v}}}``: every generator
        applies to every image (weight 1); ``v`` is ``theta / 2`` (radians for rotate) or ``theta / 4`` of the
        size for the translations (see :data:`invlib.learned.UNITS`).

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
             init_width: float = 0.0) -> Invariant:
    """Augerino around ``trunk``: learned affine augmentation, ``copies`` copies at evaluation.

    Example
    -------
    >>> net = augerino(nn.Sequential(nn.Flatten(), nn.Linear(64, 3)), generators=["rotate"]).eval()
    >>> net(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 3])
    """
    return Invariant(AffineAugment(reg, generators, init_width), trunk, copies)

"""Write the book's two colour sprites as an ``images.npz`` that the AugNet authors' sprite generator reads.

Their ``generate_mario_data`` loads ``<folder>/images.npz`` with two arrays, ``mario`` and ``iggy``, each
``(1, 3, 32, 32)`` float in [0, 1]. This writes ours there: the Fashion-MNIST sneaker and ankle boot of
``invlib.data.load("sprites", color=True)``, upright and unrotated. With ``augnet_runs.py sprites --images``,
their code then trains on our sprites, so a chapter can compare the two codes on the same data.

Run (with the book's environment): python benchmarks/authors/our_sprites.py /tmp/our_sprites/images.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from invlib.data import SPRITE_TINTS, sprite_images


def main(out: str) -> int:
    grey = sprite_images(None, 32)  # (2, 1, 32, 32): the two sprites filling the 32 px canvas
    colour = (grey * torch.tensor(SPRITE_TINTS).view(2, 3, 1, 1)).clamp(0, 1).double().numpy()
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, mario=colour[:1], iggy=colour[1:])
    print(f"wrote {path}: two sprites {colour.shape[1:]} in [0, 1]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "images.npz"))

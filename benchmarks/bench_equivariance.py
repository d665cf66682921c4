"""Paper C's costs as ratios within one run: (1) each of the nine training augmentations against the bare
training step of the small ResNet-18 (forward + backward + SGD step on a batch of 128 at 28 px); (2) our batched
elastic and perspective ops against kornia's ``elastic_transform2d`` and torchvision v2's ``perspective``
(the libraries the project prefers, on the same batch); (3) ``measure_network`` against the bare inference it
is made of.

Run: ``python benchmarks/bench_equivariance.py``
"""

from __future__ import annotations

import time

import kornia
import torch
import torchvision.transforms.v2.functional as F

from invlib import models
from invlib import transform_types as tt
from invlib import transforms as T
from invlib.papers.c import equivariance as C

B, SIZE, REPEATS = 128, 28, 5


def best(fn, repeats: int = REPEATS) -> float:
    """Best of ``repeats`` wall times of ``fn()`` in seconds (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    torch.manual_seed(0)
    x = torch.rand(B, 3, SIZE, SIZE)
    y = torch.randint(0, 10, (B,))
    net = models.create("small_resnet18")
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step():
        loss = torch.nn.functional.cross_entropy(net(x.contiguous(memory_format=torch.channels_last)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    bare = best(step)
    print(f"bare training step: {B / bare:8.0f} img/s (batch {B}, {SIZE} px, {torch.get_num_threads()} threads)")
    print(f"{'augmentation':28s} {'img/s':>9s} {'cost / step':>12s}")
    gen = torch.Generator().manual_seed(0)
    for kind in tt.TYPES:
        aug = tt.TypeAugment(kind, tt.PAPER_MAGNITUDES[kind][-1] if kind != "elastic" else 10.0,
                             **({"sigma": 2.0} if kind == "elastic" else {}))
        t = best(lambda aug=aug: aug(x, gen))
        print(f"tm_{kind:25s} {B / t:9.0f} {t / bare:11.1%}")

    print("\nours vs the libraries (same batch, random per-image parameters):")
    alpha = torch.rand(B) * 10
    ours = best(lambda: T.apply("elastic", x, alpha, gen, sigma=2.0))
    noise = torch.rand(B, 2, SIZE, SIZE) * 2 - 1
    kor = best(lambda: kornia.geometry.transform.elastic_transform2d(
        x, noise * (alpha * 2 / SIZE).view(-1, 1, 1, 1), (13, 13), (2.0, 2.0), (1.0, 1.0)))
    print(f"elastic: ours {B / ours:8.0f} img/s, kornia elastic_transform2d {B / kor:8.0f} img/s "
          f"(ours / kornia time {ours / kor:.2f})")
    sigma = torch.rand(B) * 0.1
    ours = best(lambda: T.apply("perspective", x, sigma, gen))
    corners = [[0, 0], [SIZE - 1, 0], [SIZE - 1, SIZE - 1], [0, SIZE - 1]]
    moved = [(torch.tensor(corners) + torch.randn(4, 2) * s * SIZE).tolist() for s in sigma.tolist()]
    tv = best(lambda: torch.stack([F.perspective(img, corners, m) for img, m in zip(x, moved)]))
    print(f"perspective: ours {B / ours:8.0f} img/s, torchvision v2 per image {B / tv:8.0f} img/s "
          f"(ours / torchvision time {ours / tv:.2f})")

    S = C.settings("smoke", n_fit=256, n_eval=256, map_epochs=3)
    fit_ds, eval_ds = C.images(S)
    net.eval()
    values = tt.grid("rotation", "small")
    with torch.inference_mode():
        infer = best(lambda: C.layer_features(net, fit_ds.images, "pre_logits"), 3)
    t0 = time.perf_counter()
    S = C.settings("smoke", n_fit=256, n_eval=256, map_epochs=3, seed=int(time.time()))  # new key: no cache
    C.measure_network(net, "rotation", values, S, fit_ds, eval_ds)
    t = time.perf_counter() - t0
    n_images = (2 + 2 * len(values)) * 256
    print(f"\nmeasure_network, rotation, {len(values)} values, 256 + 256 images: {t:.2f} s; bare inference of the "
          f"{n_images} images it passes: {n_images / 256 * infer:.2f} s (ratio {t / (n_images / 256 * infer):.2f})")


if __name__ == "__main__":
    main()

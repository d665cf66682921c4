"""invlib.papers.b.similarity: magnitude grids and the sweep (identity, invariant-by-construction models), the
AutoAugment
pool and its level -> value mapping, entry parsing and errors, same-class pairs, the similarity search and what
a Search reads from it, the WordNet correlation, foreground statistics."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from invlib import metrics
from invlib import transforms as T
from invlib.papers.b import similarity as S


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def images(n=32, c=3, h=16, w=16, seed=0):
    return torch.rand(n, c, h, w, generator=gen(seed))


def tinted(n=32, seed=0):
    """Images with a random tint each: pooled features then point in varied directions (with i.i.d. pixels they
    are all nearly parallel, and float rounding alone would move the relative invariance by 1e-3)."""
    return 0.5 * images(n, seed=seed) + 0.5 * torch.rand(n, 3, 1, 1, generator=gen(seed + 1))


def linear_embedding(c=3, h=16, w=16, d=12, seed=0):
    """A random linear map of the centred image: sees every pixel, invariant to nothing."""
    m = torch.randn(c * h * w, d, generator=gen(seed)) / math.sqrt(c * h * w)
    return lambda b: (b - 0.5).flatten(1) @ m


def mean_colour(b):
    return (b - 0.5).mean((2, 3))


def gap_model(seed=0):
    """Global average pooling of a per-pixel map (1x1 conv, ReLU): invariant to any permutation of the pixels."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Conv2d(3, 16, 1), nn.ReLU()).eval()
    return lambda b: net(b).mean((2, 3))


# ------------------------------------------------------------------------------ grids and the sweep
def test_grids_have_ten_levels_from_the_identity():
    assert set(S.PAPER_GRIDS) <= set(S.GRIDS) and set(S.OTHER_GRIDS) <= set(S.GRIDS)
    for name, (op, mags) in S.GRIDS.items():
        assert op in T.available() and len(mags) == 10, name
        assert mags[0] == T.get(op).identity, name
        assert all(T.get(op).low <= m <= T.get(op).high for m in mags), name
    assert S.grid("rotate")[1][-1] == 180 and S.grid("posterize")[1][-1] == 0
    assert S.group_of("zoom_in") == "geometric" and S.group_of("solarize") == "appearance"
    with pytest.raises(ValueError, match="Unknown transform grid 'spin'"):
        S.grid("spin")


def test_transform_level():
    x = images(4)
    assert torch.equal(S.transform_level("rotate", x, 0), x)
    assert torch.equal(S.transform_level("zoom_in", x, 9), T.apply("zoom_in", x, 3.5))
    assert torch.equal(S.transform_level("posterize", x, 9), torch.zeros_like(x))
    assert torch.allclose(S.transform_level("solarize", x, 9), 1 - x)


def test_sweep_level_zero_is_the_identity():
    x = images(40)
    rows = S.sweep({"lin": linear_embedding(), "mean": mean_colour}, x, ["rotate", "posterize", "hue"],
                   levels=[0, 6])
    assert len(rows) == 2 * 3 * 2
    assert set(rows[0]) == {"model", "transform", "group", "level", "magnitude", "median", "q25", "q75", "mean",
                            "alignment"}
    for r in rows:
        if r["level"] == 0:
            assert r["median"] == pytest.approx(1.0, abs=1e-4) and r["q25"] == pytest.approx(1.0, abs=1e-4)
            assert r["alignment"] == 0.0
            assert r["magnitude"] == T.get(S.GRIDS[r["transform"]][0]).identity
    lin = {(r["transform"], r["level"]): r for r in rows if r["model"] == "lin"}
    assert lin["rotate", 6]["median"] < 0.9 and lin["rotate", 6]["group"] == "geometric"
    assert lin["posterize", 6]["group"] == "appearance" and lin["posterize", 6]["magnitude"] == 3


def test_sweep_flip_invariant_embeddings_score_one_at_every_level():
    x = tinted(32)
    rows = S.sweep({"mean": mean_colour, "gap": gap_model()}, x, ["hflip", "vflip"])
    assert len(rows) == 2 * 2 * 10
    for r in rows:
        assert r["median"] == pytest.approx(1.0, abs=1e-4) and r["q25"] > 0.999, r
    # a linear map of the pixels is not invariant once the flip is on (levels >= 5, magnitude >= 0.5)
    lin = S.sweep({"lin": linear_embedding()}, x, ["hflip"], levels=[4, 5])
    assert lin[0]["median"] == pytest.approx(1.0, abs=1e-3) and lin[1]["median"] < 0.5


def test_pooled_per_pixel_map_is_invariant_to_circular_translation():
    """GAP of a 1x1 conv + ReLU sees each pixel on its own: a wrap-around shift (torch.roll) leaves it unchanged."""
    x = tinted(48)
    model = gap_model()

    def roll(b, g):
        dx = torch.randint(1, 16, (len(b),), generator=g).tolist()
        dy = torch.randint(0, 16, (len(b),), generator=g).tolist()
        return torch.stack([im.roll((i, j), dims=(-2, -1)) for im, i, j in zip(b, dy, dx)])

    s = metrics.invariance(model, x, roll, batch_size=16)
    assert s.shape == (48,) and s.min() > 0.999
    # the same through relative_invariance on the representations, with their alignment (~0: no response)
    z, z_t = model(x), model(roll(x, gen(1)))
    assert metrics.relative_invariance(z, z_t, generator=gen(2)).min() > 0.999
    # translation with a black border (the sweep's grid) loses content: not invariant
    assert S.sweep({"gap": model}, x, ["translate"], levels=[5])[0]["median"] < 0.9
    # a linear map of the pixels is not invariant to the wrap-around shift either
    assert metrics.summary(metrics.invariance(linear_embedding(), x, roll))["median"] < 0.5


def test_batched_embeddings_are_the_batch_by_batch_outputs_as_float32_on_the_cpu():
    seen = []

    def embed(b):
        seen.append((len(b), b.is_contiguous()))
        return b.double().mean((2, 3))

    x = images(10)
    z = S._batched(embed, x, 4, "cpu")
    assert z.dtype == torch.float32 and torch.equal(z, torch.cat([x[i:i + 4].double().mean((2, 3)).float()
                                                                  for i in (0, 4, 8)]))
    assert seen == [(4, True), (4, True), (2, True)]  # plain contiguous batches, as the embeddings always had

def test_sweep_is_seeded_and_checks_its_arguments():
    x = images(16)
    a = S.sweep({"lin": linear_embedding()}, x, ["gaussian_noise"], levels=[3], seed=1)
    assert a == S.sweep({"lin": linear_embedding()}, x, ["gaussian_noise"], levels=[3], seed=1)
    assert a != S.sweep({"lin": linear_embedding()}, x, ["gaussian_noise"], levels=[3], seed=2)
    with pytest.raises(ValueError, match=r"level must be an integer in 0\.\.9"):
        S.sweep({"m": mean_colour}, x, ["rotate"], levels=[10])
    with pytest.raises(ValueError, match=r"level must be an integer in 0\.\.9"):
        S.sweep({"m": mean_colour}, x, ["rotate"], levels=[-1])
    with pytest.raises(ValueError, match="Unknown transform grid 'spin'"):
        S.sweep({"m": mean_colour}, x, ["spin"])
    with pytest.raises(ValueError, match="at least 2 probe images"):
        S.sweep({"m": mean_colour}, x[:1], ["rotate"])


# ------------------------------------------------------------------------------ the AutoAugment pool
POOL_FACTS = {"autocontrast": {1, 3, 5}, "color": {0, 2, 4, 8}, "contrast": {3, 8},
              "equalize": {1, 2, 3, 4, 5, 7, 8, 9}, "invert": {3, 4, 5, 6, 8}, "posterize": {5, 6, 7, 8},
              "rotate": {3, 4, 8, 9}, "sharpness": {7}, "shearX": {2, 4, 5, 6, 9}, "shearY": {4, 5, 6, 7, 8},
              "solarize": set(range(2, 9)), "translateX": {3}, "translateY": {2, 3, 6, 7}, "rescale": set(range(10))}
NO_MAGNITUDE = ("autocontrast", "equalize", "invert")


def torchvision_entries():
    """(operation, level) of every operation of torchvision's AutoAugment ImageNet and SVHN policies."""
    from torchvision.transforms import AutoAugmentPolicy, v2

    out = set()
    for policy in (AutoAugmentPolicy.IMAGENET, AutoAugmentPolicy.SVHN):
        for sub in v2.AutoAugment(policy)._policies:
            out |= {(op[0].lower() + op[1:] if op.startswith(("Shear", "Translate")) else op.lower(), level)
                    for op, _p, level in sub}
    return out


def test_pool_is_the_63_entries_of_the_facts():
    assert len(S.POOL) == 63 and len(set(S.POOL)) == 63
    found = {}
    for op, level in S.POOL:
        found.setdefault(op, set()).add(level)
    assert found == POOL_FACTS
    assert S.OP_TYPES == tuple(POOL_FACTS) and len(S.OP_TYPES) == 14
    assert S.POOL[0] == ("autocontrast", 1) and S.POOL[-1] == ("rescale", 9)


def test_pool_levels_are_torchvisions():
    tv = torchvision_entries()
    assert {op for op, level in tv if level is None} == set(NO_MAGNITUDE)
    leveled = {(op, level) for op, level in S.POOL if op not in NO_MAGNITUDE + ("rescale",)}
    assert {(op, level) for op, level in tv if level is not None} == leveled


def test_subpolicies():
    assert len(S.SUBPOLICIES) == 39 and len(set(S.SUBPOLICIES)) == 39
    pool = set(S.POOL)
    for sub in S.SUBPOLICIES:
        assert len(sub) == 2 and S.parse_entry(sub) == sub
        for op, level in sub:
            assert (op, level) in pool if op not in NO_MAGNITUDE else level == 0
    assert S.SUBPOLICIES[0] == (("posterize", 8), ("rotate", 9))  # ImageNet's first
    assert S.entry_name(S.SUBPOLICIES[0]) == "posterize/8+rotate/9"


# ------------------------------------------------------------------------------ level -> value
def test_rotate_9_rotates_by_30_degrees_with_a_random_sign_in_our_style():
    x = images(12)
    out = S.apply_entry("rotate/9", x, gen(5), style="ours")
    signs = torch.randint(0, 2, (12,), generator=gen(5)).float() * 2 - 1  # the same first draw
    assert 0 < (signs > 0).sum() < 12
    expected = torch.cat([T.apply("rotate", x[i:i + 1], 30.0 * float(s)) for i, s in enumerate(signs)])
    assert torch.allclose(out, expected, atol=1e-6)
    assert not torch.allclose(out, T.apply("rotate", x, 30.0), atol=1e-3)  # not all the same way


def test_signed_values():
    assert S.AA_OPS["rotate"][2](9) == 30 and S.AA_OPS["rotate"][2](3) == pytest.approx(10)
    assert S.AA_OPS["shearX"][2](9) == pytest.approx(math.degrees(math.atan(0.3)))
    assert S.AA_OPS["translateY"][2](9) == pytest.approx(150 / 331)
    assert S.AA_OPS["color"][2](8) == pytest.approx(0.8)
    x = images(8)
    signs = torch.randint(0, 2, (8,), generator=gen(2)).float() * 2 - 1
    assert torch.allclose(S.apply_entry("color/8", x, gen(2)), T.apply("saturation", x, 1 + 0.8 * signs))
    shift = signs * 150 / 331 * 3 / 9
    assert torch.allclose(S.apply_entry("translateX/3", x, gen(2), style="ours"), T.apply("translate_x", x, shift))
    # the authors' style: the same signs, PIL's direction (content left for +1), nearest, grey fill
    theirs = T.apply("translate_x", x, -shift, mode="nearest", fill=128 / 255)
    assert torch.allclose(S.apply_entry("translateX/3", x, gen(2)), theirs)


def test_authors_style_follows_their_pil_operations():
    x = images(6)
    # rotation: never signed (counter-clockwise), nearest-neighbour, grey outside
    out = S.apply_entry("rotate/9", x, gen(5))
    assert torch.allclose(out, T.apply("rotate", x, 30.0, mode="nearest", fill=128 / 255))
    assert torch.allclose(S.apply_entry("rotate/9", x, gen(6)), out)  # no draw of a sign
    # shear about the top-left corner: the top row stays, the bottom row moves by ~0.3 of the height
    bars = torch.zeros(1, 1, 20, 20)
    bars[..., 8:12] = 1.0  # a vertical bar
    bar_x = lambda img, row: float(torch.arange(20.0)[img[0, 0, row] > 0.75].mean())  # grey fill is 0.5
    sheared = S.apply_entry("shearX/9", bars, sign=1)
    assert abs(bar_x(sheared, 0) - 9.5) < 0.5  # pixel centres sit 0.5 below the corner
    assert abs(bar_x(sheared, 19) - (9.5 - 0.3 * 19.5)) < 0.5
    centred = S.apply_entry("shearX/9", bars, sign=1, style="ours")
    assert abs(bar_x(centred, 10) - 9.5) < 0.5 and abs(bar_x(centred, 0) - 9.5) > 2  # ours turns about the centre
    # rescale: black fill, nearest-neighbour
    small = S.apply_entry("rescale/5", torch.ones(1, 3, 16, 16))
    assert small[0, 0, 0, 0] == 0 and set(small.unique().tolist()) <= {0.0, 1.0}
    # colour operations are the same in both styles
    assert torch.equal(S.apply_entry("posterize/5", x), S.apply_entry("posterize/5", x, style="ours"))
    with pytest.raises(ValueError, match="Valid search styles: authors, ours"):
        S.apply_entry("rotate/3", x, style="pil")
    with pytest.raises(ValueError, match="sign must be None"):
        S.apply_entry("rotate/3", x, sign=2)


def test_posterize_solarize_rescale_values():
    x = images(6)
    for level, bits in zip((5, 6, 7, 8), (6, 5, 5, 4)):
        assert S.AA_OPS["posterize"][2](level) == bits
        assert torch.equal(S.apply_entry(f"posterize/{level}", x), T.apply("posterize", x, bits))
    out = S.apply_entry("solarize/8", x)
    assert torch.equal(out, T.apply("solarize", x, 256 / 255 / 9))
    assert torch.allclose(out, torch.where(x >= 256 / 255 / 9, 1 - x, x))
    # AutoAugment's threshold is on the 0-255 scale, 256 (1 - level / 9): at level 6 grey level 85 stays
    grey = torch.full((1, 1, 2, 2), 85 / 255)
    assert torch.equal(S.apply_entry("solarize/6", grey), grey)
    assert torch.allclose(S.apply_entry("solarize/6", grey + 1 / 255), 1 - grey - 1 / 255)
    assert torch.equal(S.apply_entry("rescale/6", x, style="ours"), T.apply("zoom_in", x, 1.625))
    assert torch.equal(S.apply_entry("rescale/3", x), T.apply("zoom_out", x, 0.55, mode="nearest"))
    assert S.RESCALE[6] == 1.625 and S.RESCALE[3] == 0.55
    # operations without a magnitude ignore the level
    assert torch.equal(S.apply_entry("equalize/1", x), S.apply_entry("equalize/9", x))
    assert torch.allclose(S.apply_entry("invert/3", x), 1 - x)


def test_identities():
    x = images(8)
    for entry in ("rotate/0", "color/0", "rescale/0", "shearX/0", "translateY/0", "posterize/0", "solarize/0"):
        assert S.is_identity(entry), entry
        assert torch.allclose(S.apply_entry(entry, x, gen()), x, atol=1e-5), entry
    for entry in ("rotate/3", "color/2", "rescale/1", "invert/3", "equalize/0", "autocontrast/1"):
        assert not S.is_identity(entry), entry
    assert S.is_identity("rotate/0+color/0") and not S.is_identity("rotate/0+color/2")


def test_entry_names_and_parsing():
    assert S.parse_entry("solarize/4") == (("solarize", 4),)
    assert S.parse_entry(("rotate", 8)) == (("rotate", 8),)
    assert S.parse_entry("rotate/8+color/0") == (("rotate", 8), ("color", 0))
    assert S.parse_entry([("rotate", np.int64(8)), ["color", 0]]) == (("rotate", 8), ("color", 0))
    assert S.entry_name(("rotate", 8)) == "rotate/8" and S.entry_name("rotate/8") == "rotate/8"
    assert S.entry_name((("rotate", 8), ("color", 0))) == "rotate/8+color/0"
    assert S.op_type("rescale/7") == "rescale" and S.op_type("rotate/3+color/2") == "rotate"
    assert S.group_of("shearX") == "geometric" and S.group_of("color") == "appearance"
    assert S.apply_entry("rotate/9+color/2", images(4), gen()).shape == (4, 3, 16, 16)


def test_bad_entries_and_levels_raise():
    with pytest.raises(ValueError, match="Unknown AutoAugment operation 'spin'.*autocontrast, brightness"):
        S.parse_entry("spin/3")
    with pytest.raises(ValueError, match="Unknown AutoAugment operation 'Rotate'"):
        S.parse_entry(("Rotate", 3))
    for bad in ("rotate", "rotate/x", "rotate/", "rotate/3+color"):
        with pytest.raises(ValueError, match="must read '<operation>/<level>'"):
            S.parse_entry(bad)
    for bad in ("rotate/10", ("rotate", 10), "rotate/-1", ("rotate", 2.0), ("rotate", True), "color/0+rotate/12"):
        with pytest.raises(ValueError, match=r"level must be an integer in 0\.\.9"):
            S.parse_entry(bad)
    with pytest.raises(ValueError, match=r"level must be an integer in 0\.\.9"):
        S.transform_level("rotate", images(2), 10)
    with pytest.raises(ValueError, match="Unknown transform grid 'spin'"):
        S.transform_level("spin", images(2), 1)
    with pytest.raises(ValueError, match="Unknown AutoAugment operation"):
        S.apply_entry("spin/1", images(2))
    with pytest.raises(ValueError, match="Unknown AutoAugment operation"):
        S.search(mean_colour, images(8), torch.arange(8) % 2, ["rotate/3", "spin/1"])


# ------------------------------------------------------------------------------ pairs
def test_pairs_same_class_disjoint_and_counted():
    labels = torch.randint(0, 3, (200,), generator=gen())
    a, b = S.pairs(labels, 3)
    assert a.shape == b.shape and bool((labels[a] == labels[b]).all())
    assert len(set(a.tolist()) | set(b.tolist())) == 2 * len(a)  # no image used twice
    assert labels[a].tolist() == sorted(labels[a].tolist())  # class by class

    def expected(n):  # full batches of 32 give 16 pairs, a last one of r images r // 2
        return 16 * (n // 32) + (n % 32) // 2

    assert len(a) == sum(expected(int((labels == c).sum())) for c in range(3))


def test_pairs_image_i_with_image_i_plus_16_of_a_batch_of_32():
    labels = torch.arange(64) % 2  # two classes of exactly 32 images, interleaved
    a, b = S.pairs(labels, 2, seed=4)
    g = gen(4)  # the seeded shuffle: one permutation per class, in class order
    for c in range(2):
        idx = (labels == c).nonzero().flatten()[torch.randperm(32, generator=g)]
        assert torch.equal(a[16 * c:16 * (c + 1)], idx[:16])
        assert torch.equal(b[16 * c:16 * (c + 1)], idx[16:])
    # another seed, another order; the same seed, the same pairs
    assert not torch.equal(S.pairs(labels, 2, seed=5)[0], a)
    assert all(torch.equal(u, v) for u, v in zip(S.pairs(labels, 2, seed=4), (a, b)))


def test_pairs_last_smaller_batch_and_max_pairs():
    labels = torch.zeros(37, dtype=torch.long)  # a batch of 32, then one of 5: pairs (32, 34), (33, 35)
    a, b = S.pairs(labels, 1)
    order = torch.randperm(37, generator=gen(0))
    assert torch.equal(a, torch.cat([order[:16], order[32:34]]))
    assert torch.equal(b, torch.cat([order[16:32], order[34:36]]))
    labels = torch.arange(100) % 2
    a, b = S.pairs(labels, 2, max_pairs=5)
    assert len(a) == len(b) == 10 and labels[a].tolist() == [0] * 5 + [1] * 5
    assert torch.equal(a[:5], S.pairs(labels, 2)[0][:5])  # the first pairs of the full draw
    assert len(S.pairs(labels, 2, max_pairs=1000)[0]) == 2 * 25


def test_pairs_need_two_images_per_class():
    with pytest.raises(ValueError, match=r"class 1 has 1 image\(s\).*at least 2 per class"):
        S.pairs(torch.tensor([0, 0, 1, 2, 2]), 3)
    with pytest.raises(ValueError, match=r"class 2 has 0 image\(s\)"):
        S.pairs(torch.tensor([0, 0, 1, 1]), 3)
    with pytest.raises(ValueError, match=r"class 1 has 1 image\(s\)"):
        S.search(mean_colour, images(5), torch.tensor([0, 0, 1, 0, 0]), ["rotate/3"])
    with pytest.raises(ValueError, match=r"class 2 has 0 image\(s\)"):
        S.search(mean_colour, images(4), torch.tensor([0, 0, 1, 1]), ["rotate/3"], classes=["a", "b", "c"])


# ------------------------------------------------------------------------------ the search
def test_search_shape_names_and_values():
    x, labels = images(80), torch.arange(80) % 2
    embed = linear_embedding()
    entries = [("rotate", 8), (("rotate", 8), ("color", 2)), "invert/3", "equalize/1", "equalize/9"]
    s = S.search(embed, x, labels, entries, classes=["a", "b"], seed=3)
    assert s.entries == ["rotate/8", "rotate/8+color/2", "invert/3", "equalize/1", "equalize/9"]
    assert s.changes.shape == (5, 40) and s.labels.shape == (40,) and s.classes == ["a", "b"]
    assert s.meta["pairs"] == 40 and s.meta["evaluated"] == 4  # equalize/1 and equalize/9: computed once
    assert torch.equal(s.changes[3], s.changes[4])
    # invert/3 by hand: percent change of each pair's cosine similarity
    a, b = S.pairs(labels, 2, seed=3)
    assert torch.equal(s.labels, labels[a])
    cos = torch.nn.functional.cosine_similarity
    sim, sim_t = cos(embed(x[a]), embed(x[b]), dim=1), cos(embed(x[a]), embed(1 - x[b]), dim=1)
    assert torch.allclose(s.changes[2], 100 * (sim_t - sim) / sim.abs(), rtol=1e-4, atol=1e-3)
    assert s.class_means().shape == (2, 5)


def test_search_identity_entries_change_nothing():
    x, labels = images(64), torch.arange(64) % 4
    s = S.search(linear_embedding(), x, labels, ["rotate/0", "color/0", "rescale/0", "rotate/0+color/0"])
    assert s.changes.abs().max() < 1e-4
    assert s.transforms() == []


def test_two_embeddings_see_the_same_transformed_images():
    x, labels = images(64), torch.arange(64) % 2
    seen = {"lin": [], "mean": []}
    lin = linear_embedding()

    def recording(name, f):
        def embed(b):
            seen[name].append(b.clone())
            return f(b)
        return embed

    entries = ["rotate/8", "color/4", "shearY/5", "translateY/7", "solarize/2"]
    s1 = S.search(recording("lin", lin), x, labels, entries, seed=7, batch_size=64)
    S.search(recording("mean", mean_colour), x, labels, entries, seed=7, batch_size=64)
    assert len(seen["lin"]) == len(seen["mean"]) == 2 + len(entries)  # both untransformed sides once, then one
    assert all(torch.equal(u, v) for u, v in zip(seen["lin"], seen["mean"]))  # pass per entry
    # the same seed gives the same changes; another seed other signs (and pairs)
    assert torch.equal(s1.changes, S.search(lin, x, labels, entries, seed=7).changes)
    assert not torch.equal(s1.changes, S.search(lin, x, labels, entries, seed=8).changes)


def test_search_many_is_each_embeddings_own_search_with_one_transform_per_entry():
    x, labels = images(64), torch.arange(64) % 2
    lin, calls = linear_embedding(), []
    both = lambda b: calls.append(1) or (lin(b), mean_colour(b))  # noqa: E731  two outputs of one call
    entries = ["rotate/8", "color/4", "equalize/1", "equalize/9", "rotate/8+color/0"]
    out = S.search_many({("lin", "mean"): both}, x, labels, entries, seed=7, batch_size=64)
    assert calls == [1] * (2 + 4)  # both sides once, then once per distinct entry (the equalizes are one)
    for name, f in (("lin", lin), ("mean", mean_colour)):
        own = S.search(f, x, labels, entries, seed=7, batch_size=64)
        assert torch.equal(out[name].changes, own.changes) and out[name].meta == own.meta


def test_sweep_of_several_embeddings_gives_each_its_own_sweep():
    x, lin = images(16), linear_embedding()
    both = S.sweep({"lin": lin, "mean": mean_colour}, x, ["rotate", "gaussian_noise"], levels=[0, 3, 9], seed=1)
    for name, f in (("lin", lin), ("mean", mean_colour)):
        alone = S.sweep({name: f}, x, ["rotate", "gaussian_noise"], levels=[0, 3, 9], seed=1)
        assert [r for r in both if r["model"] == name] == alone


def test_search_defaults_to_the_pool():
    x, labels = images(64, h=8, w=8), torch.arange(64) % 2
    s = S.search(linear_embedding(h=8, w=8), x, labels)
    assert s.entries == [S.entry_name(e) for e in S.POOL] and s.changes.shape == (63, 32)
    assert s.meta["evaluated"] == 63 - 7 - 2 - 4  # the no-magnitude entries are computed once per operation
    assert s.classes == ["0", "1"] and torch.isfinite(s.changes).all()
    assert len(s.transforms()) == 63 - 2  # color/0 and rescale/0 are identities
    assert s.op_type_ranks().shape == (2, 14)


def hand_search():
    """Two classes of two pairs; class means, shares and weighted boosts worked out below."""
    entries = ["rotate/3", "invert/3", "color/0", "posterize/5", "rotate/8"]
    changes = torch.tensor([[10.0, -2, 4, 4],  # class a: mean 4, share 0.5; class b: mean 4, share 1
                            [3, 3, -6, 2],  # a: 3, 1; b: -2, 0.5
                            [50, 50, 50, 50],  # an identity: never among the transforms
                            [-4, 0, 8, 6],  # a: -2, 0 (a zero change is no boost); b: 7, 1
                            [12, -2, -1, -1]])  # a: 5, 0.5; b: -1, 0
    return S.Search(entries, changes, torch.tensor([0, 0, 1, 1]), ["a", "b"])


def test_search_class_means_shares_and_weighted_boost():
    s = hand_search()
    np.testing.assert_allclose(s.class_means(), [[4, 3, 50, -2, 5], [4, -2, 50, 7, -1]])
    np.testing.assert_allclose(s.boosted_share(), [[0.5, 1, 1, 0, 0.5], [1, 0.5, 1, 1, 0]])
    # the authors' weighted boost: mean change over the boosted pairs x share boosted = sum of gains / pairs
    np.testing.assert_allclose(s.weighted_boost(), [[5, 3, 50, 0, 6], [4, 1, 50, 7, 0]])
    # the mean over all pairs x the share (the old reading) disagrees wherever a class has a loss
    np.testing.assert_allclose(s.class_means() * s.boosted_share(), [[2, 3, 50, 0, 2.5], [4, -1, 50, 7, 0]])
    assert (s.weighted_boost() >= 0).all()
    # pairs in any order: the class means follow the labels
    perm = torch.tensor([2, 0, 3, 1])
    moved = S.Search(s.entries, s.changes[:, perm], s.labels[perm], s.classes)
    np.testing.assert_allclose(moved.class_means(), s.class_means())


def test_search_top_and_rankings():
    s = hand_search()
    assert s.transforms() == ["rotate/3", "invert/3", "posterize/5", "rotate/8"]
    assert s.top() == [["rotate/8"], ["posterize/5"]]
    assert s.top(2) == [["rotate/8", "rotate/3"], ["posterize/5", "rotate/3"]]
    assert s.top(1, score="weighted") == [["rotate/8"], ["posterize/5"]]
    assert s.top(2, entries=["invert/3", "posterize/5"]) == [["invert/3", "posterize/5"],
                                                             ["posterize/5", "invert/3"]]
    assert s.top(1, entries=s.entries) == [["color/0"], ["color/0"]]  # identities only when asked for
    assert len(s.top(10)[0]) == 4
    ranking = s.global_ranking()
    assert [r[0] for r in ranking] == ["rotate/3", "posterize/5", "rotate/8", "invert/3"]
    assert [r[1] for r in ranking] == pytest.approx([4, 2.5, 2, 0.5])
    # SEM over the two classes' means: |m_a - m_b| / 2
    assert [r[2] for r in ranking] == pytest.approx([0, 4.5, 3, 2.5])


def test_search_op_type_ranks():
    s = hand_search()
    # present types in OP_TYPES order: invert, posterize, rotate (color appears only as an identity)
    # class a by mean: rotate/8 (5), rotate/3, invert/3 (3), posterize/5 (-2) -> rotate 0, invert 1, posterize 2
    # class b: posterize/5 (7), rotate/3 (4), rotate/8, invert/3 (-2) -> posterize 0, rotate 1, invert 2
    np.testing.assert_array_equal(s.op_type_ranks(identities=False), [[1, 2, 0], [2, 0, 1]])
    # as the authors' code: the identity color/0 (+50 in both classes) ranks its type first; columns color, invert,
    # posterize, rotate
    np.testing.assert_array_equal(s.op_type_ranks(), [[0, 2, 3, 1], [0, 3, 1, 2]])
    assert s.top_types(2) == [{"color", "rotate"}, {"color", "posterize"}]
    x, labels = images(96, h=8, w=8), torch.arange(96) % 3
    ranks = S.search(linear_embedding(h=8, w=8), x, labels, S.POOL[::3]).op_type_ranks()
    k = ranks.shape[1]
    assert ranks.shape[0] == 3 and k > 5
    for row in ranks:  # each class's ranks are a permutation of 0..k-1
        assert sorted(row.tolist()) == list(range(k))


# ------------------------------------------------------------------------------ WordNet
@pytest.fixture(scope="module")
def wn():
    pytest.importorskip("nltk")
    from invlib import wordnet

    try:
        return wordnet.ensure()
    except FileNotFoundError as e:
        pytest.skip(str(e))


SYNSETS = ["dog.n.01", "cat.n.01", "car.n.01", "truck.n.01"]


def wordnet_search():
    """Animals rank the six operation types one way, vehicles the opposite way."""
    entries = ["rotate/3", "invert/3", "posterize/5", "solarize/2", "shearX/2", "contrast/3"]
    animal, vehicle = torch.arange(6.0, 0, -1), torch.arange(1.0, 7)
    cat = animal[[0, 1, 3, 2, 4, 5]]  # two middle types swapped
    means = torch.stack([animal, cat, vehicle, vehicle + torch.tensor([0, 0, 0, 0, 1, -1.0])])
    changes = means.T.repeat_interleave(2, dim=1)  # two pairs per class, both at the class mean
    return S.Search(entries, changes, torch.arange(4).repeat_interleave(2), ["dog", "cat", "car", "truck"])


@pytest.mark.slow  # WordNet loads in about 4 s: make test runs these, make test-fast stays under 2 minutes
def test_wordnet_correlation(wn):
    from invlib import wordnet

    s = wordnet_search()
    out = S.wordnet_correlation(s, SYNSETS)
    frame = out["pairs"]
    assert len(frame) == 6 and list(frame.columns[:6]) == ["a", "b", "wordnet", "ranking", "top5_iou", "top25_iou"]
    assert list(zip(frame.a, frame.b))[:3] == [("dog", "cat"), ("dog", "car"), ("dog", "truck")]
    wn_sim = wordnet.similarity_matrix(SYNSETS)
    np.testing.assert_allclose(frame.wordnet, [wn_sim[i, j] for i in range(4) for j in range(i + 1, 4)])
    # Spearman 1 - 6 sum d^2 / (n (n^2 - 1)): one swap of neighbours is 1 - 12 / 210 (dog/cat, car/truck)
    ranking = dict(zip(zip(frame.a, frame.b), frame.ranking))
    assert ranking["dog", "cat"] == pytest.approx(1 - 12 / 210)
    assert ranking["car", "truck"] == pytest.approx(1 - 12 / 210)
    assert ranking["dog", "car"] == pytest.approx(-1.0)
    assert ranking["cat", "car"] == pytest.approx(-1 + 12 / 210)
    iou = dict(zip(zip(frame.a, frame.b), frame.top5_iou))
    assert iou["dog", "cat"] == 1.0 and iou["dog", "car"] == pytest.approx(4 / 6)
    assert (frame.top25_iou == 1.0).all()  # 6 entries: the top 25 are all of them
    # same-kind pairs are both closer in WordNet and more alike in ranking
    assert out["rho"] == pytest.approx(float(metrics.spearman(torch.tensor(frame.wordnet.values),
                                                              torch.tensor(frame.ranking.values))))
    assert out["rho"] > 0.5 and 0 < out["p"] <= 1 and out["metric"] == "wup"
    assert out["rho_top5"] > 0.5 and math.isnan(out["rho_top25"])  # constant IoU: no correlation
    bins = out["bins"]
    assert len(bins) == 4 and bins["pairs"].sum() == 6 and set(bins.columns) == {"wordnet", "ranking", "se", "pairs"}
    assert bins["wordnet"].is_monotonic_increasing
    path = S.wordnet_correlation(s, SYNSETS, metric="path")
    assert path["metric"] == "path" and (path["pairs"].ranking == frame.ranking).all()
    assert len(S.wordnet_correlation(s, SYNSETS, max_pairs=3)["pairs"]) == 3


@pytest.mark.slow  # WordNet loads in about 4 s: make test runs these, make test-fast stays under 2 minutes
def test_wordnet_correlation_tests_the_classes_not_the_pairs(wn):
    """Its p is the Mantel p of the two class-by-class matrices, and its interval resamples classes."""
    from invlib import results, wordnet

    s = wordnet_search()
    out = S.wordnet_correlation(s, SYNSETS, permutations=500)
    ranking = np.full((4, 4), np.nan)
    for _, r in out["pairs"].iterrows():
        i, j = s.classes.index(r.a), s.classes.index(r.b)
        ranking[i, j] = ranking[j, i] = r.ranking
    rho, p = results.mantel(np.asarray(wordnet.similarity_matrix(SYNSETS)), ranking, permutations=500)
    assert (out["rho"], out["p"]) == (pytest.approx(rho), pytest.approx(p))
    assert p >= 1 / 24  # 4 classes: 24 orders of them, whatever the 6 pairs say
    iv = out["interval"]
    assert iv.n == 4 and iv.method == "bootstrap" and iv.lo <= out["rho"] <= iv.hi


def test_class_bootstrap_and_mantel_see_one_class_where_pair_permutations_see_many():
    """One class far from the others in both matrices makes 9 of the 45 pairs extreme together: permuting the pairs
    as if exchangeable calls that significant; permuting or resampling classes does not."""
    from invlib import results

    rng = np.random.default_rng(1)
    a, b = (m + m.T for m in (rng.random((10, 10)), rng.random((10, 10))))
    a[0, :] = a[:, 0] = b[0, :] = b[:, 0] = 5.0
    iu = np.triu_indices(10, 1)
    assert metrics.rank_correlation_test(a[iu], b[iu], permutations=2000)[1] < 0.01
    assert results.mantel(a, b)[1] > 0.05
    iv = S.class_bootstrap(a, b)
    assert iv.lo < 0 < iv.estimate and iv.n == 10
    same = S.class_bootstrap(a, a + 0.01 * (rng.random((10, 10)) + rng.random((10, 10)).T))
    assert same.lo > 0.9  # two matrices that agree on every class


@pytest.mark.slow  # WordNet loads in about 4 s: make test runs these, make test-fast stays under 2 minutes
def test_wordnet_correlation_checks_the_synsets(wn):
    with pytest.raises(ValueError, match="need one synset per class and at least 3 classes.*4 classes, 3 synsets"):
        S.wordnet_correlation(wordnet_search(), SYNSETS[:3])


# ------------------------------------------------------------------------------ foreground statistics
def test_foreground_stats():
    boxes = torch.tensor([[0.0, 0, 10, 10], [5, 5, 15, 15], [20, 0, 40, 20]])
    st = S.foreground_stats(boxes, (20, 40))  # (H, W): x divides by 40, y by 20
    np.testing.assert_allclose(st["cx"], [0.125, 0.25, 0.75])
    np.testing.assert_allclose(st["cy"], [0.25, 0.5, 0.5])
    np.testing.assert_allclose(st["area"], [0.125, 0.125, 0.5])
    np.testing.assert_allclose(st["side"], np.sqrt([0.125, 0.125, 0.5]))
    summ = st["summary"]
    assert set(summ) == {"cx", "cy", "area", "side"}
    assert summ["area"]["mean"] == pytest.approx(0.25)
    assert summ["area"]["std"] == pytest.approx(np.std([0.125, 0.125, 0.5]))
    assert summ["area"]["sem"] == pytest.approx(np.std([0.125, 0.125, 0.5], ddof=1) / math.sqrt(3))
    assert summ["cx"]["p5"] == pytest.approx(np.percentile([0.125, 0.25, 0.75], 5))
    assert summ["cx"]["p95"] == pytest.approx(np.percentile([0.125, 0.25, 0.75], 95))
    # lists work; an inverted box has no area
    st = S.foreground_stats([[0, 0, 10, 10], [10, 10, 0, 0]], (20, 20))
    np.testing.assert_allclose(st["area"], [0.25, 0.0])
    assert math.isnan(S.foreground_stats([[0, 0, 10, 10]], (20, 20))["summary"]["cx"]["sem"])


def test_foreground_stats_bad_shapes():
    for bad in (torch.zeros(4), torch.zeros(3, 3), torch.zeros(0, 4), torch.zeros(2, 4, 1)):
        with pytest.raises(ValueError, match=r"boxes must be \(N, 4\) with N >= 1"):
            S.foreground_stats(bad, (20, 20))


def test_top_refuses_an_unknown_score():
    s = S.Search(["rotate/3", "color/4"], torch.tensor([[1.0, -1.0], [0.5, 2.0]]), torch.tensor([0, 1]), ["a", "b"])
    assert s.top(1, score="weighted") == [["rotate/3"], ["color/4"]]
    with pytest.raises(ValueError, match="Valid scores: mean, weighted"):
        s.top(1, score="median")


def test_class_bootstrap_gives_the_numbers_of_one_resample_at_a_time():
    """The batched bootstrap over classes against spearmanr per resample (the same draws, bit for bit)."""
    from scipy import stats

    rng = np.random.default_rng(3)
    p = rng.random((9, 2))
    a = np.round(np.abs(p[:, None] - p[None]).sum(-1), 1)
    b = a + 0.3 * rng.random((9, 9))
    b = b + b.T
    b[0, 1] = b[1, 0] = np.nan

    def rho(idx):
        pick = np.asarray(idx, dtype=int)
        i, j = np.triu_indices(len(pick), 1)
        x, y = a[pick[i], pick[j]], b[pick[i], pick[j]]
        ok = (pick[i] != pick[j]) & np.isfinite(x) & np.isfinite(y)
        if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
            return 0.0
        return float(stats.spearmanr(x[ok], y[ok]).statistic)

    ci = stats.bootstrap((np.arange(9),), rho, vectorized=False, n_resamples=400, method="percentile",
                         rng=np.random.default_rng(1)).confidence_interval
    iv = S.class_bootstrap(a, b, seed=1, resamples=400)
    assert (iv.lo, iv.hi) == (ci.low, ci.high) and iv.estimate == rho(np.arange(9))


def test_search_pools_share_the_pairs_and_the_entries_that_act_the_same_in_two_styles():
    """Each pool's searches are those of its own search_many; an appearance entry (the same in both styles) is
    embedded once, and an entry that leaves the images as they are (color/0) takes the pairs' own embedding."""
    x, labels, lin, calls = images(64), torch.arange(64) % 2, linear_embedding(), []
    counted = lambda b: calls.append(1) or lin(b)  # noqa: E731
    pools = {"a": (["rotate/8", "color/4", "color/0"], "authors"), "o": (["rotate/8", "color/4"], "ours")}
    out = S.search_pools({"lin": counted}, x, labels, pools, seed=7, batch_size=64)
    assert calls == [1] * (2 + 3)  # both sides once; rotate/8 in each style, color/4 once, color/0 never
    for name, (entries, style) in pools.items():
        own = S.search_many({"lin": lin}, x, labels, entries, seed=7, batch_size=64, style=style)["lin"]
        assert torch.equal(out[name]["lin"].changes, own.changes) and out[name]["lin"].meta == own.meta


def test_sweep_of_several_outputs_of_one_call_and_its_per_image_values():
    """A tuple key (several outputs of one call, e.g. layers of one forward pass) gives each label the rows of its
    own sweep; per_image leaves the rows as they are and returns each row's per-image relative invariance (whose
    median is the row's) and the alignment's pair terms (whose mean off the diagonal is the row's alignment)."""
    x, lin, calls = images(16), linear_embedding(), []
    both = lambda b: calls.append(1) or (lin(b), mean_colour(b))  # noqa: E731
    joint = S.sweep({("lin", "mean"): both}, x, ["rotate", "gaussian_noise"], levels=[0, 3], seed=1)
    assert joint == S.sweep({"lin": lin, "mean": mean_colour}, x, ["rotate", "gaussian_noise"], levels=[0, 3], seed=1)
    assert len(calls) == 1 + 2  # the untransformed images, then one pass per grid at level 3
    rows, per = S.sweep({"lin": lin}, x, ["rotate", "gaussian_noise"], levels=[0, 3], seed=1, per_image=True)
    assert rows == S.sweep({"lin": lin}, x, ["rotate", "gaussian_noise"], levels=[0, 3], seed=1)
    for row, p in zip(rows, per):
        assert p["invariance"].shape == (16,) and p["pairs"].shape == (16, 16)
        assert float(torch.quantile(p["invariance"], 0.5)) == pytest.approx(row["median"])
        assert float(p["pairs"].sum() / (16 * 15)) == pytest.approx(row["alignment"], abs=1e-5)

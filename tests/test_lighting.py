"""invlib.data.lighting: the RawFooT stand-in, colour classes under 23 lights."""

import math

import pytest
import torch

from invlib import data
from invlib.data import dataset as core
from invlib.data import load

# ---------------------------------------------------------------- lighting


def _lighting(**opts):
    return load("lighting", "test", **opts)


def _item_hue(ds):
    """Each image's hue (radians) measured on its 20 brightest pixels: the item, not the dimmer background."""
    from kornia.color import rgb_to_hsv

    f = ds.float().flatten(2)
    top = f.amax(1).topk(20, dim=1).indices
    rgb = torch.gather(f, 2, top[:, None, :].expand(-1, 3, -1)).mean(2)
    return rgb_to_hsv(rgb[:, :, None, None])[:, 0, 0, 0]


def _circular_mean(h):
    return math.atan2(h.sin().mean().item(), h.cos().mean().item()) % (2 * math.pi)


def _hue_gap(a, b):
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


@pytest.fixture(scope="module")
def lighting_test(fm_test):
    return _lighting()


def test_lighting_classes_labels_and_shapes(lighting_test):
    ds = lighting_test
    assert ds.images.shape == (6000, 3, 32, 32) and ds.images.dtype == torch.uint8 and ds.name == "lighting"
    assert ds.classes == data.LIGHTING_CLASSES and len(ds.classes) == 12 and ds.synsets is None
    assert ds.classes[:2] == ["red Sandal", "green Sandal"] and ds.classes[8:] == list(data.LIGHTING_FREE_ITEMS)
    assert torch.equal(torch.bincount(ds.labels), torch.full((12,), 500))  # balanced
    assert len(load("lighting", "train", n=7)) == 7 and _lighting(n=3, size=20).images.shape == (3, 3, 20, 20)
    assert ds.boxes.shape == (6000, 4) and (ds.boxes >= 0).all() and (ds.boxes <= 32).all()
    assert ds.images.float().mean() > 40 and ds.images[:, :, :2, :2].float().mean() > 30  # a lit background
    # the classes are the Fashion-MNIST items of the pairs and the free items: garments vs footwear and bags
    items = [c.split(" ", 1)[1] for c in ds.classes[:8]] + ds.classes[8:]
    assert items[:8:2] == list(data.LIGHTING_HUE_PAIRS) and not set(items[:8]) & set(items[8:])
    assert set(items) <= set(data.FASHION_MNIST_CLASSES)


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_lighting_pairs_differ_by_their_designed_hue_and_free_classes_cover_the_circle(lighting_test):
    from kornia.color import rgb_to_hsv

    neutral = _lighting(conditions="D65")  # gains (1, 1, 1): the hues as designed
    for ds, light in ((neutral, "D65"), (lighting_test, "D45")):
        hue = _item_hue(ds)
        gains = torch.tensor(data.LIGHTING_CONDITIONS[light][0])
        for k, (item, pair) in enumerate(data.LIGHTING_HUE_PAIRS.items()):
            means = [_circular_mean(hue[ds.labels == 2 * k + j]) for j in range(2)]
            designed = [math.radians(h) for _, h in pair]
            # the colour each class should show under this light: the designed colour times the gains
            lit = rgb_to_hsv(core._tint(torch.tensor(designed), torch.full((2,), 0.8)) * gains.view(1, 3, 1, 1))
            for j in range(2):
                assert _hue_gap(means[j], lit[j, 0, 0, 0].item()) < math.radians(8), (light, item, j)
            gap = _hue_gap(*means)
            if light == "D65":
                assert abs(gap - math.radians(120)) < math.radians(8), (item, math.degrees(gap))
            assert gap > math.radians(80), (light, item, math.degrees(gap))  # still far apart under D45
        spread = torch.stack([_hue_gap(h, _circular_mean(hue[ds.labels == 0])) for h in hue[ds.labels == 0]])
        assert spread.max() < math.radians(25)  # a colour class's hue is narrow
        for c in range(8, 12):  # free classes: every sextant of the circle
            h = hue[ds.labels == c]
            counts = torch.bincount((h / (math.pi / 3)).long().clamp(0, 5), minlength=6)
            assert (counts > 25).all(), (light, ds.classes[c], counts.tolist())
    # the factor is the hue before the light: designed +- hue_spread for the pairs, uniform for the free classes
    f = lighting_test.factors["hue"]
    assert (f >= 0).all() and (f < 2 * math.pi).all()
    red = f[lighting_test.labels == 0]
    assert torch.stack([_hue_gap(h, 0.0) for h in red]).max() <= math.radians(10) + 1e-5
    narrow = _lighting(hue_spread=0.0).factors["hue"]
    assert torch.allclose(narrow[lighting_test.labels == 1], torch.tensor(math.radians(120)))


def test_lighting_conditions_table_and_groups():
    cond = data.LIGHTING_CONDITIONS
    assert 16 <= len(cond) <= 24 and list(cond)[:2] == ["D27", "D30"]
    for name, (gains, intensity) in cond.items():
        assert len(gains) == 3 and abs(sum(gains) / 3 - 1) < 1e-9 and 0 < intensity <= 1, name
    assert torch.allclose(torch.tensor(cond["D65"][0]), torch.ones(3), atol=1e-6)
    temps = [cond[f"D{t}"][0] for t in (27, 30, 40, 45, 50, 55, 65, 75, 95)]
    assert all(a[0] > b[0] and a[2] < b[2] for a, b in zip(temps, temps[1:]))  # warmer = redder, less blue
    assert cond["D45x0.5"] == (cond["D45"][0], 0.5) and cond["D65x0.75"][1] == 0.75
    assert max(range(3), key=lambda c: cond["red"][0][c]) == 0 and max(range(3), key=lambda c: cond["blue"][0][c]) == 2
    easy, hard = data.LIGHTING_GROUPS["easy"], data.LIGHTING_GROUPS["hard"]
    assert "D45" in easy and "red" in hard and not set(easy) & set(hard) and set(easy + hard) <= set(cond)
    assert all(n.startswith("D") and "+" not in n for n in easy) and all(not n[1:2].isdigit() or "+" in n for n in hard)


def test_lighting_a_condition_shifts_the_colour_towards_its_gains(lighting_test):
    base = _lighting(n=500, conditions="D65")
    channel = lambda ds: ds.float().mean((0, 2, 3))  # noqa: E731
    for name in ("red", "green", "blue", "amber", "magenta", "D27"):
        lit = _lighting(n=500, conditions=name)
        assert torch.equal(lit.labels, base.labels) and torch.equal(lit.factors["hue"], base.factors["hue"])
        ratio = channel(lit) / channel(base)
        gains = torch.tensor(data.LIGHTING_CONDITIONS[name][0])
        for i in range(3):  # a channel the light favours gets brighter than one it does not
            for j in range(3):
                assert gains[i] <= gains[j] + 0.05 or ratio[i] > ratio[j] + 0.02, (name, ratio, gains)
        assert torch.corrcoef(torch.stack([ratio, gains]))[0, 1] > 0.9, name
    dim = _lighting(n=500, conditions="D65x0.5")
    assert torch.allclose(channel(dim) / channel(base), torch.full((3,), 0.5), atol=0.01)


def test_lighting_several_conditions_are_given_per_image(lighting_test):
    names = list(data.LIGHTING_CONDITIONS)
    ds = _lighting(conditions=("D45", "red"))
    cond = ds.factors["condition"]
    assert set(cond.tolist()) == {names.index("D45"), names.index("red")}
    assert 0.4 < (cond == names.index("red")).float().mean() < 0.6
    assert torch.equal(ds.labels, lighting_test.labels)  # the same images, some under red light
    red, d45 = cond == names.index("red"), cond == names.index("D45")
    assert torch.equal(ds.images[d45], lighting_test.images[d45]) and not torch.equal(ds.images[red],
                                                                                      lighting_test.images[red])
    redness = lambda x: (x[:, 0].float() - x[:, 2].float()).mean()  # noqa: E731
    assert redness(ds.images[red]) > redness(lighting_test.images[red]) + 10
    assert torch.equal(lighting_test.factors["condition"], torch.full((6000,), float(names.index("D45"))))
    hard = _lighting(n=2000, conditions="hard").factors["condition"]
    assert {names[int(i)] for i in hard.unique()} == set(data.LIGHTING_GROUPS["hard"])


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_lighting_is_deterministic_and_subsets_keep_factors_aligned(lighting_test):
    again = _lighting()
    assert torch.equal(again.images, lighting_test.images) and torch.equal(again.labels, lighting_test.labels)
    again.images.zero_()
    again.factors["hue"].zero_()  # copies, not the cache
    assert torch.equal(_lighting().images, lighting_test.images) and lighting_test.factors["hue"].max() > 0
    sub = _lighting(n=300, seed=4, conditions=("D45", "blue"))
    full = _lighting(conditions=("D45", "blue"))
    assert torch.equal(sub.images, full.subset(300, seed=4).images)
    idx = core._subset_indices(6000, 300, 4, "")
    for k, v in full.factors.items():
        assert torch.equal(sub.factors[k], v[idx]) and torch.equal(full.subset(300, seed=4).factors[k], v[idx]), k
    assert torch.equal(load("lighting", "test", n=300, seed=4, conditions=("D45", "blue"), size=16).factors["hue"],
                       sub.factors["hue"])
    assert not torch.equal(_lighting(n=300, seed=4, lighting_seed=1).images, _lighting(n=300, seed=4).images)
    assert not torch.equal(load("lighting", "train", n=300).images, _lighting(n=300).images)


def test_lighting_hue_share_turns_pairs_into_free_classes(lighting_test):
    none, half = _lighting(hue_share=0.0), _lighting(hue_share=0.5)
    assert none.classes == list(data.LIGHTING_HUE_PAIRS) + list(data.LIGHTING_FREE_ITEMS)  # 8 free classes
    assert half.classes[:4] == data.LIGHTING_CLASSES[:4] and half.classes[4:6] == ["Ankle boot", "Bag"]
    for ds, k in ((none, 8), (half, 10)):
        assert torch.equal(torch.bincount(ds.labels), torch.full((k,), 500))  # balanced, as every class before
    hue = none.factors["hue"]
    for c in range(4):  # a former pair item: hue all round the circle, no longer two narrow hues
        counts = torch.bincount((hue[none.labels == c] / (math.pi / 3)).long().clamp(0, 5), minlength=6)
        assert (counts > 40).all(), (none.classes[c], counts.tolist())
    # the free items and the pairs still hue-defined are the same images as at share 1
    free = lighting_test.labels >= 8
    assert torch.equal(none.images[none.labels >= 4], lighting_test.images[free])
    assert torch.equal(half.images[half.labels < 4], lighting_test.images[lighting_test.labels < 4])
    assert torch.equal(half.images[half.labels >= 6], lighting_test.images[free])


@pytest.mark.parametrize("opts, message", [
    (dict(conditions="sunset"), "Unknown lighting condition 'sunset'. Valid conditions: D27, D30, .*D45.*red.*"
                                "or a group: easy, hard"),
    (dict(conditions=("D45", "D46")), "Unknown lighting condition 'D46'"),
    (dict(conditions=()), "conditions is empty"),
    (dict(hue_spread=90), "hue_spread"),
    (dict(size=4), "at least 8 px"),
    (dict(hue_share=0.3), "hue_share .* valid: 0.0, 0.25, 0.5, 0.75, 1.0; got 0.3"),
    (dict(light="red"), "Valid options: conditions, hue_spread, lighting_seed"),
])
def test_lighting_bad_parameters_say_what_is_valid(opts, message, fm_test):
    with pytest.raises((ValueError, TypeError), match=message):
        load("lighting", "test", n=4, **opts)

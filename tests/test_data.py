"""invlib.data: the registry and load (names, splits, options, cap, train_test, bit-identical data); each module
of the package has its own tests (test_dataset, test_real, test_generated, test_scenes, test_lighting)."""

import pytest
import torch

from invlib import data
from invlib.data import load


def test_unknown_names_splits_options_are_listed():
    with pytest.raises(ValueError, match="Unknown dataset 'fashion_mnst'.*fashion_mnist.*") as e:
        load("fashion_mnst")
    assert all(name in str(e.value) for name in data.available())
    assert data.available() == ["cifar10", "fashion_mnist", "fashion_mnist_color", "folder", "imagenet", "lighting",
                                "scenes", "sinusoids", "sprites"]
    with pytest.raises(ValueError, match="Unknown split 'val'.*'train' or 'test'"):
        load("fashion_mnist", "val")
    with pytest.raises(TypeError, match="Unknown option.*colour_seed.*Valid options: color_seed"):
        load("fashion_mnist_color", colour_seed=1)
    with pytest.raises(TypeError, match="Valid options: none"):
        load("fashion_mnist", color_seed=1)
    with pytest.raises(TypeError, match="Valid options: synsets, max_per_class"):
        load("folder", root=".", synset={})
    with pytest.raises(ValueError, match="size must be a positive integer"):
        load("fashion_mnist", size=0)


def test_cap_uses_what_a_split_holds_and_says_so(capsys):
    with pytest.raises(ValueError, match="has 10000 images.*cap=True"):
        data.load("fashion_mnist", "test", n=10_001)
    ds = data.load("fashion_mnist", "test", n=10_001, cap=True, seed=1)
    assert len(ds) == 10_000
    assert "fewer than the 10001 asked for; using all 10000" in capsys.readouterr().out
    assert len(data.load("fashion_mnist", "test", n=10)) == 10  # the cap does not outlive its call
    with pytest.raises(ValueError, match="larger than"):
        data.load("fashion_mnist", "test", n=10_001)


def test_train_test_divides_a_one_split_folder_as_the_zoo_does_and_converts_channels(tmp_path):
    from PIL import Image

    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(10):
            Image.new("L", (8, 8), color=20 * i + (c == "b") * 5).save(tmp_path / c / f"{i}.png")
    assert data.one_split_folder("folder", tmp_path) and not data.one_split_folder("fashion_mnist", tmp_path)
    train, test = data.train_test("folder", tmp_path, n_train=100, n_test=50, channels=3)
    assert (len(train), len(test)) == (16, 4), "capped: a fifth of what the folder holds is the test set"
    assert train.images.shape[1] == 3 and torch.equal(train.images[:, 0], train.images[:, 2])
    both = torch.cat([train.images, test.images]).flatten(1)
    assert len(torch.unique(both, dim=0)) == 20, "no image in both parts"
    assert data.train_test("folder", tmp_path, 10, 5, train=False)[0] is None
    with pytest.raises(ValueError, match="only grey"):
        train.with_channels(4)


def test_lighting_hue_share_one_keeps_the_data_of_before_the_knob(fm_test):
    import hashlib

    h = hashlib.sha256()
    for split in ("train", "test"):
        ds = load("lighting", split, n=300, size=16, conditions=("D45", "red"), hue_share=1.0)
        for t in (ds.images, ds.labels, ds.factors["hue"], ds.factors["condition"]):
            h.update(t.contiguous().numpy().tobytes())
    assert h.hexdigest()[:16] == "0365ac234aa393d5"  # the digest of these loads before hue_share existed (c0838d8)
    assert data.lighting_classes(1.0) == data.LIGHTING_CLASSES


def test_only_generated_data_sits_above_transforms_and_no_option_travels_in_a_context_variable():
    """The core, real data, scenes, lighting and the registry import no transforms (sprites alone rotate with
    them), and :func:`load` hands ``cap`` and ``stream`` to the loaders as arguments."""
    import ast
    from pathlib import Path

    package = Path(data.__file__).parent
    for file in package.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported |= {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
        uses_transforms = any(m.split(".")[0] == "transforms" for m in imported)
        assert uses_transforms == (file.stem == "generated"), file.name
        assert "contextvars" not in imported, file.name
    assert {"cap", "stream"} <= set(__import__("inspect").signature(data.real.imagenet).parameters)


def test_every_public_name_resolves_from_the_package():
    assert all(hasattr(data, name) for name in data.__all__)
    assert data.load is load and data.scenes.scenes.__module__ == "invlib.data.scenes"  # the module, not shadowed

"""invlib.data: real Fashion-MNIST (Debian package) and generated CIFAR / ImageNet / folder fixtures."""

import gzip
import math
import pickle
import shutil

import numpy as np
import pytest
import torch

from invlib import data
from invlib.data import DataMissingError, load

pytestmark = pytest.mark.filterwarnings("ignore:The image decoding and encoding:DeprecationWarning")
FM_FILES = [f + ".gz" for s in ("train", "test") for f in data.FASHION_MNIST_FILES[s]]
DEBIAN = data.DEBIAN_FASHION_MNIST
needs_debian = pytest.mark.skipif(not (DEBIAN / FM_FILES[2]).is_file(), reason="dataset-fashion-mnist not installed")


@pytest.fixture(scope="module")
def fm_test():
    try:
        return load("fashion_mnist", "test")
    except DataMissingError as e:
        pytest.skip(f"Fashion-MNIST not installed: {e}")


@pytest.fixture(scope="module")
def fm_color_test(fm_test):
    return load("fashion_mnist_color", "test")


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No Fashion-MNIST anywhere: empty root, empty $INVLIB_DATA, no Debian folder, an empty cache."""
    for d in ("root", "env", "debian", "cache"):
        (tmp_path / d).mkdir()
    monkeypatch.setenv("INVLIB_DATA", str(tmp_path / "env"))
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "DEBIAN_FASHION_MNIST", tmp_path / "debian")
    return tmp_path


# ---------------------------------------------------------------- Fashion-MNIST


def test_fashion_mnist_shapes_counts_and_labels(fm_test):
    train = load("fashion_mnist", "train")
    for ds, n in ((train, 60000), (fm_test, 10000)):
        assert len(ds) == n and ds.images.shape == (n, 1, 28, 28) and ds.images.dtype == torch.uint8
        assert ds.labels.shape == (n,) and ds.labels.dtype == torch.int64
        assert ds.boxes.shape == (n, 4) and ds.boxes.dtype == torch.float32
        assert torch.equal(torch.bincount(ds.labels), torch.full((10,), n // 10))  # balanced
        assert ds.classes == data.FASHION_MNIST_CLASSES and ds.synsets == data.FASHION_MNIST_SYNSETS
    assert train.labels[:5].tolist() == [9, 0, 0, 3, 0]  # the published first labels
    assert fm_test.labels[:5].tolist() == [9, 2, 1, 1, 6]
    assert 60 < train.images.float().mean() < 85  # mostly black background, bright garments
    f = fm_test.float()
    assert f.dtype == torch.float32 and f.max() == 1.0 and torch.allclose(f * 255, fm_test.images.float())


@needs_debian
def test_plain_idx_files_and_root_argument(tmp_path, fm_test):
    for f in FM_FILES[2:]:  # the test split, un-gzipped
        (tmp_path / f[:-3]).write_bytes(gzip.open(DEBIAN / f).read())
    ds = load("fashion_mnist", "test", root=tmp_path)
    assert torch.equal(ds.images, fm_test.images) and torch.equal(ds.labels, fm_test.labels)
    (tmp_path / "bad").write_bytes(b"\x00\x00\x0d\x01" + bytes(8))
    with pytest.raises(ValueError, match="not a uint8 idx file"):
        data._read_idx(tmp_path / "bad")


def test_loads_are_cached_and_return_copies(fm_test, monkeypatch):
    def no_reading(path):
        raise AssertionError(f"{path} was read again: the parsed split should come from the cache")

    load("fashion_mnist", "test")  # in the cache now, whatever other tests evicted from it (it holds a few splits)
    monkeypatch.setattr(data, "_read_idx", no_reading)
    a = load("fashion_mnist", "test")
    a.images.zero_()
    a.labels.zero_()
    b = load("fashion_mnist", "test")
    assert torch.equal(b.images, fm_test.images) and torch.equal(b.labels, fm_test.labels)


def test_subsets_are_deterministic_and_nested(fm_test):
    s100, s1000 = fm_test.subset(100, seed=3), fm_test.subset(1000, seed=3)
    assert torch.equal(s100.images, s1000.images[:100]) and torch.equal(s100.labels, s1000.labels[:100])
    assert torch.equal(s100.boxes, s1000.boxes[:100])
    assert torch.equal(fm_test.subset(100, seed=3).images, s100.images)
    assert not torch.equal(fm_test.subset(100, seed=4).labels, s100.labels)
    assert len(set(map(bytes, s1000.images.reshape(1000, -1).numpy()))) > 990  # no repeated draws
    ds = load("fashion_mnist", "test", n=100, seed=3)
    assert torch.equal(ds.images, s100.images) and len(ds) == 100
    with pytest.raises(ValueError, match="n=10001 is larger than fashion_mnist/test, which has 10000"):
        load("fashion_mnist", "test", n=10001)
    with pytest.raises(ValueError, match="positive integer"):
        fm_test.subset(0)


def test_boxes_contain_all_foreground_and_are_tight(fm_test):
    fg = fm_test.images[:, 0] > 10
    b = fm_test.boxes.long()
    ys, xs = torch.arange(28)[None, :, None], torch.arange(28)[None, None, :]
    inside = (xs >= b[:, 0, None, None]) & (xs < b[:, 2, None, None])
    inside = inside & (ys >= b[:, 1, None, None]) & (ys < b[:, 3, None, None])
    assert not (fg & ~inside).any()  # contains every foreground pixel
    has_fg = fg.flatten(1).any(1)
    assert has_fg.all()
    n = torch.arange(len(fg))
    assert fg[n, b[:, 1]].any(1).all() and fg[n, b[:, 3] - 1].any(1).all()  # first / last rows touched
    assert fg[n, :, b[:, 0]].any(1).all() and fg[n, :, b[:, 2] - 1].any(1).all()  # first / last columns
    g = torch.zeros(2, 1, 6, 7, dtype=torch.uint8)
    g[0, 0, 2:4, 1:6] = 50
    assert data.foreground_boxes(g).tolist() == [[1, 2, 6, 4], [0, 0, 7, 6]]  # empty image -> whole image


def test_resize_scales_boxes_and_images(fm_test):
    small = fm_test.subset(50, seed=1)
    big = load("fashion_mnist", "test", n=50, seed=1, size=56)
    assert big.images.shape == (50, 1, 56, 56) and big.images.dtype == torch.uint8
    assert torch.allclose(big.boxes, small.boxes * 2)
    # the box of the resized foreground stays within a pixel of the scaled box
    assert (data.foreground_boxes(big.images) - big.boxes).abs().max() <= 1
    down = load("fashion_mnist", "test", n=50, seed=1, size=14)
    assert torch.allclose(down.boxes, small.boxes / 2)
    # antialiased, one batched op: downsampling noise 4x averages it (plain bilinear would alias)
    noise = torch.randint(0, 256, (64, 3, 28, 28), generator=torch.Generator().manual_seed(0), dtype=torch.uint8)
    ds = data.Dataset("noise", "test", noise, torch.zeros(64, dtype=torch.int64), ["x"])
    out = data._resize(ds, 7).images.float()
    plain = torch.nn.functional.interpolate(noise.float(), size=(7, 7), mode="bilinear")
    assert out.shape == (64, 3, 7, 7) and out.std() < 0.5 * plain.std()
    assert abs(out.mean() - noise.float().mean()) < 1


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_colour_variant(fm_test, fm_color_test):
    ds = fm_color_test
    assert ds.images.shape == (10000, 3, 28, 28) and ds.images.dtype == torch.uint8
    assert torch.equal(ds.labels, fm_test.labels) and torch.equal(ds.boxes, fm_test.boxes)
    assert ds.name == "fashion_mnist_color" and ds.synsets == data.FASHION_MNIST_SYNSETS
    # grayscale recoverable: the channel maximum is the original intensity
    assert (ds.images.amax(1).int() - fm_test.images[:, 0].int()).abs().max() <= 1
    # reproducible, seeded, and the same colour for an image whatever the subset
    assert torch.equal(load("fashion_mnist_color", "test", n=300, seed=5).images, ds.subset(300, seed=5).images)
    other = load("fashion_mnist_color", "test", n=300, seed=5, color_seed=1)
    assert not torch.equal(other.images, ds.subset(300, seed=5).images)
    assert torch.equal(other.images.amax(1), ds.subset(300, seed=5).images.amax(1))
    # hue and saturation per image, measured at its brightest pixel
    flat = ds.images.flatten(2).float()  # (N, 3, HW)
    k = flat.amax(1).argmax(1)
    rgb = flat[torch.arange(len(ds)), :, k] / 255  # (N, 3)
    from kornia.color import rgb_to_hsv

    hsv = rgb_to_hsv(rgb[:, :, None, None])[:, :, 0, 0]
    hue, sat = hsv[:, 0], hsv[:, 1]
    assert sat.min() > 0.45 and sat.max() <= 1.0 and abs(sat.mean().item() - 0.75) < 0.02  # U(0.5, 1)
    # hue ~ U(0, 2 pi), independent of the class: every class has mean ~pi and all six sextants
    for c in range(10):
        h = hue[ds.labels == c]
        assert abs(h.mean().item() - math.pi) < 0.25, c
        assert (torch.bincount((h / (math.pi / 3)).long().clamp(0, 5), minlength=6) > 120).all(), c
    # the colour is visible: channels really differ on the foreground
    assert (ds.images.float().std(1).mean(0) > 5).float().mean() > 0.3


def test_missing_data_names_three_ways(nowhere):
    for name in ("fashion_mnist", "fashion_mnist_color"):
        with pytest.raises(DataMissingError) as e:
            load(name, "train", root=nowhere / "root")
        msg = str(e.value)
        assert isinstance(e.value, FileNotFoundError)
        assert "apt-get install dataset-fashion-mnist" in msg  # 1. the Debian package
        assert "$INVLIB_DATA" in msg and "root=" in msg and "train-images-idx3-ubyte" in msg  # 2.
        assert "t10k-labels-idx1-ubyte" in msg and str(nowhere / "env" / "fashion-mnist") in msg
        assert "torchvision" in msg and "fashion-mnist.s3-website" in msg  # 3. online
        assert str(nowhere / "cache" / "data" / "FashionMNIST" / "raw") in msg  # ... and where it goes


@needs_debian
def test_invlib_data_env_is_searched(nowhere):
    (nowhere / "env" / "fashion-mnist").mkdir()
    for f in FM_FILES[2:]:
        shutil.copyfile(DEBIAN / f, nowhere / "env" / "fashion-mnist" / f)
    assert len(load("fashion_mnist", "test", n=10)) == 10
    with pytest.raises(DataMissingError):  # the train files are not there
        load("fashion_mnist", "train")


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


def test_check_reports_without_raising(nowhere, capsys, monkeypatch, fm_test):
    from invlib import wordnet

    def broken():
        raise FileNotFoundError("no WordNet here")

    monkeypatch.setattr(wordnet, "ensure", broken)
    report = data.check()
    assert report["fashion_mnist"]["train"] is None and "apt-get install" in report["fashion_mnist"]["message"]
    assert report["wordnet"] == {"ok": False, "ready": False, "message": "FileNotFoundError: no WordNet here"}
    assert report["fashion_mnist"]["ok"] is False
    out = capsys.readouterr().out
    assert "MISSING" in out and "no WordNet here" in out


@needs_debian
@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_check_finds_debian_copy_and_wordnet(fm_test, capsys, monkeypatch):
    monkeypatch.delenv("INVLIB_DATA", raising=False)
    report = data.check()
    assert report["fashion_mnist"]["test"] == str(DEBIAN)
    assert report["wordnet"]["ready"] and report["wordnet"]["version"] == "3.0"
    assert report["fashion_mnist"]["ok"] and report["wordnet"]["ok"]
    assert "wordnet: ready" in capsys.readouterr().out


# ---------------------------------------------------------------- CIFAR-10 (offline here: generated batches)


def _fake_cifar(folder, per_batch=4):
    d = folder / "cifar-10-batches-py"
    d.mkdir(parents=True)
    rng = np.random.default_rng(0)
    batches = {}
    for i, name in enumerate([f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]):
        x = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
        y = [(i + j) % 10 for j in range(per_batch)]
        batches[name] = (x, y)
        with open(d / name, "wb") as f:
            pickle.dump({"batch_label": name, "data": x, "labels": y, "filenames": [f"{j}.png" for j in y]}, f)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({"label_names": data.CIFAR10_CLASSES, "num_vis": 3072, "num_cases_per_batch": per_batch}, f)
    return batches


def test_cifar10_offline_error_is_clear(nowhere):
    with pytest.raises(DataMissingError) as e:
        load("cifar10", root=nowhere / "root")
    msg = str(e.value)
    assert "no Debian package" in msg and "python-version batches" in msg and "cifar-10-batches-py" in msg
    assert "$INVLIB_DATA" in msg and "root=" in msg and "cifar-10-python.tar.gz" in msg
    assert str(nowhere / "cache" / "data") in msg and "www.cs.toronto.edu" in msg


def test_cifar10_reads_torchvision_batches(tmp_path, monkeypatch):
    batches = _fake_cifar(tmp_path)
    train = load("cifar10", "train", root=tmp_path)
    assert train.images.shape == (20, 3, 32, 32) and train.images.dtype == torch.uint8 and train.boxes is None
    assert torch.equal(train.images[4:8], torch.from_numpy(batches["data_batch_2"][0].reshape(4, 3, 32, 32)))
    assert train.labels.tolist() == sum((batches[f"data_batch_{i}"][1] for i in range(1, 6)), [])
    assert train.classes == data.CIFAR10_CLASSES and train.synsets == data.CIFAR10_SYNSETS
    # channel order: the first 1024 bytes of a row are the red plane
    assert torch.equal(train.images[0, 0].flatten(), torch.from_numpy(batches["data_batch_1"][0][0, :1024]))
    monkeypatch.setenv("INVLIB_DATA", str(tmp_path.parent))
    (tmp_path.parent / "cifar10").mkdir(exist_ok=True)
    shutil.copytree(tmp_path / "cifar-10-batches-py", tmp_path.parent / "cifar10" / "cifar-10-batches-py")
    test = load("cifar10", "test", n=3, size=16)  # found through $INVLIB_DATA/cifar10
    assert test.images.shape == (3, 3, 16, 16) and set(test.labels.tolist()) <= set(batches["test_batch"][1])


# ---------------------------------------------------------------- ImageNet-style and user folders


DOG, CAT = "n02084071", "n02121620"


def _jpeg(path, h, w, rgb):
    from torchvision.io import write_jpeg

    path.parent.mkdir(parents=True, exist_ok=True)
    write_jpeg(torch.tensor(rgb, dtype=torch.uint8)[:, None, None].expand(3, h, w).contiguous(), str(path), 95)


def _xml(path, w, h, boxes, wnid):
    path.parent.mkdir(parents=True, exist_ok=True)
    objs = "".join(
        f"<object><name>{wnid}</name><bndbox><xmin>{b[0]}</xmin><ymin>{b[1]}</ymin><xmax>{b[2]}</xmax>"
        f"<ymax>{b[3]}</ymax></bndbox></object>"
        for b in boxes
    )
    path.write_text(
        f"<annotation><size><width>{w}</width><height>{h}</height><depth>3</depth></size>{objs}</annotation>"
    )


@pytest.fixture
def imagenet(tmp_path):
    root = tmp_path / "imagenet"
    for i in range(3):  # dogs reddish 60x40, cats bluish 30x50
        _jpeg(root / "train" / DOG / f"d{i}.JPEG", 40, 60, (200, 30, 30))
        _jpeg(root / "train" / CAT / f"c{i}.JPEG", 50, 30, (30, 30, 200))
    _xml(root / "train" / DOG / "d0.xml", 60, 40, [(6, 4, 30, 20), (0, 0, 60, 40)], DOG)  # next to the image
    _xml(root / "boxes" / "train" / CAT / "c1.xml", 30, 50, [(3, 5, 15, 25)], CAT)  # boxes/<split>/
    _xml(root / "Annotation" / DOG / "d2.xml", 60, 40, [(30, 20, 60, 40)], DOG)  # ILSVRC Annotation/
    _jpeg(root / "val" / CAT / "v0.JPEG", 32, 32, (30, 30, 200))
    return root


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_imagenet_folder_labels_boxes_synsets(imagenet):
    ds = load("imagenet", root=imagenet, size=32)
    assert ds.classes == [DOG, CAT] and ds.synsets == ["dog.n.01", "cat.n.01"]  # sorted wnids
    assert ds.images.shape == (6, 3, 32, 32) and ds.labels.tolist() == [0, 0, 0, 1, 1, 1]
    mean = ds.images.float().mean((2, 3))
    assert (mean[:3, 0] > 180).all() and (mean[3:, 2] > 180).all()  # decoded colours, in label order
    s = 32 / 60, 32 / 40
    assert torch.allclose(ds.boxes[0], torch.tensor([6 * s[0], 4 * s[1], 30 * s[0], 20 * s[1]]))  # first object
    assert ds.boxes[1].tolist() == [0, 0, 32, 32]  # no XML: the whole image
    assert torch.allclose(ds.boxes[2], torch.tensor([16.0, 16.0, 32.0, 32.0]))
    assert torch.allclose(ds.boxes[4], torch.tensor([3 * 32 / 30, 5 * 32 / 50, 15 * 32 / 30, 25 * 32 / 50]))
    val = load("imagenet", "test", root=imagenet)  # 'test' reads val/, default size 224
    assert val.images.shape == (1, 3, 224, 224) and val.classes == [CAT] and val.synsets == ["cat.n.01"]
    assert torch.equal(load("imagenet", root=imagenet, size=32, max_per_class=1).labels, torch.tensor([0, 1]))
    sub = load("imagenet", root=imagenet, size=32, n=4, seed=2)  # chosen before decoding, same as subset()
    assert torch.equal(sub.images, ds.subset(4, seed=2).images) and torch.equal(sub.boxes, ds.subset(4, 2).boxes)


def test_imagenet_streams_over_the_memory_cap_and_needs_wnid_folders(imagenet, monkeypatch, tmp_path, capsys):
    from invlib.streaming import ImageFiles

    in_memory = load("imagenet", root=imagenet, size=32)
    monkeypatch.setenv("INVLIB_MEMORY_CAP", "1000")  # 6 images x 3 x 32 x 32 bytes are more
    on_disk = load("imagenet", root=imagenet, size=32)
    assert "stream from disk" in capsys.readouterr().out
    assert isinstance(on_disk.images, ImageFiles) and on_disk.streams and not in_memory.streams
    assert torch.equal(on_disk.images[:], in_memory.images) and torch.equal(on_disk.boxes, in_memory.boxes)
    assert torch.equal(on_disk.subset(4, seed=2).images[:], in_memory.subset(4, seed=2).images)
    assert not load("imagenet", root=imagenet, n=2, size=8).streams  # 384 bytes fit
    assert load("imagenet", root=imagenet, n=2, size=8, stream=True).streams  # forced
    assert not load("imagenet", root=imagenet, size=32, stream=False).streams  # forced into memory
    with pytest.raises(ValueError, match="stream must be"):
        load("imagenet", root=imagenet, stream="yes")
    _jpeg(tmp_path / "bad" / "train" / "dogs" / "a.jpg", 8, 8, (0, 0, 0))
    with pytest.raises(ValueError, match="wnids.*load\\('folder'"):
        load("imagenet", root=tmp_path / "bad", size=8)
    monkeypatch.delenv("INVLIB_DATA", raising=False)
    with pytest.raises(DataMissingError, match="no automatic download"):
        load("imagenet")
    assert data.wnid_to_synset(DOG) == "dog.n.01"
    with pytest.raises(ValueError, match="ImageNet id"):
        data.wnid_to_synset("dog")
    with pytest.raises(ValueError, match="not a WordNet 3.0 noun offset"):
        data.wnid_to_synset("n00000001")


def test_user_folder(tmp_path):
    from torchvision.io import write_png

    for split in ("train", "test"):
        for cls, colour in (("tabby", (120, 120, 0)), ("beagle", (0, 200, 0))):
            for i in range(2 if split == "train" else 1):
                p = tmp_path / "split" / split / cls / f"{i}.png"
                p.parent.mkdir(parents=True, exist_ok=True)
                write_png(
                    torch.tensor(colour, dtype=torch.uint8)[:, None, None].expand(3, 20, 10).contiguous(),
                    str(p),
                )
    shutil.copytree(tmp_path / "split" / "train", tmp_path / "flat")
    (tmp_path / "flat" / "notes.txt").write_text("not an image")
    ds = load("folder", root=tmp_path / "flat")
    assert ds.classes == ["beagle", "tabby"] and ds.labels.tolist() == [0, 0, 1, 1] and ds.synsets is None
    assert ds.images.shape == (4, 3, 64, 64) and ds.boxes is None  # default size 64, aspect not kept
    assert ds.images[0, :, 30, 30].tolist() == [0, 200, 0]
    with pytest.raises(ValueError, match="only split is 'train'"):
        load("folder", "test", root=tmp_path / "flat")
    test = load(
        "folder",
        "test",
        root=tmp_path / "split",
        size=16,
        synsets={"tabby": "cat.n.01", "beagle": "beagle.n.01"},
    )
    assert test.images.shape == (2, 3, 16, 16) and test.synsets == ["beagle.n.01", "cat.n.01"]
    assert len(load("folder", "train", root=tmp_path / "split", max_per_class=1)) == 2
    with pytest.raises(ValueError, match="lacks classes \\['tabby'\\]"):
        load("folder", root=tmp_path / "flat", synsets={"beagle": "beagle.n.01"})
    with pytest.raises(ValueError, match="Unknown WordNet synset 'tabbby.n.01'"):
        load("folder", root=tmp_path / "flat", synsets={"beagle": "beagle.n.01", "tabby": "tabbby.n.01"})
    with pytest.raises(ValueError, match="needs root="):
        load("folder")


# ---------------------------------------------------------------- generated sets: sprites and sinusoids


@pytest.fixture(scope="module")
def sprites_train():
    try:
        return load("sprites", "train", n=400, size=28)
    except DataMissingError as e:
        pytest.skip(f"Fashion-MNIST not installed: {e}")


def test_sprites_shapes_labels_and_classes(sprites_train):
    ds = sprites_train
    assert ds.images.shape == (400, 1, 28, 28) and ds.images.dtype == torch.uint8
    assert ds.labels.dtype == torch.int64 and set(ds.labels.tolist()) == {0, 1, 2, 3}
    assert ds.labels.bincount().min() > 60  # about 100 each
    assert ds.classes == ["Sneaker upright", "Sneaker upside down", "Ankle boot upright", "Ankle boot upside down"]
    assert ds.images.float().mean() > 5 and ds.images.max() > 200  # sprites drawn, not blank


def _border_mean(ds):
    im = ds.images
    return torch.cat([im[..., 0, :], im[..., -1, :], im[..., :, 0], im[..., :, -1]], -1).float().mean()


def test_sprites_fill_the_frame_or_stay_inside(sprites_train):
    inside = load("sprites", "train", n=400, size=28, fill=2**-0.5)
    assert _border_mean(inside) < 0.1 * inside.images.float().mean()  # every rotation stays inside the canvas
    assert _border_mean(sprites_train) > 3 * _border_mean(inside)  # the whole frame turns: sprites reach the edges
    assert sprites_train.images.float().mean() > 1.5 * inside.images.float().mean()
    with pytest.raises(ValueError, match="fraction of the canvas"):
        load("sprites", "train", n=4, fill=1.5)


def test_sprites_default_size_and_splits(sprites_train):
    assert load("sprites", "train", n=6).images.shape == (6, 1, 32, 32)  # the paper's 32 px
    again = load("sprites", "train", n=400, size=28)
    assert torch.equal(again.images, sprites_train.images) and torch.equal(again.labels, sprites_train.labels)
    test = load("sprites", "test", n=400, size=28)
    assert not torch.equal(test.images, sprites_train.images)
    other_seed = load("sprites", "train", n=400, size=28, seed=1)
    assert not torch.equal(other_seed.labels, sprites_train.labels)


def test_sprites_upside_down_is_upright_turned(sprites_train):
    ds = sprites_train
    mean = [ds.images[ds.labels == k].float().mean(0) for k in range(4)]
    turn = lambda a: torch.rot90(a, 2, dims=(-2, -1))
    for down, up in [(1, 0), (3, 2)]:
        turned = (turn(mean[down]) - mean[up]).abs().mean()
        as_is = (mean[down] - mean[up]).abs().mean()
        assert turned < 0.5 * as_is, (down, float(turned), float(as_is))


def test_color_sprites_are_the_two_sprites_in_their_tints(sprites_train):
    """color=True: 3 channels, each image the grey sprite's levels times its sprite's tint (same draws)."""
    from invlib.data import SPRITE_TINTS

    col = load("sprites", "train", n=400, size=28, color=True)
    assert col.images.shape == (400, 3, 28, 28) and torch.equal(col.labels, sprites_train.labels)
    tint = torch.tensor(SPRITE_TINTS)[col.labels // 2].view(-1, 3, 1, 1)  # sprite = label // 2
    expected = sprites_train.images.float() * tint
    assert (col.images.float() - expected).abs().max() <= 3  # rounding of the rotated levels
    for k, rgb in enumerate(SPRITE_TINTS):  # each sprite's pixels have its own colour
        pix = col.images[col.labels // 2 == k].float().sum((0, 2, 3))
        assert torch.allclose(pix / pix.max(), torch.tensor(rgb) / max(rgb), atol=0.02)


def test_sprites_from_files(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    paths = []
    for name, colour in (("mario", (255, 0, 0)), ("iggy", (0, 255, 0))):
        a = np.zeros((20, 20, 3), dtype=np.uint8)
        a[2:18, 5:9] = colour  # an asymmetric shape: a bar and a foot
        a[14:18, 5:16] = colour
        a[..., 2] = rng.integers(0, 40, (20, 20))
        Image.fromarray(a).save(tmp_path / f"{name}.png")
        paths.append(tmp_path / f"{name}.png")
    ds = load("sprites", "train", n=40, size=28, files=paths)
    assert ds.images.shape == (40, 3, 28, 28) and ds.images.dtype == torch.uint8
    assert ds.classes == ["mario upright", "mario upside down", "iggy upright", "iggy upside down"]
    red, green = ds.images[:, 0].float().sum((1, 2)), ds.images[:, 1].float().sum((1, 2))
    mario = ds.labels < 2
    assert (red[mario] > green[mario]).all() and (green[~mario] > red[~mario]).all()
    with pytest.raises(FileNotFoundError, match="nope.png"):
        load("sprites", "train", n=4, files=[paths[0], tmp_path / "nope.png"])
    with pytest.raises(ValueError, match="exactly two"):
        load("sprites", "train", n=4, files=paths[:1])


def test_sprites_factors_are_the_applied_rotation(sprites_train):
    """factors["angle"] is the rotation of the canvas, in radians, with the ``rotate`` op's sign."""
    from invlib.transforms import apply

    ds = sprites_train
    angle, down = ds.factors["angle"], ds.factors["upside_down"]
    assert angle.shape == down.shape == (400,) and angle.dtype == torch.float32
    assert torch.equal(down.long(), ds.labels % 2)  # the label's orientation
    assert (angle > -math.pi).all() and (angle <= math.pi).all()
    limit = math.radians(45.0) + 1e-5
    assert (angle[down == 0].abs() <= limit).all()
    assert ((math.pi - angle[down == 1].abs()).abs() <= limit).all()  # within max_angle of pi, either side
    assert angle[down == 1].min() < 0 < angle[down == 1].max()  # wrapped, not left above pi
    narrow = load("sprites", "train", n=400, size=28, max_angle=10.0).factors["angle"]
    assert (narrow.abs() <= math.radians(10) + 1e-5).sum() > 150 and narrow.abs().max() > 3
    # the sign: turning an upright image back by -angle restores the canvas, turning it by +angle does not
    up = down == 0
    canvas = data._sprite_images(None, 28)[ds.labels[up] // 2]  # fill=1: the canvas is the sprite
    deg = torch.rad2deg(angle[up])
    x = ds.images[up].float() / 255
    back = (apply("rotate", x, -deg) - canvas).abs().mean((1, 2, 3))
    ahead = (apply("rotate", x, deg) - canvas).abs().mean((1, 2, 3))
    turned = deg.abs() > 10
    assert turned.sum() > 50 and (back[turned] < ahead[turned]).all()
    assert back.mean() < 0.5 * ahead.mean()


def test_factors_follow_rows_subsets_resizing_and_copies(sprites_train):
    ds = sprites_train
    sub = ds.subset(50, seed=2)
    idx = data._subset_indices(400, 50, 2, "")
    for k, v in ds.factors.items():
        assert torch.equal(sub.factors[k], v[idx]), k
        assert torch.equal(ds.rows(slice(3, 9)).factors[k], v[3:9])
        assert torch.equal(ds.rows([5, 1]).factors[k], v[[5, 1]])
    assert torch.equal(data._resize(ds, 14).factors["angle"], ds.factors["angle"])
    assert torch.equal(ds.with_channels(3).factors["angle"], ds.factors["angle"])
    copy = data._finish(ds, None, 0)
    copy.factors["angle"].zero_()  # a copy, like the images and boxes
    assert ds.factors["angle"].abs().max() > 0
    assert load("fashion_mnist", "test", n=5).factors is None and ds.subset(5).boxes is None


def test_sinusoids_shapes_and_labels():
    train, test = load("sinusoids", "train"), load("sinusoids", "test")
    assert train.images.shape == (400, 1, 1000) and train.images.dtype == torch.float32
    assert test.images.shape == (200, 1, 1000)
    assert set(train.labels.tolist()) == {0, 1, 2, 3} and train.labels.dtype == torch.int64
    assert train.classes == ["2 Hz", "4 Hz", "6 Hz", "8 Hz"]
    assert not torch.equal(train.images[:200], test.images)
    assert torch.equal(load("sinusoids", "train", n=10).images, load("sinusoids", "train", n=10).images)
    # unit amplitude plus noise of std 0.5: variance 1/2 + 1/4
    assert train.images.var(-1).mean() == pytest.approx(0.75, rel=0.05)


def test_sinusoids_dominant_frequency_matches_class():
    ds = load("sinusoids", "train", n=300, noise=0.0)
    freqs = torch.tensor([2.0, 4.0, 6.0, 8.0])[ds.labels]
    peak = torch.fft.rfft(ds.images[:, 0], dim=-1).abs().argmax(-1).float() * 100 / 1000  # 0.1 Hz bins
    assert ((peak - freqs).abs() <= 0.5 + 0.1 + 1e-6).all()
    assert (peak - freqs).abs().max() > 0.3  # the jitter is there
    assert ds.images.abs().max() <= 1.0 + 1e-6


def test_sinusoids_rejects_size():
    with pytest.raises(ValueError, match="size does not apply"):
        load("sinusoids", "train", size=28)


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


# ---------------------------------------------------------------- scenes


def _scenes(**opts):
    return load("scenes", "test", **{"n": 400, "seed": 0, **opts})


def _placement(ds):
    """Each scene's item scale (box width / the item's own box width) and the x of the item's frame, recovered
    from the box: the box is the item's Fashion-MNIST box, scaled and moved."""
    _, _, item_boxes, _ = data._fashion_arrays("test", None)
    own = item_boxes[data._subset_indices(len(item_boxes), len(ds), 0, "")]
    scale = (ds.boxes[:, 2] - ds.boxes[:, 0]) / (own[:, 2] - own[:, 0])
    return scale, ds.boxes[:, 0] - own[:, 0] * scale


def test_scenes_shape_labels_boxes_and_classes(fm_test):
    ds = _scenes()
    assert ds.images.shape == (400, 3, data.SCENE_SIZE, data.SCENE_SIZE) and ds.images.dtype == torch.uint8
    assert ds.classes == data.FASHION_MNIST_CLASSES and ds.synsets == data.FASHION_MNIST_SYNSETS
    assert torch.equal(ds.labels, fm_test.labels[data._subset_indices(len(fm_test), 400, 0, "")])
    assert ds.boxes.shape == (400, 4) and (ds.boxes >= 0).all() and (ds.boxes <= data.SCENE_SIZE).all()
    assert load("scenes", "test", n=8, size=40).images.shape == (8, 3, 40, 40)


def test_scenes_boxes_hold_every_pixel_of_the_item(fm_test):
    ds = _scenes(distractors=0.0, background=0.0)  # only the main item is drawn
    lit = ds.images.amax(1) > 25  # the item's pixels (its own box is of the pixels above 10 of 255)
    ys, xs = torch.arange(ds.images.shape[-1])[None, :, None], torch.arange(ds.images.shape[-1])[None, None, :]
    b = ds.boxes[:, :, None, None]  # a pixel's centre is its index + 0.5; a pixel of resampling blur is allowed
    inside = (xs + 0.5 > b[:, 0] - 1) & (xs + 0.5 < b[:, 2] + 1) & (ys + 0.5 > b[:, 1] - 1) & (ys + 0.5 < b[:, 3] + 1)
    assert lit.any((1, 2)).all() and not (lit & ~inside).any()
    # and the box is tight: its edge rows and columns hold the item
    assert (lit.float().sum((1, 2)) / ((ds.boxes[:, 2] - ds.boxes[:, 0]) * (ds.boxes[:, 3] - ds.boxes[:, 1]))
            ).median() > 0.3


def test_scenes_spread_of_position_and_scale_is_zero_at_0_and_grows_with_variation(fm_test):
    spread = {}
    for v in (0.0, 0.5, 1.0, 2.0):
        scale, left = _placement(_scenes(variation=v))
        spread[v] = (scale.log().std().item(), left.std().item())
    assert spread[0.0][0] < 1e-4 and spread[0.0][1] < 1e-3, spread  # one size, one place
    for a, b in ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0)):
        assert spread[b][0] > spread[a][0] + 0.05 and spread[b][1] > spread[a][1] + 0.5, spread
    assert abs(spread[1.0][0] - data.SCENE_LOG_SIDE_STD) < 0.08  # unclipped at 1: the documented spread


def test_scenes_are_deterministic_nested_and_differ_by_split_and_seed(fm_test):
    a, b = _scenes(), _scenes()
    assert torch.equal(a.images, b.images) and torch.equal(a.boxes, b.boxes)
    a.images[0] = 0  # a copy, not the cache
    assert not torch.equal(a.images, _scenes().images)
    small = load("scenes", "test", n=50, seed=0)
    assert torch.equal(small.images, b.images[:50]) and torch.equal(small.boxes, b.boxes[:50])
    assert not torch.equal(_scenes(scene_seed=1).images, b.images)
    assert not torch.equal(load("scenes", "train", n=400).images, b.images)


def test_scenes_background_and_distractors_show(fm_test):
    plain = _scenes(distractors=0.0, background=0.0)
    busy = _scenes(distractors=1.0)
    corners = lambda ds: ds.images[:, :, :3, :3].float().mean()
    assert corners(plain) == 0 and corners(busy) > 10  # a background, not black
    outside = lambda ds: (ds.images.amax(1) > 60).float().sum() - (plain.images.amax(1) > 60).float().sum()
    assert outside(busy) > 0.05 * plain.images[:, 0].numel()  # distractors add lit pixels


def test_scenes_from_a_folder_of_items(tmp_path):
    for c in ("disc", "bar"):
        (tmp_path / c).mkdir()
        for i in range(3):
            img = np.zeros((20, 20, 3), np.uint8)
            if c == "disc":
                yy, xx = np.mgrid[:20, :20]
                img[(yy - 10) ** 2 + (xx - 10) ** 2 < 30 + i] = 220
            else:
                img[8:12, 2 + i : 18] = 220
            from PIL import Image

            Image.fromarray(img).save(tmp_path / c / f"{i}.png")
    ds = load("scenes", "train", items="folder", root=str(tmp_path), size=32, distractors=0.0, background=0.0)
    assert ds.classes == ["bar", "disc"] and len(ds) == 6 and ds.images.shape[1:] == (3, 32, 32)
    assert ds.images.float().mean() > 1  # the items are there


def test_scenes_factors_match_the_placement_and_subsets(fm_test):
    ds = _scenes(distractors=0.5)
    assert sorted(ds.factors) == ["distractor", "hue", "offset_x", "offset_y", "side"]
    scale, _ = _placement(ds)
    side = ds.factors["side"]
    assert torch.allclose(scale, side * data.SCENE_SIZE / 28, rtol=1e-4)  # the box is the item scaled by side
    lo, hi = data.SCENE_SIDE_RANGE
    assert (side >= lo).all() and (side <= hi).all()
    assert ds.factors["offset_x"].abs().max() <= 1 and (ds.factors["hue"] >= 0).all()
    assert 0.35 < ds.factors["distractor"].mean() < 0.65
    small = load("scenes", "test", n=50, seed=0, distractors=0.5)
    for k, v in ds.factors.items():
        assert torch.equal(small.factors[k], v[:50]), k


@pytest.mark.parametrize("opts, message", [
    (dict(variation=-1), "variation"), (dict(variation="big"), "variation"), (dict(distractors=1.5), "distractors"),
    (dict(background=2.0), "background"), (dict(size=8), "at least 16 px"), (dict(items="sprites"), "object images"),
    (dict(colour=True), "Valid options: variation, distractors, background, items, scene_seed"),
])
def test_scenes_bad_parameters_say_what_is_valid(opts, message, fm_test):
    with pytest.raises((ValueError, TypeError), match=message):
        load("scenes", "test", n=4, **opts)


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
            lit = rgb_to_hsv(data._tint(torch.tensor(designed), torch.full((2,), 0.8)) * gains.view(1, 3, 1, 1))
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


def test_lighting_is_deterministic_and_subsets_keep_factors_aligned(lighting_test):
    again = _lighting()
    assert torch.equal(again.images, lighting_test.images) and torch.equal(again.labels, lighting_test.labels)
    again.images.zero_()
    again.factors["hue"].zero_()  # copies, not the cache
    assert torch.equal(_lighting().images, lighting_test.images) and lighting_test.factors["hue"].max() > 0
    sub = _lighting(n=300, seed=4, conditions=("D45", "blue"))
    full = _lighting(conditions=("D45", "blue"))
    assert torch.equal(sub.images, full.subset(300, seed=4).images)
    idx = data._subset_indices(6000, 300, 4, "")
    for k, v in full.factors.items():
        assert torch.equal(sub.factors[k], v[idx]) and torch.equal(full.subset(300, seed=4).factors[k], v[idx]), k
    assert torch.equal(load("lighting", "test", n=300, seed=4, conditions=("D45", "blue"), size=16).factors["hue"],
                       sub.factors["hue"])
    assert not torch.equal(_lighting(n=300, seed=4, lighting_seed=1).images, _lighting(n=300, seed=4).images)
    assert not torch.equal(load("lighting", "train", n=300).images, _lighting(n=300).images)


def test_lighting_hue_share_one_keeps_the_data_of_before_the_knob(fm_test):
    import hashlib

    h = hashlib.sha256()
    for split in ("train", "test"):
        ds = load("lighting", split, n=300, size=16, conditions=("D45", "red"), hue_share=1.0)
        for t in (ds.images, ds.labels, ds.factors["hue"], ds.factors["condition"]):
            h.update(t.contiguous().numpy().tobytes())
    assert h.hexdigest()[:16] == "0365ac234aa393d5"  # the digest of these loads before hue_share existed (c0838d8)
    assert data.lighting_classes(1.0) == data.LIGHTING_CLASSES


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

"""invlib.data.real: real Fashion-MNIST (Debian package) and generated CIFAR / ImageNet / folder fixtures."""

import gzip
import math
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from invlib import data, streaming
from invlib.data import DataMissingError, load, real

FM_FILES = [f + ".gz" for s in ("train", "test") for f in data.FASHION_MNIST_FILES[s]]
DEBIAN = data.DEBIAN_FASHION_MNIST
needs_debian = pytest.mark.skipif(not (DEBIAN / FM_FILES[2]).is_file(), reason="dataset-fashion-mnist not installed")


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
    monkeypatch.setattr(real, "DEBIAN_FASHION_MNIST", tmp_path / "debian")
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
        real._read_idx(tmp_path / "bad")


def test_loads_are_cached_and_return_copies(fm_test, monkeypatch):
    def no_reading(path):
        raise AssertionError(f"{path} was read again: the parsed split should come from the cache")

    load("fashion_mnist", "test")  # in the cache now, whatever other tests evicted from it (it holds a few splits)
    monkeypatch.setattr(real, "_read_idx", no_reading)
    a = load("fashion_mnist", "test")
    a.images.zero_()
    a.labels.zero_()
    b = load("fashion_mnist", "test")
    assert torch.equal(b.images, fm_test.images) and torch.equal(b.labels, fm_test.labels)


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


@needs_debian
def test_check_without_loading_reads_only_the_built_folder(fm_test, capsys, monkeypatch):
    from invlib import wordnet

    def never():
        raise AssertionError("load=False must not load WordNet when its Debian files are here")

    monkeypatch.delenv("INVLIB_DATA", raising=False)
    monkeypatch.setattr(wordnet, "ensure", never)
    report = data.check(load=False)
    assert report["wordnet"]["ready"] and report["wordnet"]["version"] == wordnet.DEBIAN_VERSION
    assert wordnet._dir_ok(Path(report["wordnet"]["root"]), wordnet.DEBIAN_DIR)
    assert "must not load" in data.check()["wordnet"]["message"]  # the default loads it (and reports, never raises)


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
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (w, h), tuple(rgb)).save(path, format="JPEG", quality=95)


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


@pytest.mark.slow
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


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_user_folder(tmp_path):
    from PIL import Image

    for split in ("train", "test"):
        for cls, colour in (("tabby", (120, 120, 0)), ("beagle", (0, 200, 0))):
            for i in range(2 if split == "train" else 1):
                p = tmp_path / "split" / split / cls / f"{i}.png"
                p.parent.mkdir(parents=True, exist_ok=True)
                Image.new("RGB", (10, 20), colour).save(p)
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


def _greys(folder, n, side=(30, 20)):
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        Image.new("L", side, 40 * i).save(folder / f"{i}.{'png' if i % 2 else 'jpg'}")


def test_a_folder_without_images_says_what_it_holds_and_what_is_read(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataMissingError, match=r"No images in .*empty: it holds no files\. Images are read with "
                       r"the extensions \.jpg, \.jpeg, \.png, \.gif, \.webp \(any case\), from "
                       r"<folder>/<class>/<image> \(or <folder>/<image>, as one class\)"):
        load("folder", root=tmp_path / "empty")
    for name in ("a.tif", "b.bmp", "notes.txt"):  # other kinds of files, in class folders: named
        (tmp_path / "others" / "cats").mkdir(parents=True, exist_ok=True)
        (tmp_path / "others" / "cats" / name).write_text("x")
    with pytest.raises(DataMissingError, match=r"it holds 3 file\(s\) of other kinds \(cats/a.tif, cats/b.bmp, "
                       r"cats/notes.txt\) and the folder\(s\) cats\. Images are read with the extensions"):
        data.train_test("folder", root=tmp_path / "others")
    (tmp_path / "split" / "train" / "dogs").mkdir(parents=True)
    (tmp_path / "split" / "test").mkdir()
    with pytest.raises(DataMissingError, match="No images in .*train: it holds no files and the folder"):
        data.train_test("folder", root=tmp_path / "split")


def test_a_folder_of_one_class_loads_and_says_why_class_measures_skip(tmp_path):
    _greys(tmp_path / "one" / "cats", 10)
    ds = load("folder", root=tmp_path / "one", size=8)
    assert ds.classes == ["cats"] and ds.labels.tolist() == [0] * 10 and ds.images.shape == (10, 3, 8, 8)
    assert torch.equal(ds.images[:, 0], ds.images[:, 2]), "greyscale images are repeated to RGB"
    train, test = data.train_test("folder", root=tmp_path / "one", n_train=6, n_test=4, size=8)
    assert (len(train), len(test), train.classes, test.classes) == (6, 4, ["cats"], ["cats"])
    assert data.too_few_classes(ds) == ("not measured: the images have 1 class ('cats'), and this measure "
                                        "compares at least 2.")
    assert data.too_few_classes(ds, need=1) == ""
    _greys(tmp_path / "flat", 5)  # images without class folders: one class, named after the folder
    flat = load("folder", root=tmp_path / "flat", size=8)
    assert flat.classes == ["flat"] and len(flat) == 5 and data.too_few_classes(flat).startswith("not measured")
    assert len(load("folder", root=tmp_path / "flat", size=8, stream=True).images[:]) == 5
    two = tmp_path / "two"
    _greys(two / "a", 3)
    _greys(two / "b", 3)
    assert data.too_few_classes(load("folder", root=two)) == ""


def test_images_that_cannot_be_decoded_are_named(tmp_path):
    _greys(tmp_path / "f" / "a", 6)
    _greys(tmp_path / "f" / "b", 6)
    (tmp_path / "f" / "a" / "broken.jpg").write_bytes(b"garbage, not a JPEG")
    (tmp_path / "f" / "b" / "cut.png").write_bytes((tmp_path / "f" / "b" / "1.png").read_bytes()[:40])
    with pytest.raises(streaming.UnreadableImageError, match=r"2 of 14 image files cannot be decoded: "
                       r".*a/broken.jpg \(.*\); .*b/cut.png \(.*\)\. Remove or replace them") as err:
        load("folder", root=tmp_path / "f", size=8)
    assert sorted(Path(p).name for p in err.value.paths) == ["broken.jpg", "cut.png"]
    with pytest.raises(streaming.UnreadableImageError, match="broken.jpg"):
        data.train_test("folder", root=tmp_path / "f", n_train=12, n_test=2, size=8)
    disk = load("folder", root=tmp_path / "f", size=8, stream=True)  # on disk: named when its batch is read
    with pytest.raises(streaming.UnreadableImageError, match="Cannot decode the image .*broken.jpg"):
        disk.images[:]


def test_fashion_mnist_items_are_the_split_uncopied_with_boxes(fm_test):
    items, source = real.fashion_mnist_items("test")
    assert torch.equal(items.images, fm_test.images) and torch.equal(items.boxes, fm_test.boxes)
    assert items.images.data_ptr() == real.fashion_mnist_items("test")[0].images.data_ptr()  # the cached arrays
    assert source == str(real._find_fashion("test", None)[0].parent)

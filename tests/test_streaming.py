"""Images that stay on disk (invlib.streaming): the lazy array, the one batch iterator, and every consumer of a
dataset reading a folder larger than the memory cap exactly as it reads the same folder in memory."""

import multiprocessing
import os
import subprocess
import sys
import warnings

import pytest
import torch

from invlib import data, metrics, models, streaming, utils, zoo
from invlib.streaming import ImageFiles
from invlib.train import TrainConfig, evaluate, fit


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """48 small random JPEGs of varied shapes in two class folders."""
    return streaming.demo_folder(tmp_path_factory.mktemp("jpegs"), n=48, classes=2)


def _both(folder, size=24, n=None):
    """The same folder in memory and on disk."""
    return (data.load("folder", root=folder, size=size, n=n, stream=False),
            data.load("folder", root=folder, size=size, n=n, stream=True))


# ------------------------------------------------------------------------------ the lazy array and the iterator
def test_memory_cap_reads_sizes_and_rejects_nonsense(monkeypatch):
    for text, value in (("512M", 2**29), ("8G", 8 * 2**30), ("1000", 1000), ("1.5k", 1536), ("2GiB", 2**31)):
        monkeypatch.setenv("INVLIB_MEMORY_CAP", text)
        assert streaming.memory_cap() == value
    monkeypatch.setenv("INVLIB_MEMORY_CAP", "lots")
    with pytest.raises(ValueError, match="512M, 8G"):
        streaming.memory_cap()


def test_a_folder_over_the_cap_streams_and_is_the_same_data(folder, monkeypatch, capsys):
    memory, _ = _both(folder)
    monkeypatch.setenv("INVLIB_MEMORY_CAP", str(memory.images.numel() - 1))
    auto = data.load("folder", root=folder, size=24)
    assert auto.streams and "stream from disk" in capsys.readouterr().out and "on disk" in repr(auto)
    assert torch.equal(auto.images[:], memory.images) and torch.equal(auto.labels, memory.labels)
    monkeypatch.setenv("INVLIB_MEMORY_CAP", str(memory.images.numel()))
    assert not data.load("folder", root=folder, size=24).streams  # it fits: in memory, the default


def test_image_files_index_like_a_tensor_and_cut_without_decoding(folder):
    memory, disk = _both(folder)
    files = disk.images
    assert (len(files), files.shape, files.dtype, files.ndim) == (48, (48, 3, 24, 24), torch.uint8, 4)
    assert torch.equal(files[3], memory.images[3]) and torch.equal(files[torch.tensor(5)], memory.images[5])
    idx = torch.tensor([7, 0, 7])
    assert torch.equal(files[idx], memory.images[idx]) and torch.equal(files[[1, 2]], memory.images[[1, 2]])
    assert torch.equal(files[files_mask := torch.arange(48) % 5 == 0], memory.images[files_mask])
    part = disk.rows(slice(10, 20))  # a Dataset's rows stay on disk
    assert isinstance(part.images, ImageFiles) and torch.equal(part.images[:], memory.images[10:20])
    sub = disk.subset(9, seed=3)
    assert sub.streams and torch.equal(sub.images[:], memory.subset(9, seed=3).images)
    assert torch.equal(data.load("folder", root=folder, size=24, n=9, seed=3, stream=True).images[:],
                       sub.images[:])  # the subset is drawn before anything is decoded, as in memory
    bigger = disk.resize(32)  # load(size=...) on files: decoded at the new side, boxes scaled
    assert bigger.streams and bigger.images[:2].shape == (2, 3, 32, 32)
    with pytest.raises(TypeError, match="indexed by rows only"):
        files[0:2, :, :4]
    with pytest.raises(ValueError, match="Valid decoders: torchcodec, pil, torchvision"):
        ImageFiles(files.paths, 24, decoder="cv2")
    with pytest.raises(ValueError, match="margin is the side of the black canvas"):
        files.with_margin(0.5)
    with pytest.raises(ValueError, match="before adding a margin"):
        data.Dataset("folder", "train", files.with_margin(1.5), disk.labels, disk.classes).resize(32)


@pytest.mark.parametrize("workers", [0, 2])
def test_batches_give_the_rows_in_order_whatever_the_workers(folder, workers):
    memory, disk = _both(folder)
    order = torch.randperm(48, generator=torch.Generator().manual_seed(0))[:40]
    got = list(streaming.batches(disk.images, 16, order, workers=workers))
    assert [len(b) for b in got] == [16, 16, 8]
    assert torch.equal(torch.cat(got), memory.images[order])
    assert torch.equal(torch.cat(list(streaming.batches(memory.images, 16, order))), memory.images[order])
    assert torch.equal(torch.cat(list(streaming.batches(disk.images, 20))), memory.images)  # no order: all, in turn
    with pytest.raises(ValueError, match="batch_size"):
        next(streaming.batches(disk.images, 0))


def test_the_loader_pins_memory_only_for_cuda_and_prefetches_with_workers(monkeypatch):
    cuda, cpu = streaming.loader_options("cuda", workers=3), streaming.loader_options(torch.device("cpu"), 0)
    assert cuda == dict(num_workers=3, pin_memory=True, prefetch_factor=2, persistent_workers=False)
    assert cpu == dict(num_workers=0, pin_memory=False)
    monkeypatch.setenv("INVLIB_LOADER_WORKERS", "5")
    assert streaming.default_workers() == 5 and streaming.loader_options("cpu")["num_workers"] == 5
    monkeypatch.delenv("INVLIB_LOADER_WORKERS")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert streaming.default_workers() == 0  # on 2 cores a worker only takes a core from training
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert streaming.default_workers() == 8
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")  # torchrun, 4 processes on this machine: 4 cores each
    assert streaming.default_workers() == 2


def test_device_branches_without_a_gpu(folder, tmp_path, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("tests what a machine without CUDA does")
    with pytest.raises(RuntimeError, match="-p device=cpu"):
        utils.resolve_device("cuda")
    assert utils.resolve_device("auto").type == "cpu"
    # a model whose spec says cuda, trained or loaded where there is none, is given on the CPU (a login node)
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    spec = zoo.Spec(dataset="folder", root=folder, epochs=0, n_train=8, n_test=8, img_size=16, device="cuda")
    m = zoo.get(spec, progress=False)  # untrained: evaluated where it was made, then kept on the CPU
    assert next(m.parameters()).device.type == "cpu" and m.zoo_info["spec"]["device"] == "cuda"
    with pytest.raises(RuntimeError, match="CUDA is not available"):  # training it here asks for the GPU
        zoo.get(spec.replace(epochs=1), progress=False)


def test_the_training_step_switches_on_cuda_only():
    """What fit does on a GPU, checked without one: bf16 autocast and pinned, channels_last batches."""
    from invlib import train

    assert train.autocast_dtype(TrainConfig(), torch.device("cuda", 1)) == torch.bfloat16
    assert train.autocast_dtype(TrainConfig(amp=False), torch.device("cuda")) is None
    assert train.autocast_dtype(TrainConfig(), torch.device("cpu")) is None
    x = torch.zeros(2, 3, 8, 8)
    assert train._memory_format(x, True) == torch.channels_last
    assert train._memory_format(x, False) == train._memory_format(x[:, :, 0], True) == torch.contiguous_format


def test_digest_keys_files_by_name_size_and_decoder(folder):
    _, disk = _both(folder)
    files = disk.images
    assert utils.digest(files) == utils.digest(ImageFiles(files.paths, 24)) != utils.digest(ImageFiles(files.paths, 32))
    assert utils.digest(files) != utils.digest(files.take(slice(0, 47)))
    assert utils.digest(files) != utils.digest(ImageFiles(files.paths, 24, decoder="pil"))


# ------------------------------------------------------------------------------ decoding
def _kinds(root):
    """One file of each kind a reader's folder may hold, non-square: (path, its (width, height))."""
    import numpy as np
    from PIL import Image

    gen = np.random.default_rng(0)
    rgb = Image.fromarray(gen.integers(0, 256, (30, 50, 3), dtype=np.uint8))
    grey = rgb.convert("L")
    images = {"rgb.jpg": rgb, "rgb.png": rgb, "grey.jpg": grey, "grey.png": grey, "cmyk.jpg": rgb.convert("CMYK"),
              "palette.png": rgb.quantize(16), "rgba.png": rgb.convert("RGBA"), "grey_alpha.png": grey.convert("LA"),
              "grey16.png": Image.fromarray(gen.integers(0, 65536, (30, 50), dtype=np.uint16)),
              "UPPER.JPEG": rgb, "rgb.webp": rgb}
    for name, img in images.items():
        img.save(root / name, **({"quality": 90} if name.lower().endswith(("jpg", "jpeg")) else {}))
    frames = [Image.new("P", (50, 30), i) for i in (3, 9)]
    frames[0].save(root / "animated.gif", save_all=True, append_images=frames[1:])
    return [(root / name, (50, 30)) for name in [*images, "animated.gif"]]


def test_every_decoder_gives_the_same_rgb_pixels_of_every_kind_of_image(tmp_path):
    for path, size in _kinds(tmp_path):
        img, w, h = streaming.decode(path, 24)
        assert img.shape == (3, 24, 24) and img.dtype == torch.uint8 and img.is_contiguous(), path.name
        assert (w, h) == size, path.name
        if "grey" in path.name:
            assert torch.equal(img[0], img[1]) and torch.equal(img[1], img[2]), "grey repeated to three channels"
        pil = streaming.decode(path, 24, "pil")[0]
        assert (pil.int() - img.int()).abs().max() <= (1 if "16" in path.name else 0), path.name
        with pytest.warns(DeprecationWarning, match="TorchCodec"):  # torchvision's, not hidden: opt-in only
            assert torch.equal(streaming.decode(path, 24, "torchvision")[0], img), path.name
    with pytest.raises(ValueError, match="Valid decoders: torchcodec, pil, torchvision"):
        streaming.decode(path, 24, "cv2")


def test_the_default_decoder_calls_no_deprecated_api(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning, torchvision's deprecation included, fails the test
        assert len(data.load("folder", root=folder, size=24, stream=False)) == 48
        disk = data.load("folder", root=folder, size=24, stream=True).images
        assert streaming.DEFAULT_DECODER == disk.decoder == "torchcodec"
        assert len(list(streaming.batches(disk, 16, workers=0))) == 3


def test_without_torchcodec_pillow_decodes_the_same_pixels_and_says_so(folder, monkeypatch):
    path = data.load("folder", root=folder, size=8, stream=True).images.paths[0]
    expected = streaming.decode(path, 24)[0]
    monkeypatch.setitem(sys.modules, "torchcodec.decoders", None)  # `import torchcodec.decoders` fails
    streaming._torchcodec_decoder.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="TorchCodec cannot decode images here .*decoding with Pillow"):
            assert torch.equal(streaming.decode(path, 24)[0], expected)
    finally:
        streaming._torchcodec_decoder.cache_clear()


@pytest.mark.parametrize("workers", [0, 1])
def test_a_file_that_is_no_image_is_named_when_it_is_decoded(folder, tmp_path, workers):
    bad = tmp_path / "c0" / "broken.jpg"
    bad.parent.mkdir()
    bad.write_bytes(b"not a JPEG at all")
    for decoder in ("torchcodec", "pil"):
        with pytest.raises(streaming.UnreadableImageError, match="Cannot decode the image .*broken.jpg") as err:
            streaming.decode(bad, 16, decoder)
        assert err.value.paths == [str(bad)] and isinstance(err.value, ValueError)
    files = ImageFiles([*data.load("folder", root=folder, size=16, stream=True).images.paths[:3], bad], 16)
    with pytest.raises(streaming.UnreadableImageError, match="broken.jpg"):  # in a worker process too
        list(streaming.batches(files, 2, workers=workers))
    assert not multiprocessing.active_children()  # its workers ended with the error, not left to the collector


# ------------------------------------------------------------------------------ every consumer, the same numbers
@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
@pytest.mark.parametrize("workers", ["0", pytest.param("1", marks=pytest.mark.slow)])
def test_training_on_disk_ends_with_the_same_weights_as_in_memory(folder, workers, monkeypatch):
    monkeypatch.setenv("INVLIB_LOADER_WORKERS", workers)
    memory, disk = _both(folder, size=16)
    cfg = TrainConfig(epochs=2, batch_size=16, device="cpu")
    nets = []
    for ds in (memory, disk):
        net = models.create("small_resnet18", num_classes=2, img_size=16, seed=0)
        hist = fit(net, ds, cfg, augment=zoo.augmentation("standard"), progress=False, test=ds)
        nets.append((net, hist))
    (a, ha), (b, hb) = nets
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    assert [h["loss"] for h in ha] == [h["loss"] for h in hb] and ha[-1]["test_acc"] == hb[-1]["test_acc"]
    a.eval()
    assert evaluate(a, memory) == evaluate(a, disk)
    assert torch.equal(models.batched(a, memory.images, 7), models.batched(a, disk.images, 7))


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_the_zoo_trains_a_folder_larger_than_the_cap(folder, tmp_path, monkeypatch):
    spec = zoo.Spec(dataset="folder", root=folder, epochs=1, n_train=32, n_test=16, img_size=16, batch_size=16)
    weights = []
    for cap, cache in (("1G", "memory"), ("1K", "disk")):
        monkeypatch.setenv("INVLIB_MEMORY_CAP", cap)
        monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / cache))
        zoo._splits.cache_clear()
        assert zoo.splits(spec)[0].streams == (cache == "disk")
        weights.append(zoo.get(spec, progress=False).state_dict())
    zoo._splits.cache_clear()
    assert all(torch.equal(p, q) for p, q in zip(weights[0].values(), weights[1].values()))


@pytest.mark.slow  # about 6 s: make test runs it, make test-fast stays under 2 minutes
def test_paper_measures_read_images_on_disk_as_in_memory(folder, monkeypatch):
    from invlib.papers.a import probes
    from invlib.papers.b import similarity
    from invlib.papers.c import equivariance as C

    memory, disk = _both(folder, size=24)
    net = models.create("small_resnet18", num_classes=2, img_size=24, seed=0).eval()
    embed = similarity.embedding(net)
    # paper A: the ranking probes' features
    boxes = torch.tensor([[4.0, 4, 20, 20]]).expand(48, 4)
    fa, fb = (probes.extract(probes.DCT(), x, boxes, "zoom_in", 16, cache=False) for x in (memory.images, disk.images))
    assert torch.equal(fa.diff, fb.diff) and torch.equal(fa.labels, fb.labels)
    # paper A's margin (chapters A1 and A2 on small images): given on disk as each image is decoded
    (mi, mb), (di, db) = (probes.add_margin(x, boxes, 1.5) for x in (memory.images, disk.images))
    assert di.shape == mi.shape == (48, 3, 36, 36) and torch.equal(di[:], mi) and torch.equal(db, mb)
    assert utils.digest(di) != utils.digest(disk.images)
    # paper B: the sweep and the similarity search (all of a small set is one chunk: the same draws)
    rows = [similarity.sweep({"m": embed}, x, ["rotate", "brightness_up"], levels=[0, 4]) for x in
            (memory.float(), disk.images)]
    assert rows[0] == rows[1]
    found = [similarity.search(embed, x, memory.labels, ["rotate/3", "invert/1"])
             for x in (memory.float(), disk.images)]
    assert torch.equal(found[0].changes, found[1].changes)
    monkeypatch.setattr(similarity, "STREAM_CHUNK", 10)  # chunks of their own draws: same shape, identity still 1
    chunked = similarity.sweep({"m": embed}, disk.images, ["rotate"], levels=[0, 4])
    assert chunked[0]["median"] == pytest.approx(1.0) and len(chunked) == 2
    one = similarity.search(embed, disk.images, memory.labels, ["rotate/3"])
    assert one.changes.shape == found[0].changes[:1].shape
    # the shared relative invariance of the metrics module
    flip = lambda b, g: b.flip(-1)
    same = [metrics.invariance(net, x, flip, 16) for x in (memory.float(), disk.images)]
    assert torch.equal(*same)
    # paper C: maps M_g fitted and scored on images read from disk
    S = C.settings("smoke", n_fit=24, n_eval=24, map_epochs=2)
    fit_sets = [ds.rows(slice(0, 24)) for ds in (memory, disk)]
    eval_sets = [ds.rows(slice(24, 48)) for ds in (memory, disk)]
    tables = [C.measure_network(net, "rotation", [-30.0, 5.0], S, f, e) for f, e in zip(fit_sets, eval_sets)]
    cols = ["clean", "inv_acc", "eq_acc", "inv_l2", "eq_l2"]
    assert tables[0][cols].equals(tables[1][cols])


@pytest.mark.slow  # about 5 s: make test runs it, make test-fast keeps under 2 minutes
def test_a_learned_augmentation_trains_on_disk_as_in_memory(folder):
    """Papers D and E train through invlib.train.fit, as every model of the book: an Augerino network here."""
    from invlib.learned import augerino

    memory, disk = _both(folder, size=16)
    states = []
    for ds in (memory, disk):
        torch.manual_seed(0)
        net = augerino.augerino(models.create("small_resnet18", num_classes=2, img_size=16, seed=0))
        fit(net, ds, TrainConfig(epochs=1, batch_size=16, optimizer="adam", lr=1e-3), progress=False)
        states.append(net.state_dict())
    assert all(torch.equal(p, q) for p, q in zip(states[0].values(), states[1].values()))


# ------------------------------------------------------------------------------ paper scale, reduced, end to end
def test_write_imagenet_folder_rejects_bad_sides(tmp_path):
    with pytest.raises(ValueError, match="16 <= low <= high"):
        data.write_imagenet_folder(tmp_path, sides=(300, 64))


@pytest.mark.slow
def test_write_imagenet_folder_gives_varied_jpegs_with_ilsvrc_boxes(tmp_path):
    root = data.write_imagenet_folder(tmp_path / "imagenet", train_per_class=3, test_per_class=2, sides=(64, 300))
    train = data.load("imagenet", "train", root=root, size=64)
    val = data.load("imagenet", "test", root=root, size=64)
    assert len(train) == 30 and len(val) == 20 and train.synsets[train.classes.index("n03595614")] == "jersey.n.03"
    sizes = {data.image_size(p) for p in sorted(root.rglob("*.JPEG"))}
    assert len(sizes) > 20 and all(64 <= s <= 300 for wh in sizes for s in wh)
    assert len(list((root / "boxes").rglob("*.xml"))) == 50
    b = train.boxes
    assert (b[:, :2] >= 0).all() and (b[:, 2:] <= 64).all() and (b[:, 2:] > b[:, :2]).all()
    assert ((b[:, 2] - b[:, 0]) < 63).any()  # objects that do not fill the frame: boxes from the XML


@pytest.mark.slow
def test_paper_profiles_of_b1_and_c1_run_reduced_on_a_streamed_folder(tmp_path, monkeypatch, copy_book):
    """B1's family trained by torchrun (2 processes, gloo), then chapters B1 and C1 on the paper profile, reduced
    by parameters, on a generated ImageNet-style folder that streams from disk (memory cap 100 KB)."""
    from invlib import book, results

    root = data.write_imagenet_folder(tmp_path / "imagenet", train_per_class=16, test_per_class=4)
    monkeypatch.setenv("INVLIB_MEMORY_CAP", "100K")
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    b1 = dict(root=str(root), size=48, n_train=160, epochs=1, seeds=1, device="cpu",
              methods=["fixed_size_center_crop", "rrc"])
    family = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=29547", "-m",
              "invlib", "family", "b.rrc", "--profile", "paper"] + [f"-p{k}={v!r}" for k, v in b1.items()]
    proc = subprocess.run(family, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 models of b.rrc" in proc.stdout and "stream from disk" in proc.stdout
    trained = sorted((tmp_path / "cache" / "zoo").glob("*.pt"))
    assert len(trained) == 2 and all("tv-resnet18" in p.name for p in trained)
    stamps = {p: p.stat().st_mtime_ns for p in trained}

    c1 = dict(root=str(root), n_train=160, epochs=1, types=["rotation"], magnitudes=1, baselines=1, grid="small",
              n_fit=32, n_eval=24, map_epochs=1, device="cpu")
    site = copy_book(tmp_path / "book")
    for name, params in (("b1_rrc_decomposition", b1), ("c1_invariance_equivariance", c1)):
        (ch,) = [c for c in book.build("paper", only=[name], params=params, root=site, site=False,
                                       echo=lambda *a, **k: None) if c.name == name]
        assert ch.status == "ok"
        saved = results.load(name, "paper")
        assert saved["env"]["device"] == "cpu" and saved["params"]["dataset"] == "imagenet"
        assert saved["claims"], f"{name} recorded no claims"
    assert {p: p.stat().st_mtime_ns for p in trained} == stamps  # B1 measured torchrun's models, trained none
    assert len(list((tmp_path / "cache" / "zoo").glob("tv-alexnet*.pt"))) == 2  # C1 trained AlexNets on disk data

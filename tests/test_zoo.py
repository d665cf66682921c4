import dataclasses
import os
import re
import warnings
from pathlib import Path

import pytest
import torch

from invlib import __main__ as cli
from invlib import crops, models, train, utils, zoo
from invlib.papers.a import tables
from invlib.papers.b import grounding
from invlib.profiles import PROFILES, Profile
from invlib.utils import cache_dir

TINY = Profile("tiny", n_train=512, n_test=256, epochs=1, batch_size=32, progress=False)
ROOT = Path(__file__).resolve().parent.parent
SPEC = zoo.Spec(n_train=1024, n_test=128, epochs=1, batch_size=32)  # learns: > 30 % test accuracy


def _weights(model):
    return [t.clone() for t in model.state_dict().values()]


def _same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


def write_folder(root, classes=("dot", "bar", "block"), per_class=20, size=24):
    """A user's image folder: greyscale PNGs, one shape per class (a dot, a bar, a block: different areas) at
    random positions; every image is unique (its brightness is its index)."""
    from PIL import Image

    gen = torch.Generator().manual_seed(0)
    for c, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            img = torch.zeros(1, size, size, dtype=torch.uint8)
            x, y = torch.randint(1, size - 14, (2,), generator=gen).tolist()
            h, w = ((3, 3), (4, size - 2), (14, 14))[c]
            img[0, y:y + h, x:x + w] = 155 + i
            Image.fromarray(img[0].numpy(), mode="L").save(root / name / f"{i:03d}.png")
    return root


# ----------------------------------------------------------------------------- specs and names
def test_same_spec_same_path_and_every_field_that_changes_weights_a_new_one(tmp_path):
    base = zoo.path(SPEC)
    assert base == zoo.path(dataclasses.replace(SPEC)) == zoo.path(SPEC.replace(device="cuda"))
    changes = dict(arch="small_vit", dataset="fashion_mnist", root=str(tmp_path), augment="standard",
                   augment_params={"flip_p": 0.0}, seed=1, n_train=300, img_size=32, epochs=2,
                   batch_size=64, optimizer="adam", lr=0.01, weight_decay=0.0, warmup_epochs=0.5,
                   schedule="step", step_size=10, data_options={"color_seed": 1})
    assert set(changes) == {f.name for f in dataclasses.fields(zoo.Spec)} - {"device", "n_test", "precision"}
    # the precision trains other weights: bf16 is keyed; float32 has no field, so every earlier key still holds
    fp32, bf16 = SPEC.replace(precision="float32"), SPEC.replace(precision="bf16")
    assert zoo.path(fp32) != zoo.path(bf16) and "precision" not in fp32.key() and bf16.key()["precision"] == "bf16"
    assert zoo.path(SPEC.replace(n_test=100)) == base  # where it is scored, not what it learns
    folder = SPEC.replace(dataset="folder", root=str(tmp_path))  # a folder's held-out test images leave training
    assert zoo.path(folder.replace(n_test=100)) != zoo.path(folder)
    paths = {field: zoo.path(SPEC.replace(**{field: value})) for field, value in changes.items()
             if field != "augment_params"}
    paths["augment_params"] = zoo.path(SPEC.replace(augment="standard", augment_params=changes["augment_params"]))
    assert base not in paths.values() and len(set(paths.values())) == len(changes)
    explicit_default = SPEC.replace(augment="standard", augment_params={"flip_p": 0.5})
    assert zoo.path(explicit_default) == paths["augment"]  # the same augmentation, the same model
    untrained = SPEC.replace(epochs=0)  # no training: the recipe does not matter
    assert zoo.path(untrained) == zoo.path(untrained.replace(lr=0.5, augment="standard", n_train=9))
    assert zoo.path(untrained) != zoo.path(untrained.replace(seed=1))


def test_the_precision_is_bf16_only_for_the_resnets_on_a_cpu_with_bf16_and_can_be_forced(monkeypatch):
    monkeypatch.delenv("INVLIB_PRECISION", raising=False)
    monkeypatch.setattr("invlib.train.cpu_has_bf16", lambda: True)
    assert zoo.Spec("small_resnet18", device="cpu").precision == "bf16", "the book's default: bf16 where faster"
    monkeypatch.setenv("INVLIB_PRECISION", "float32")
    assert zoo.Spec("small_resnet18", device="cpu").precision == "float32", "every model in float32 when asked"
    monkeypatch.setenv("INVLIB_PRECISION", "auto")
    assert zoo.resolve_precision("small_resnet18", "cpu") == "bf16"
    assert zoo.resolve_precision("small_vit", "cpu") == "float32", "the ViT runs slower under bf16"
    assert zoo.resolve_precision("small_resnet18", "cuda") == "float32", "a GPU autocasts anyway (TrainConfig.amp)"
    assert zoo.Spec("small_resnet18", device="cpu").train_config().cpu_bf16
    monkeypatch.setattr("invlib.train.cpu_has_bf16", lambda: False)  # emulated bf16 is 6-16x slower
    assert zoo.resolve_precision("small_resnet18", "cpu") == "float32"
    monkeypatch.setenv("INVLIB_PRECISION", "bf16")
    assert zoo.Spec("small_resnet18", device="cpu").precision == "bf16"
    assert zoo.Spec("small_resnet18", device="cpu", precision="float32").precision == "float32", "asked for"
    monkeypatch.setenv("INVLIB_PRECISION", "half")
    with pytest.raises(ValueError, match="Valid .*float32"):
        zoo.Spec("small_resnet18", device="cpu")
    for precision in ("bf16", "float32"):  # a zoo model is measured in the precision its spec trains in
        net = zoo._build(zoo.Spec("small_resnet18", device="cpu", precision=precision), num_classes=10, in_chans=3)
        assert models.precision(net) == precision


def test_augmentation_registry_names_and_parameters():
    with pytest.raises(ValueError, match="Unknown augmentation 'flip'. Valid augmentations: fixed_size_center_crop"):
        zoo.Spec(augment="flip")
    with pytest.raises(ValueError, match="Unknown augmentation 'crop'. Did you mean 'tm_crop'?"):
        zoo.Spec(augment="crop")
    with pytest.raises(ValueError, match="The rotation magnitude must be a number >= 0"):  # values checked at once
        zoo.Spec(augment="tm_rotation", augment_params={"magnitude": -5.0})
    with pytest.raises(TypeError, match=r"'standard' takes the parameters \(scale, ratio, flip_p, size\); got"):
        zoo.Spec(augment="standard", augment_params={"flip": 0.0})
    s = zoo.Spec(augment="standard", augment_params={"scale": [0.5, 1.0], "flip_p": 0.0})
    assert s.augment_params == (("flip_p", 0.0), ("scale", (0.5, 1.0))) and hash(s)
    assert zoo.augmentation(s.augment, **dict(s.augment_params)).scale == (0.5, 1.0)
    zoo.register_augmentation("flip_only", lambda p=0.5: crops.Crop("rrc", scale=(1, 1), ratio=(1, 1), flip_p=p))
    try:
        assert "small_resnet18/flip_only" in zoo.available()
        assert zoo.spec("small_resnet18/flip_only", TINY).augment == "flip_only"
    finally:
        del zoo.AUGMENTATIONS["flip_only"]


def test_named_entries_follow_the_profile_and_bad_input_says_what_is_valid():
    s = zoo.spec("small_vit/none", PROFILES["cpu"])
    cpu = PROFILES["cpu"]
    assert (s.optimizer, s.epochs, s.batch_size, s.n_train) == ("adamw", 2 * cpu.epochs, 64, cpu.n_train)
    assert zoo.spec("small_resnet18/untrained", "gpu").device == "cuda"
    assert zoo.spec("small_resnet18/none", TINY, seed=3).seed == 3
    with pytest.raises(ValueError, match="Did you mean 'small_resnet18/none'.*small_resnet18/none, "):
        zoo.get("resnet18/none", TINY)
    with pytest.raises(ValueError, match="Valid profiles: cpu, gpu, paper, smoke"):
        zoo.get("small_vit/none", "laptop")
    with pytest.raises(TypeError, match="zoo spec field 'seed' must be int"):
        zoo.Spec(seed="0")
    with pytest.raises(ValueError, match="epochs >= 0"):
        zoo.Spec(epochs=-1)


def _zoo_entries(models: dict) -> set:
    """The named entries of ``{name: spec}`` or ``{arch: {variant: spec}}`` specs (``"zoo:<entry>"``)."""
    flat = [v for x in models.values() for v in (x.values() if isinstance(x, dict) else [x])]
    return {v[4:] for v in flat if v.startswith("zoo:")}


def test_the_book_trains_exactly_the_entries_its_chapters_use_on_the_profiles_data():
    """BOOK: the entries chapters load on the profile's own data (what ``python -m invlib zoo train`` trains):
    paper A's backbones, any ``zoo.get("<entry>")`` of a chapter, and paper B's models only where B trains them on
    the profile's data; at smoke and cpu B's models are the same recipes on 56 px scenes (zoo.chapter_profile)."""
    used = {m for f in (ROOT / "notebooks").glob("*.py") for m in re.findall(r'zoo\.get\("(\w+/\w+)"', f.read_text())}
    for profile in ("smoke", "cpu"):
        A, B = tables.settings(profile), grounding.settings(profile)
        used |= _zoo_entries(A.backbones) | _zoo_entries(A.variants)
        assert B.zoo_data and zoo.chapter_profile(B).dataset == "scenes"
        assert _zoo_entries(B.models) == {f"{a}/{v}" for a in ("small_resnet18_s4", "small_vit_p14_cls")
                                          for v in grounding.VARIANTS}
    assert used == set(zoo.BOOK)
    # -p dataset=fashion_mnist_color: paper B's 28 px entries on the profile's data, all named entries of the zoo
    fashion = grounding.settings("cpu", dataset="fashion_mnist_color")
    assert not fashion.zoo_data and _zoo_entries(fashion.models) <= set(zoo.available())


def test_chapter_00_trains_the_entries_several_chapters_share():
    """zoo.SHARED: paper A's three ResNet-18 variants, which chapter 00 trains and shows and chapter A2 loads (the
    standard one is also A1's ResNet-18 backbone); the ResNet-50, A1's alone, is trained by A1."""
    variants = _zoo_entries(tables.settings("cpu").variants)
    assert set(zoo.SHARED) == variants and set(zoo.SHARED) < set(zoo.BOOK)
    assert "small_resnet50_s2/standard" in set(zoo.BOOK) - set(zoo.SHARED)


# ----------------------------------------------------------------------------- data
def test_missing_data_fails_before_any_training_or_job(tmp_path):
    missing = SPEC.replace(dataset="folder", root=str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="nope does not exist"):
        zoo.get(missing)

    class NoJobs:
        def map_array(self, *a):
            raise AssertionError("nothing may be submitted for data that are not there")

    with pytest.raises(FileNotFoundError, match="does not exist"):
        zoo.train_many([SPEC.replace(epochs=0), missing], NoJobs(), progress=False)
    with pytest.raises(ValueError, match="needs root="):
        zoo.get(SPEC.replace(dataset="folder"))


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_a_folder_without_splits_holds_out_a_test_set(tmp_path):
    root = write_folder(tmp_path / "shapes", per_class=40)
    spec = zoo.spec("small_resnet18/none", PROFILES["smoke"], root=root, dataset="folder", n_train=500, n_test=100)
    tr, te = zoo.splits(spec)
    assert (len(tr), len(te)) == (96, 24) and tr.images.shape[1:] == (3, 28, 28)  # capped: a fifth for testing
    assert not set(map(bytes, tr.images.flatten(1).numpy())) & set(map(bytes, te.images.flatten(1).numpy()))
    model = zoo.get(spec.replace(epochs=3, batch_size=16, lr=0.05), progress=False)
    assert model.zoo_info["n_train"] == 96
    assert zoo.test_accuracy(spec.replace(epochs=3, batch_size=16, lr=0.05), model=model) > 0.6  # chance: 1/3


# ----------------------------------------------------------------------------- train, cache, resume
@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_train_once_then_load_from_cache_without_data(monkeypatch):
    first = zoo.get(SPEC)
    info = first.zoo_info
    assert zoo.test_accuracy(SPEC) > 0.3 and len(info["history"]) == 1 and not first.training
    assert info["spec"]["n_train"] == 1024 and not zoo.path(SPEC).with_suffix(".partial").exists()

    def no_training(*a, **k):
        raise AssertionError("should have loaded the cached checkpoint")

    monkeypatch.setattr(zoo, "fit", no_training)
    monkeypatch.setattr(zoo, "splits", no_training)  # a cached model needs no data
    second = zoo.get(SPEC)
    assert second.zoo_info["seconds"] == info["seconds"] and _same(_weights(first), _weights(second))
    assert zoo.test_accuracy(SPEC) == zoo.test_accuracy(SPEC, model=second)  # scored once, kept beside it


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_training_is_deterministic_and_the_seed_matters():
    spec = SPEC.replace(n_train=128)
    a = _weights(zoo.get(spec))
    b = _weights(zoo.get(spec, retrain=True))
    c = _weights(zoo.get(spec.replace(seed=1)))
    assert _same(a, b) and not _same(a, c)


def test_every_seed_of_a_spec_trains_and_is_scored_on_the_same_images():
    # a seed is the initialisation, the order and the augmentation's draws; the data are the papers' one data set
    one, other = (zoo.splits(SPEC.replace(n_train=64, n_test=32, seed=s)) for s in (0, 5))
    for a, b in zip(one, other):
        assert torch.equal(a.images, b.images) and torch.equal(a.labels, b.labels)
    assert zoo.path(SPEC) != zoo.path(SPEC.replace(seed=5)), "the seed still keys the weights"


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_corrupt_checkpoint_is_retrained_with_warning():
    spec = SPEC.replace(arch="small_vit", optimizer="adamw", lr=1e-3, n_train=256)
    model = zoo.get(spec)
    file = zoo.path(spec)
    file.write_bytes(file.read_bytes()[:1000])  # truncated: a crash mid-copy, a full disk
    with pytest.warns(UserWarning, match="unreadable.*retraining"):
        again = zoo.get(spec)
    assert _same(_weights(again), _weights(model))  # deterministic retrain
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zoo.get(spec)  # the rewritten file loads cleanly


def test_untrained_entries_never_train_and_train_all_reports(monkeypatch):
    calls = []
    monkeypatch.setattr(zoo, "fit", lambda *a, **k: calls.append(1))
    rows = zoo.train_all(TINY, ["small_resnet18/untrained"], progress=False)
    assert calls == []
    assert rows[0]["name"] == "small_resnet18/untrained" and rows[0]["test_acc"] < 0.3 and rows[0]["epochs"] == 0
    assert zoo.train_all(TINY, ["small_resnet18/untrained"], progress=False)[0]["cached"]


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_interrupted_training_resumes_from_partial(monkeypatch):
    spec = SPEC.replace(epochs=2, n_train=256, n_test=100)
    real_fit = train.fit

    def crash_after_first_epoch(*a, **k):
        def cb(epoch, record):
            if epoch == 0:
                raise KeyboardInterrupt
        return real_fit(*a, callback=cb, **k)

    monkeypatch.setattr(zoo, "fit", crash_after_first_epoch)
    with pytest.raises(KeyboardInterrupt):
        zoo.get(spec)
    partial = zoo.path(spec).with_suffix(".partial")
    assert partial.exists()
    monkeypatch.setattr(zoo, "fit", real_fit)
    resumed = zoo.get(spec)
    assert [h["epoch"] for h in resumed.zoo_info["history"]] == [0, 1] and not partial.exists()
    assert _same(_weights(resumed), _weights(zoo.get(spec, retrain=True)))  # as if never interrupted


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_corrupt_partial_checkpoint_trains_from_scratch():
    spec = SPEC.replace(seed=120)  # its own cache key
    partial = zoo.path(spec).with_suffix(".partial")
    partial.write_bytes(b"half a checkpoint")
    with pytest.warns(UserWarning, match="corrupt; training small_resnet18/none from scratch"):
        model = zoo.get(spec)
    # trained from scratch: well above chance (0.1) on any CPU (0.26 on an AVX-512 machine, above 0.3 on others)
    assert zoo.test_accuracy(spec, model=model) > 0.18 and not partial.exists()


# ----------------------------------------------------------------------------- families and executors
class InProcess:
    """A stand-in submitit executor: runs each job here, records what was submitted."""

    folder = "here"

    def __init__(self):
        self.submitted = []

    def map_array(self, fn, items):
        self.submitted += items

        class Done:
            def __init__(self, value):
                self.value = value

            def result(self):
                return self.value

        return [Done(fn(i)) for i in items]


def test_a_gpu_spec_trained_elsewhere_loads_here_without_cuda(monkeypatch):
    spec = SPEC.replace(epochs=0, n_test=64, device="cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert next(zoo.get(spec).parameters()).device.type == "cpu"


def test_train_many_submits_only_what_is_missing_once():
    family = [SPEC.replace(epochs=0, seed=48 + k) for k in range(3)]  # seeds 48-50: keys of this test only
    ex = InProcess()
    models = zoo.train_many([*family, family[0]], ex, progress=False)
    assert ex.submitted == family and len(models) == 4
    assert [m.zoo_info["spec"]["seed"] for m in models] == [48, 49, 50, 48]
    again = InProcess()
    zoo.train_many(family, again, progress=False)
    assert again.submitted == []


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_cli_zoo_train_passes_slurm_options_to_the_executor(monkeypatch, capsys):
    made = {}

    def fake_executor(kind, folder=None, **params):
        made.update(kind=kind, **params)
        return InProcess()

    monkeypatch.setattr(zoo, "executor", fake_executor)
    argv = ["zoo", "train", "--profile", "smoke", "--only", "small_resnet18/untrained", "--seeds", "0", "1",
            "--executor", "slurm", "--partition", "gpu", "--timeout-min", "30", "--slurm", "slurm_account=abc",
            "--quiet"]
    assert cli.main(argv) == 0
    assert made == dict(kind="slurm", timeout_min=30, gpus_per_node=0, cpus_per_task=8,
                        slurm_array_parallelism=16, slurm_partition="gpu", slurm_account="abc")
    out = capsys.readouterr().out
    assert out.count("small_resnet18/untrained") == 2


def test_cli_without_slurm_says_so(capsys):
    code = cli.main(["zoo", "train", "--profile", "smoke", "--only", "small_resnet18/untrained", "--executor",
                     "slurm", "--quiet"])
    assert code == 2 and "No SLURM here" in capsys.readouterr().err


@pytest.mark.slow
def test_train_many_trains_a_family_through_submitit_local_jobs(tmp_path):
    import submitit

    family = [SPEC.replace(n_train=128, seed=80), SPEC.replace(n_train=128, seed=81),  # seeds: keys of this test
              SPEC.replace(n_train=128, seed=80, augment="standard")]
    ex = submitit.LocalExecutor(tmp_path / "logs")
    ex.update_parameters(timeout_min=10)
    models = zoo.train_many(family, ex, progress=False)
    assert all(zoo.path(s).exists() for s in family)
    assert [len(m.zoo_info["history"]) for m in models] == [1, 1, 1]
    assert not _same(_weights(models[0]), _weights(models[1]))
    assert _same(_weights(models[0]), _weights(zoo.get(family[0], retrain=True)))  # a job trains as here
    assert len(list((tmp_path / "logs").glob("*_result.pkl"))) == 3


@pytest.mark.slow
def test_the_books_entries_train_and_beat_chance():
    """What the skipped doctests of get() and train_all() show, on a tiny profile."""
    prof = TINY.replace(n_train=2040)  # about the smoke profile's training set (2,048 would be its very models: cached)
    rows = zoo.train_all(prof, progress=False)
    acc = {r["name"]: r["test_acc"] for r in rows}
    assert list(acc) == list(zoo.BOOK) and not any(r["cached"] for r in rows[1:])  # (untrained: maybe cached)
    assert acc["small_resnet18/untrained"] < 0.2 and acc["small_resnet18/none"] > 0.5  # ten classes: chance 0.1
    assert min(acc["small_resnet18/standard"], acc["small_resnet50_s2/standard"]) > 0.25  # 64 steps of random crops
    assert all(r["cached"] for r in zoo.train_all(prof, progress=False))


LOCK_CHILD = """
import sys
from invlib import zoo
from invlib.profiles import Profile
trained = []
real = zoo._train
zoo._train = lambda *a, **k: trained.append(1) or real(*a, **k)
tiny = Profile("tiny", n_train=256, n_test=128, epochs=1, batch_size=32, progress=False)
m = zoo.get("small_resnet18/none", tiny)
print(len(trained), round(sum(float(p.sum()) for p in m.parameters()), 4))
"""


@pytest.mark.slow
def test_two_processes_asking_for_one_model_train_it_once(tmp_path):
    """The chapters of a parallel build share models: the second process waits on the training lock, then loads."""
    import subprocess
    import sys

    env = {**os.environ, "INVLIB_CACHE": str(tmp_path), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", LOCK_CHILD], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(int(o[0]) for o in outs) == [0, 1], f"trained {outs}: the model must be trained exactly once"
    assert outs[0][1] == outs[1][1]


def test_both_papers_make_their_specs_and_train_their_families_through_the_one_recipe(monkeypatch):
    from invlib.papers.b import rrc
    from invlib.papers.c import equivariance as C

    made = []
    real = zoo.Recipe.spec
    monkeypatch.setattr(zoo.Recipe, "spec", lambda self, *a, **k: made.append(type(self).__module__) or real(
        self, *a, **k))
    B, T = rrc.settings("cpu", n_train=777, device="cpu"), C.settings("cpu", epochs=2)
    b, c = rrc.spec(B, "rrc"), C.spec(T, C.family_members(T)[0])
    assert made == ["invlib.papers.b.rrc", "invlib.papers.c.equivariance"]
    assert (b.n_train, b.device, c.epochs) == (777, "cpu", 2), "a recipe override reaches the spec"
    with pytest.raises(ValueError, match="Valid Settings fields"):
        rrc.settings("cpu", n_trian=5)


def test_a_recipe_trains_its_family_here_or_through_the_named_executor(monkeypatch):
    calls = []
    monkeypatch.setattr(zoo, "executor", lambda kind: f"<{kind} executor>")
    monkeypatch.setattr(zoo, "train_many", lambda specs, ex, progress: calls.append((len(specs), ex, progress))
                        or [f"model {s.seed}" for s in specs])
    r = zoo.Recipe(dataset="fashion_mnist_color", arch="small_resnet18", size=28, epochs=1, progress=False)
    family = {"a": [r.spec("none", {}, k, n_test=100) for k in range(2)], "b": [], "c": [r.spec("none", {}, 5, 100)]}
    assert r.train_family(family) == {"a": ["model 0", "model 1"], "b": [], "c": ["model 5"]}
    for name in ("local", "slurm"):
        dataclasses.replace(r, executor=name, progress=True).train_family(family)
    dataclasses.replace(r, executor="none").train_family(family)
    assert calls == [(3, None, False), (3, "<local executor>", True), (3, "<slurm executor>", True), (3, None, False)]
    for field, bad, valid in (("executor", "slrum", "local, none, slurm"), ("optimizer", "sgdm", "adam, adamw, sgd"),
                              ("schedule", "linear", "cosine, none, step")):
        with pytest.raises(ValueError, match=f"Valid {field}s: {valid}"):
            dataclasses.replace(r, **{field: bad})


def test_a_recipe_makes_the_spec_the_zoo_would_from_the_same_fields():
    r = zoo.Recipe(dataset="fashion_mnist_color", arch="small_resnet18", size=28, n_train=300, epochs=3,
                   batch_size=32, optimizer="adamw", lr=0.002, weight_decay=0.01, schedule="cosine", device="cpu")
    s = r.spec("tm_noise", {"magnitude": 8.0}, seed=4, n_test=50)
    assert s == zoo.Spec("small_resnet18", "fashion_mnist_color", None, "tm_noise", {"magnitude": 8.0}, 4, 300, 50, 28,
                         3, 32, "adamw", 0.002, 0.01, schedule="cosine")
    assert zoo.path(s) == zoo.path(s.replace(device="cuda")), "the device is not part of the cache key"
    assert r.spec("none", {}, 0, 50, img_size=32).img_size == 32


def test_dataset_options_enter_the_key_and_the_data_only_when_given():
    plain = zoo.Spec(dataset="scenes", img_size=56, n_train=40, n_test=20)
    assert zoo.path(plain) == zoo.path(plain.replace(data_options={})) != zoo.path(
        plain.replace(data_options={"variation": 0.0}))
    assert "data_options" not in zoo.Spec().key()  # the keys of every spec before the field are unchanged
    # an option at the loader's default is no option: the same model as the plain spec (chapters B1 and B7 share it)
    default = plain.replace(data_options={"variation": 1.0, "distractors": 0.5})
    assert default.data_options == () and zoo.path(default) == zoo.path(plain)
    assert plain.replace(data_options={"variation": 1.0, "distractors": 0.2}).data_options == (("distractors", 0.2),)
    still = zoo.Spec(dataset="scenes", img_size=56, n_train=40, n_test=20, data_options={"variation": 0.0})
    assert still.data_options == (("variation", 0.0),)
    tr, te = zoo.splits(still)
    boxes = torch.cat([tr.boxes, te.boxes])
    assert (boxes[:, [0, 2]].mean(1) - boxes[:, [0, 2]].mean(1).mean()).abs().max() < 6  # centred items
    assert not torch.equal(zoo.splits(plain)[0].images, tr.images)
    with pytest.raises(TypeError, match="variation for dataset 'fashion_mnist_color'. Valid options: color_seed"):
        zoo.Spec(data_options={"variation": 1.0})
    recipe = zoo.Recipe(dataset="scenes", arch="small_resnet18_s2", size=56, n_train=64, epochs=1,
                        data_options=(("variation", 0.5),))
    assert recipe.spec("none", {}, 0, 20).data_options == (("variation", 0.5),)


def test_random_op_then_the_central_crop():
    x = torch.rand(4, 3, 64, 64)
    same = zoo.augmentation("random_op", op="brightness", low=1.0, high=1.0, size=56)(x, torch.Generator())
    assert torch.allclose(same, x[..., 4:60, 4:60], atol=1e-5), "factor 1, then B's fixed central crop"
    turned = zoo.augmentation("random_op", op="rotate", low=-45.0, high=45.0)(x, torch.Generator().manual_seed(0))
    assert turned.shape == x.shape and not torch.allclose(turned, x)
    s = zoo.Spec(augment="random_op", augment_params={"op": "rotate", "low": -45.0, "high": 45.0})
    assert zoo.path(s) != zoo.path(s.replace(augment_params={"op": "rotate", "low": -30.0, "high": 30.0}))


# ----------------------------------------------------------------------------- the book's training phase
def test_estimated_cost_orders_by_work():
    small, big = SPEC.replace(n_train=100), SPEC.replace(n_train=100, arch="small_resnet50")
    assert zoo.estimated_cost(big) > 1.5 * zoo.estimated_cost(small) > 0
    assert zoo.estimated_cost(SPEC.replace(epochs=2)) == pytest.approx(2 * zoo.estimated_cost(SPEC))
    assert zoo.estimated_cost(SPEC.replace(img_size=56)) > 3 * zoo.estimated_cost(SPEC)
    assert zoo.estimated_cost(SPEC.replace(epochs=0)) == 0


def test_the_phases_processes_get_their_threads_and_the_allocator(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.setattr(zoo, "allocator_env", lambda: {"LD_PRELOAD": "libjemalloc.so.2"})
    env = zoo._worker_env(1)
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1" and env["OMP_WAIT_POLICY"] == "PASSIVE"
    assert env["LD_PRELOAD"] == "libjemalloc.so.2" and env["INVLIB_PROGRESS"] == "0"
    monkeypatch.setattr(zoo, "allocator_env", lambda: {})
    monkeypatch.setenv("GOMP_SPINCOUNT", "100")  # the user's own wait policy is kept
    assert "LD_PRELOAD" not in zoo._worker_env(2) and "OMP_WAIT_POLICY" not in zoo._worker_env(1)


@pytest.mark.slow  # spawns two processes
def test_train_phase_trains_what_is_missing_once_longest_first_in_processes(monkeypatch):
    quick = SPEC.replace(n_train=64, seed=71, epochs=1)
    longer = SPEC.replace(n_train=128, seed=72, epochs=1)
    cached = SPEC.replace(epochs=0, seed=73)
    zoo.get(cached)
    lines = []
    rows = zoo.train_phase([quick, longer, cached, quick], workers=2, echo=lambda *a, **k: lines.append(a[0]))
    assert sorted((r["seed"], r["name"]) for r in rows) == [(71, "small_resnet18/none"), (72, "small_resnet18/none")]
    assert all(zoo.path(s).exists() for s in (quick, longer)) and len(lines) == 2
    # a phase's one-thread process trains what this process trains (there under the faster allocator where one is
    # installed, here under the system's: the same weights)
    here = zoo.get(quick.replace(), retrain=True)
    assert _same(_weights(here), _weights(zoo.get(quick)))
    assert zoo.train_phase([quick, longer], workers=2) == []  # all cached: nothing to do


def _task_demo(file):
    """A training phase's task (module level: it goes to another process): what it ran in."""
    maps = Path("/proc/self/maps")
    loaded = [n for n, (lib, _) in utils.ALLOCATORS.items() if maps.exists() and f"lib{lib}." in maps.read_text()]
    Path(file).write_text(f"{os.getpid()} {os.environ['INVLIB_CACHE']} {torch.get_num_threads()} "
                          f"{(loaded or ['system'])[0]}")
    print("a chapter's family prints")


def _task_fails():
    raise ValueError("no data here")


@pytest.mark.slow  # spawns a process
def test_train_phase_runs_its_tasks_first_in_its_one_thread_processes_and_names_a_failing_one(tmp_path):
    spec, lines = SPEC.replace(n_train=32, seed=77, epochs=1), []
    rows = zoo.train_phase([spec], workers=1, echo=lambda *a, **k: lines.append(a[0]),
                           tasks=[("zz_family", _task_demo, (tmp_path / "ran",))])
    assert [(r["name"], r["seed"], r["path"]) for r in rows][0] == ("zz_family", None, None)
    assert rows[1]["seed"] == 77 and rows[0]["seconds"] > 0, "the task before the spec, with one process"
    pid, cache, threads, allocator = (tmp_path / "ran").read_text().split()
    assert int(pid) != os.getpid() and cache == str(cache_dir()) and threads == "1"
    assert allocator == utils.allocator_name(), "the phase's processes run under the allocator installed here"
    assert lines[0].endswith("] zz_family: " + lines[0].split(": ")[-1]) and len(lines) == 2
    assert not any("prints" in line for line in lines)
    again = zoo.train_phase([spec], workers=1, tasks=[("zz_family", _task_demo, (tmp_path / "again",))])
    assert [r["name"] for r in again] == ["zz_family"], "a task always runs (its function loads what it has)"
    with pytest.raises(RuntimeError, match="training zz_broken failed: ValueError: no data here"):
        zoo.train_phase([], workers=1, tasks=[("zz_broken", _task_fails, ())])


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_a_chapter_that_trains_under_the_phase_warns(monkeypatch):
    monkeypatch.setenv(zoo.PHASE_ENV, "1")
    monkeypatch.setenv("INVLIB_CHAPTER", "x9_demo")
    with pytest.warns(zoo.ZooPhaseWarning, match="chapter x9_demo trains zoo model small_resnet18/none"):
        zoo.get(SPEC.replace(n_train=32, seed=74), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zoo.get(SPEC.replace(epochs=0, seed=75))  # an untrained one costs nothing: no warning


def test_test_accuracy_is_scored_once_and_kept():
    spec = SPEC.replace(epochs=0, seed=76)
    acc = zoo.test_accuracy(spec, n_test=64)
    assert 0 <= acc < 0.3 and zoo.path(spec).with_suffix(".scores.json").exists()
    assert zoo.test_accuracy(spec, n_test=64, model=torch.nn.Identity()) == acc  # read back, not recomputed


# ----------------------------------------------------------------------------- load: every model form
FACTORY = """
import torch
from blocks import stem  # a neighbour of this file

INPUT_SIDE = 40


def build():
    return torch.nn.Sequential(stem(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4))


def helper():
    return 3
"""


def _factory(folder: Path, text: str = FACTORY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "blocks.py").write_text("import torch\n\ndef stem():\n    return torch.nn.Conv2d(3, 8, 3, 2)\n")
    (folder / "net.py").write_text(text)
    return folder / "net.py"


def test_load_a_timm_model_from_a_weights_file(tmp_path):
    saved = models.create("resnet18", num_classes=1000, seed=3).eval()  # a random-init timm ResNet-18
    torch.save(saved.state_dict(), tmp_path / "r18.pt")
    model, side = zoo.load(f"resnet18@{tmp_path / 'r18.pt'}", "smoke")
    assert side == 224 and not model.training and _same(_weights(model), _weights(saved))
    x = torch.rand(2, 3, 16, 16)
    mean, std = torch.tensor(models.IMAGENET_MEAN).view(1, 3, 1, 1), torch.tensor(models.IMAGENET_STD).view(1, 3, 1, 1)
    with torch.inference_mode():
        assert torch.allclose(model(x), saved((x - mean) / std), atol=1e-4)  # takes [0, 1] images


def test_load_a_weights_file_gives_the_model_the_files_number_of_classes(tmp_path):
    torch.save({"model": models.create("resnet18", num_classes=5).state_dict()}, tmp_path / "r18_5.pt")
    five, _ = zoo.load(f"resnet18@{tmp_path / 'r18_5.pt'}", "smoke")  # fine-tuned on 5 classes: a 5-way head
    assert five.fc.out_features == 5 and models.check_input(five, 32) == 5


def test_load_a_factory_in_a_python_file(tmp_path):
    net = _factory(tmp_path / "mine")
    model, side = zoo.load(f"{net}:build", "smoke")
    assert side == 40 and not model.training and model(torch.rand(1, 3, 40, 40)).shape == (1, 4)
    again, _ = zoo.load(f"{net}:build", "smoke")
    assert _same(_weights(model), _weights(again)), "built under seed 0: the same model every time"
    assert models.stages(model) == ["0", "pre_logits"]
    (tmp_path / "plain.py").write_text("import torch\n\ndef make():\n    return torch.nn.Sequential(torch.nn.Conv2d("
                                       "3, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())\n")
    assert zoo.load(f"{tmp_path / 'plain.py'}:make")[1] == 224  # no INPUT_SIDE: 224
    at = _factory(tmp_path / "me@host")  # an existing file in a folder with '@' is still the file form
    assert zoo.load(f"{at}:build", "smoke")[1] == 40


def test_load_random_and_zoo_entries_and_a_weights_path_with_a_colon(tmp_path):
    a, side = zoo.load("random:small_resnet18", "smoke")
    assert side == 224 and _same(_weights(a), _weights(zoo.load("random:small_resnet18", "smoke")[0]))
    folder = tmp_path / "run:3"  # '@' decides first: a ':' in the weights' path is no file form
    folder.mkdir()
    torch.save(a.state_dict(), folder / "w.pt")
    b, _ = zoo.load(f"small_resnet18@{folder / 'w.pt'}", "smoke")
    assert _same(_weights(a), _weights(b)) and b.fc.out_features == 1000
    entry, side = zoo.load("zoo:small_resnet18/untrained", "smoke")
    assert side == PROFILES["smoke"].img_size and entry.zoo_info["name"] == "small_resnet18/untrained"


def test_load_an_unknown_form_or_name_lists_the_forms_and_close_names():
    forms = r"zoo:<entry> = .*<model> = .*<model>@<weights-file> = .*random:<model> = .*<file.py>:<function> = "
    for spec in ("timm:resnet18", "", "hf:org/net"):
        with pytest.raises(ValueError, match="The forms: " + forms):
            zoo.load(spec, "smoke")
    with pytest.raises(ValueError, match=r"Unknown model 'resnet81'.*Close matches: resnet18, .*forms: " + forms):
        zoo.load("resnet81", "smoke")
    with pytest.raises(ValueError, match=r"Unknown model 'small_resnt18'.*Close matches: small_resnet18"):
        zoo.load("random:small_resnt18", "smoke")
    with pytest.raises(ValueError, match=r"Unknown model 'resnet81'.*Close matches: resnet18"):
        zoo.load("resnet81@w.pt", "smoke")
    with pytest.raises(ValueError, match=r"name the weights file after '@', 'resnet18@path/to/weights\.pt'"):
        zoo.load("resnet18@", "smoke")


@pytest.mark.parametrize("name", ["resnet18", "tv/resnet18", "small_resnet18"])
def test_load_a_hub_name_offline_fails_at_once_naming_the_weights_file_form(monkeypatch, name):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    probes, real = [], models.is_online
    monkeypatch.setattr(models, "is_online", lambda *a, **k: probes.append((a, k)) or real(*a, **k))

    def download(*args, **kwargs):
        raise AssertionError("tried to download weights while offline")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", download)
    monkeypatch.setattr("timm.models._builder.load_pretrained", download)  # what timm's pretrained=True calls
    with pytest.raises(models.PretrainedUnavailableError, match=f"'{name}@path/to/weights.pt'.*'random:{name}'"):
        zoo.load(name, "smoke")
    assert len(probes) == 1  # one reachability check, answered by HF_HUB_OFFLINE without touching the network


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_load_a_weights_file_that_does_not_fit_names_the_keys(tmp_path):
    torch.save(models.create("resnet18", num_classes=1000).state_dict(), tmp_path / "r18.pt")
    with pytest.raises(models.CheckpointError, match=r"do not fit this ResNet: 96 missing keys .*: layer1\.2\.conv1"):
        zoo.load(f"resnet34@{tmp_path / 'r18.pt'}", "smoke")
    with pytest.raises(models.CheckpointError, match=r"120 missing keys .*stem\.0\.weight.*120 unexpected keys .*"
                                                     r"conv1\.weight.*1 shape mismatch: fc\.weight file"):
        zoo.load(f"small_resnet18@{tmp_path / 'r18.pt'}", "smoke")
    with pytest.raises(models.CheckpointError, match="does not exist"):
        zoo.load(f"resnet18@{tmp_path / 'nothing.pt'}", "smoke")


def test_load_a_python_file_that_lacks_its_function_or_builds_no_fitting_model(tmp_path):
    net = _factory(tmp_path)
    for spec in (f"{net}:nope", str(net), f"{net}:"):
        with pytest.raises(ValueError, match=r"Name the function that returns your model.*net\.py defines: build, "
                                             r"helper\."):
            zoo.load(spec, "smoke")
    with pytest.raises(FileNotFoundError, match=r"Model file '.*missing\.py' does not exist"):
        zoo.load(f"{tmp_path / 'missing.py'}:build", "smoke")
    with pytest.raises(TypeError, match=r"net\.py:helper\(\) returned int 3, not a torch\.nn\.Module"):
        zoo.load(f"{net}:helper", "smoke")
    grey = _factory(tmp_path / "grey", FACTORY.replace("import torch\n", "import torch\nimport blocks\n")
                    .replace("stem()", "torch.nn.Conv2d(1, 8, 3)"))
    with pytest.raises(ValueError, match=r"Sequential rejects a \(1, 3, 40, 40\) input\. It expects 1 input channels"
                                         r".*The error: RuntimeError: .*expected input\[1, 3, 40, 40\] to have 1 "
                                         r"channels"):
        zoo.load(f"{grey}:build", "smoke")
    bad_side = _factory(tmp_path / "side", FACTORY.replace("INPUT_SIDE = 40", "INPUT_SIDE = '40px'"))
    with pytest.raises(TypeError, match="INPUT_SIDE must be a positive int"):
        zoo.load(f"{bad_side}:build", "smoke")

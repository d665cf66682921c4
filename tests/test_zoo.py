import warnings

import pytest
import torch

from invlib import train, zoo
from invlib.profiles import Profile

TINY = Profile("tiny", n_train=1024, n_test=256, epochs=1, batch_size=32, progress=False)


def test_entries_and_bad_names():
    assert zoo.available() == [f"{m}/{v}" for m in ("small_resnet18", "small_vit")
                               for v in ("untrained", "none", "standard")] + [
                                   "small_resnet50/untrained", "small_resnet50/standard"]
    with pytest.raises(ValueError, match="Valid zoo entrys: small_resnet18/none"):
        zoo.get("resnet18/none", TINY)
    with pytest.raises(ValueError, match="Valid profiles: cpu, gpu, paper, smoke"):
        zoo.get("small_vit/none", "laptop")


def test_hash_keys_the_whole_config():
    p = zoo.path("small_resnet18/none", TINY)
    assert p == zoo.path("small_resnet18/none", TINY)
    assert p != zoo.path("small_resnet18/none", TINY.replace(epochs=2))
    assert p != zoo.path("small_resnet18/standard", TINY)
    assert zoo.config("small_resnet18/standard", TINY)["augment"].startswith("StandardAugment(")
    assert zoo.config("small_resnet18/untrained", TINY)["train"] is None


def test_train_once_then_load_from_cache(monkeypatch):
    first = zoo.get("small_resnet18/standard", TINY)
    info = first.zoo_info
    assert info["test_acc"] > 0.3 and len(info["history"]) == 1 and not first.training
    assert not (zoo.path("small_resnet18/standard", TINY).with_suffix(".partial")).exists()

    def no_training(*a, **k):
        raise AssertionError("should have loaded the cached checkpoint")

    monkeypatch.setattr(zoo, "fit", no_training)
    second = zoo.get("small_resnet18/standard", TINY)
    assert second.zoo_info["test_acc"] == info["test_acc"]
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values()))


def test_corrupt_checkpoint_is_retrained_with_warning():
    name = "small_vit/none"
    model = zoo.get(name, TINY)
    file = zoo.path(name, TINY)
    file.write_bytes(file.read_bytes()[:1000])  # truncated: a crash mid-copy, a full disk
    with pytest.warns(UserWarning, match="unreadable.*retraining"):
        again = zoo.get(name, TINY)
    assert again.zoo_info["test_acc"] == pytest.approx(model.zoo_info["test_acc"])  # deterministic retrain
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zoo.get(name, TINY)  # the rewritten file loads cleanly


def test_untrained_is_near_chance_and_train_all_reports(monkeypatch):
    calls = []
    monkeypatch.setattr(zoo, "fit", lambda *a, **k: calls.append(1))
    rows = zoo.train_all(TINY, ["small_resnet18/untrained"], progress=False)
    assert calls == []  # untrained entries never train
    assert rows[0]["name"] == "small_resnet18/untrained" and rows[0]["test_acc"] < 0.3
    assert zoo.train_all(TINY, ["small_resnet18/untrained"], progress=False)[0]["cached"]


def test_interrupted_zoo_training_resumes_from_partial(monkeypatch):
    prof = TINY.replace(epochs=2)
    name = "small_resnet18/none"
    real_fit = train.fit

    def crash_after_first_epoch(*a, **k):
        def cb(epoch, record):
            if epoch == 0:
                raise KeyboardInterrupt
        return real_fit(*a, callback=cb, **k)

    monkeypatch.setattr(zoo, "fit", crash_after_first_epoch)
    with pytest.raises(KeyboardInterrupt):
        zoo.get(name, prof)
    partial = zoo.path(name, prof).with_suffix(".partial")
    assert partial.exists()
    monkeypatch.setattr(zoo, "fit", real_fit)
    resumed = zoo.get(name, prof)
    assert [h["epoch"] for h in resumed.zoo_info["history"]] == [0, 1] and not partial.exists()


def test_corrupt_partial_checkpoint_trains_from_scratch():
    prof = TINY.replace(n_test=128)  # its own cache key
    name = "small_resnet18/none"
    partial = zoo.path(name, prof).with_suffix(".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.write_bytes(b"half a checkpoint")
    with pytest.warns(UserWarning, match="corrupt; training small_resnet18/none from scratch"):
        model = zoo.get(name, prof)
    assert model.zoo_info["test_acc"] > 0.3 and not partial.exists()

import subprocess
import sys
import textwrap

import pytest
import torch

from invlib import models
from invlib import train as train_module
from invlib.crops import standard
from invlib.models import CheckpointError
from invlib.train import TrainConfig, evaluate, fit


def _toy(n=256, seed=0):
    """A learnable toy task: horizontal stripes, vertical stripes, checkerboard or plain noise."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    i = torch.arange(16)
    rows, cols = (i.view(16, 1) // 2 % 2).float(), (i.view(1, 16) // 2 % 2).float()
    patterns = torch.stack(
        [rows.expand(16, 16), cols.expand(16, 16), (rows + cols) % 2, torch.full((16, 16), 0.5)]
    )
    x = 0.7 * patterns[y, None] + 0.3 * torch.rand(n, 1, 16, 16, generator=g)
    return (x * 255).to(torch.uint8), y


def _net():
    torch.manual_seed(0)
    return models.create("small_resnet18", num_classes=4, in_chans=1)


@pytest.mark.slow
def test_fit_learns_and_evaluate_reports():
    data = _toy()
    m = _net()
    before = evaluate(m, data)["acc"]
    hist = fit(m, data, TrainConfig(epochs=3, batch_size=16, lr=0.05), test=_toy(128, seed=1), progress=False)
    assert [h["epoch"] for h in hist] == [0, 1, 2]
    assert hist[-1]["loss"] < hist[0]["loss"]
    assert hist[-1]["test_acc"] > 0.9 > before + 0.3
    assert abs(hist[-1]["lr"]) < 0.05 * 0.1  # cosine ends near zero
    # (batch 16: enough steps for BatchNorm running statistics to forget their initial values)


@pytest.mark.parametrize("opt,schedule", [("adam", "step"), ("adamw", "none"), ("sgd", "cosine")])
def test_optimizers_and_schedules(opt, schedule):
    m = _net()
    cfg = TrainConfig(
        epochs=2, batch_size=32, optimizer=opt, lr=1e-3, schedule=schedule, step_size=1, gamma=0.5
    )
    hist = fit(m, _toy(128), cfg, progress=False)  # 8 steps, as 256 images in batches of 64: half the images
    expected_last_lr = {"step": 1e-3 * 0.5, "none": 1e-3, "cosine": 0.0}[schedule]
    assert hist[-1]["lr"] == pytest.approx(expected_last_lr, abs=1e-4)


def test_same_seed_same_weights_deterministic_cpu():
    a, b = _net(), _net()
    cfg = TrainConfig(epochs=1, batch_size=32)
    fit(a, _toy(96), cfg, augment=standard(), progress=False)  # three steps: draws, batches and updates repeat
    fit(b, _toy(96), cfg, augment=standard(), progress=False)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_bf16_autocast_on_the_cpu_is_deterministic_and_trains_other_weights():
    nets = [_net() for _ in range(3)]
    for net, bf16 in zip(nets, (True, True, False)):
        fit(net, _toy(), TrainConfig(epochs=1, batch_size=32, cpu_bf16=bf16), progress=False)
    a, b, c = (list(n.state_dict().values()) for n in nets)
    assert all(torch.equal(p, q) for p, q in zip(a, b))
    assert not all(torch.equal(p, q) for p, q in zip(a, c))
    assert all(p.dtype == q.dtype for p, q in zip(a, c)), "autocast keeps the weights in float32"
    assert [models.precision(n) for n in nets] == ["bf16", "bf16", "float32"], "measured as it trained"


@pytest.mark.slow
def test_interrupted_run_resumes_to_identical_weights(tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=32)
    full = _net()
    fit(full, _toy(), cfg, augment=standard(), progress=False)

    def crash(epoch, record):
        if epoch == 1:
            raise KeyboardInterrupt("simulated kill after epoch 2's checkpoint")

    ckpt = tmp_path / "run.pt"
    first = _net()
    with pytest.raises(KeyboardInterrupt):
        fit(first, _toy(), cfg, augment=standard(), checkpoint=ckpt, progress=False, callback=crash)
    resumed = _net()  # a fresh process: new model, same checkpoint file
    hist = fit(resumed, _toy(), cfg, augment=standard(), checkpoint=ckpt, progress=False)
    assert [h["epoch"] for h in hist] == [0, 1, 2]
    for (k, p), q in zip(full.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(p, q), k


def test_corrupt_checkpoint_raises_clear_error(tmp_path):
    ckpt = tmp_path / "run.pt"
    ckpt.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="(?s)corrupt.*Delete it"):
        fit(_net(), _toy(), TrainConfig(epochs=1), checkpoint=ckpt, progress=False)


def test_evaluate_is_the_batch_by_batch_loop_bit_for_bit_and_keeps_the_mode():
    import torch.nn.functional as F

    m, (x, y) = _net(), _toy(21)
    m.train()
    got = evaluate(m, (x, y), batch_size=8)
    assert m.training  # its mode is restored
    m.eval()
    correct, loss = 0, 0.0  # the loop evaluate() ran before models.batched
    with torch.inference_mode():
        for i in range(0, 21, 8):
            logits = m((x[i:i + 8].float() / 255).contiguous(memory_format=torch.channels_last)).float()
            correct += (logits.argmax(1) == y[i:i + 8]).sum().item()
            loss += F.cross_entropy(logits, y[i:i + 8], reduction="sum").item()
    # the same predictions; the loss to float32 rounding (some CPUs' kernels depend on the batch's shape)
    assert got["acc"] == correct / 21 and got["n"] == 21 and got["loss"] == pytest.approx(loss / 21, rel=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="Valid optimizers: adam, adamw, sgd"):
        TrainConfig(optimizer="rmsprop")
    with pytest.raises(ValueError, match="Valid schedules"):
        TrainConfig(schedule="linear")
    with pytest.raises(ValueError, match=r"labels \(N,\)"):
        fit(_net(), (torch.rand(8, 1, 16, 16), torch.zeros(7, dtype=torch.long)), progress=False)
    with pytest.raises(TypeError, match="Dataset or a tuple"):
        fit(_net(), torch.rand(8, 1, 16, 16), progress=False)


DDP_SCRIPT = textwrap.dedent("""
    import sys, torch, torch.distributed as dist
    from invlib import models
    from invlib.crops import standard
    from invlib.train import TrainConfig, fit
    torch.manual_seed(0)
    x = torch.rand(128, 1, 16, 16); y = torch.randint(0, 4, (128,))
    m = models.create("small_resnet18", num_classes=4, in_chans=1)
    init = [p.detach().clone() for p in m.parameters()]
    hist = fit(m, (x, y), TrainConfig(epochs=2, batch_size=16), augment=standard(), progress=False)
    rank = dist.get_rank()
    assert dist.get_world_size() == 2 and len(hist) == 2
    moved = sum((p.detach() - q).abs().sum().item() for p, q in zip(m.parameters(), init))
    torch.save({"params": [p.detach() for p in m.parameters()], "moved": moved}, sys.argv[1] + f"/rank{rank}.pt")
    dist.destroy_process_group()
""")


@pytest.mark.slow
def test_ddp_two_cpu_ranks_end_identical(tmp_path):
    script = tmp_path / "ddp_run.py"
    script.write_text(DDP_SCRIPT)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port=29533",
            str(script),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0, r1 = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    assert r0["moved"] > 0  # training happened
    assert all(torch.equal(p, q) for p, q in zip(r0["params"], r1["params"]))


def test_warmup_ramps_the_learning_rate_linearly():
    from invlib.train import _lr_lambda

    f = _lr_lambda(TrainConfig(epochs=4, schedule="none", warmup_epochs=1), steps_per_epoch=10)
    assert [round(f(s), 2) for s in (0, 4, 9, 10, 39)] == [0.1, 0.5, 1.0, 1.0, 1.0]
    cos = _lr_lambda(TrainConfig(epochs=4, schedule="cosine", warmup_epochs=0.5), steps_per_epoch=10)
    assert cos(0) == pytest.approx(0.2, abs=0.01) and cos(20) == pytest.approx(0.5)


def _tiny_run(loss=None, val=None, test=None):
    from invlib.learned import augnet

    torch.manual_seed(0)  # the augmentation layer's own initial draws
    x, y = torch.rand(64, 1, 16, 16), torch.randint(0, 4, (64,))
    net = augnet.augnet(models.create("conv4", num_classes=4, in_chans=1, widths=(4, 4, 4, 4), seed=0), "geometric")
    cfg = TrainConfig(epochs=2, batch_size=32, optimizer="adam", lr=1e-3, aug_weight_decay=1.0)
    hist = fit(net, (x, y), cfg, progress=False, loss=loss, val=val, test=test)
    return net, hist


@pytest.mark.slow
def test_default_loss_is_cross_entropy_plus_the_models_penalty():
    """The hook's default reproduces the loop's behaviour before the hook existed, to the bit."""
    from invlib.train import classification_loss

    def explicit(model, x, y):
        logits = model(x)
        return torch.nn.functional.cross_entropy(logits, y) + model.penalty(), logits

    a, _ = _tiny_run()
    b, _ = _tiny_run(loss=explicit)
    c, _ = _tiny_run(loss=classification_loss())
    for p, q, r in zip(a.state_dict().values(), b.state_dict().values(), c.state_dict().values()):
        assert torch.equal(p, q) and torch.equal(p, r)
    dropped, _ = _tiny_run(loss=lambda m, x, y: (torch.nn.functional.cross_entropy(m(x), y), m(x)))
    assert not torch.equal(a.augment.layers[0].magnitude, dropped.augment.layers[0].magnitude)


def test_a_batch_aware_loss_steers_training():
    """A custom loss that sees the batch: push the logits of class 0 up on every image."""
    x, y = torch.rand(128, 1, 8, 8), torch.randint(0, 3, (128,))
    seen = []

    def favour_class_0(model, xb, yb):
        seen.append((tuple(xb.shape), tuple(yb.shape)))
        logits = model(xb)
        return -logits[:, 0].mean() + logits[:, 1:].pow(2).mean(), logits

    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3))
    fit(model, (x, y), TrainConfig(epochs=2, batch_size=32, lr=0.05, channels_last=False), progress=False,
        loss=favour_class_0)
    assert seen[0] == ((32, 1, 8, 8), (32,)) and len(seen) == 8
    with torch.no_grad():
        assert (model(x).argmax(1) == 0).all()


def test_history_records_state_val_test_and_early_stopped_test():
    x, y = torch.rand(64, 1, 16, 16), torch.randint(0, 4, (64,))
    _, hist = _tiny_run(val=(x[:32], y[:32]), test=(x[32:], y[32:]))
    assert {"state", "val_acc", "test_acc", "test_at_best_val"} <= set(hist[-1])
    best = max(hist, key=lambda r: r["val_acc"])
    assert hist[-1]["test_at_best_val"] == best["test_acc"]
    assert "layer0" in hist[-1]["state"]


def test_a_cached_fit_loads_what_training_gave_and_leaves_the_same_state(monkeypatch, tmp_path):
    """fit(cache=True): the second call trains nothing, returns the same history, gives the model the same
    weights and the random state training left; another config trains again."""
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    data, cfg = _toy(64), TrainConfig(epochs=1, batch_size=16, lr=0.05, seed=3)
    first = _net()
    hist = fit(first, data, cfg, progress=False, cache=True)
    after_first = torch.rand(3)
    assert len(list((tmp_path / "fit").glob(f"*-v{train_module.FIT_CACHE_VERSION}.pt"))) == 1, "a versioned file"
    calls = []
    real = train_module.fit
    monkeypatch.setattr(train_module, "fit", lambda *a, **k: calls.append(k) or real(*a, **k))
    second = _net()
    again = train_module.fit(second, data, cfg, progress=False, cache=True)
    assert again == hist and len(calls) == 1, "the second call must load, not train"
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values()))
    assert torch.equal(torch.rand(3), after_first)
    layouts = [{p.is_contiguous(memory_format=torch.channels_last) for p in m.parameters() if p.ndim == 4}
               for m in (first, second)]
    assert layouts[0] == layouts[1] == {True}, "loaded in the layout training leaves: warm measures as cold did"
    third = _net()
    train_module.fit(third, data, TrainConfig(epochs=1, batch_size=16, lr=0.01, seed=3), progress=False, cache=True)
    assert len(calls) == 3, "a new config is a new key: it trains"
    with pytest.raises(ValueError, match="cannot replay a callback"):
        fit(_net(), data, cfg, progress=False, cache=True, callback=lambda e, r: None)


def test_a_chapter_whose_family_the_phase_trained_warns_when_it_still_trains_one(monkeypatch, tmp_path):
    """Under ``$INVLIB_FAMILY_PHASE`` (the runner sets it in a chapter whose family the training phase trained), a
    cached fit that has to train warns, naming the chapter; one the cache already holds does not."""
    import warnings

    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    data, cfg = _toy(64), TrainConfig(epochs=1, batch_size=16, lr=0.05, seed=3)
    fit(_net(), data, cfg, progress=False, cache=True)  # the phase's training
    monkeypatch.setenv(train_module.FAMILY_PHASE_ENV, "1")
    monkeypatch.setenv("INVLIB_CHAPTER", "x9_demo")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(_net(), data, cfg, progress=False, cache=True)  # found: no warning
    with pytest.warns(train_module.FamilyPhaseWarning, match="chapter x9_demo trains a model .* seed 4"):
        fit(_net(), data, TrainConfig(epochs=1, batch_size=16, lr=0.05, seed=4), progress=False, cache=True)


def test_a_cached_fit_tells_models_apart_that_differ_only_in_a_setting(monkeypatch, tmp_path):
    """Two models with the same weights whose penalty differs by a plain attribute (a regulariser's weight, as
    AugNet's variants do) are two trainings, not one loaded twice."""
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))

    class Penalised(torch.nn.Module):
        def __init__(self, reg):
            super().__init__()
            self.net, self.reg = _net(), reg

        def forward(self, x):
            return self.net(x)

        def penalty(self):
            return self.reg * sum(p.square().sum() for p in self.net.parameters())

    data, cfg = _toy(64), TrainConfig(epochs=1, batch_size=16, lr=0.05, seed=3)
    a, b = Penalised(0.0), Penalised(1.0)
    fit(a, data, cfg, progress=False, cache=True)
    fit(b, data, cfg, progress=False, cache=True)
    assert not all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_steps_per_epoch_is_what_fit_takes():
    assert train_module.steps_per_epoch(2000, 128) == 15 and train_module.steps_per_epoch(100, 128) == 1
    assert train_module.steps_per_epoch(100, 30, world=2) == 1
    with pytest.raises(ValueError, match="Not enough"):
        train_module.steps_per_epoch(1, 8, world=2)
    m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(8, 2))
    hist = fit(m, (torch.rand(70, 2, 4), torch.randint(0, 2, (70,))), TrainConfig(epochs=1, batch_size=32),
                     progress=False, loss=_counting_loss(counter := []))
    assert len(counter) == train_module.steps_per_epoch(70, 32) == 2 and len(hist) == 1


def _counting_loss(counter):
    def loss(model, x, y):
        counter.append(len(x))
        logits = model(x)
        return torch.nn.functional.cross_entropy(logits, y), logits
    return loss


def test_step_seconds_times_every_arm_on_copies_it_steps_and_rejects_no_rounds():
    x, y = torch.rand(32, 3, 8, 8), torch.randint(0, 2, (32,))
    arms = {name: (torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(192, 2)), None, None) for name in "ab"}
    before = arms["a"][0][1].weight.detach().clone()
    torch.manual_seed(3)
    t = train_module.step_seconds(arms, (x, y), TrainConfig(batch_size=16), rounds=3, warmup=1)
    after = torch.rand(2)
    torch.manual_seed(3)
    assert torch.equal(after, torch.rand(2))  # torch's random state as it was found
    assert sorted(t) == ["a", "b"] and all(v.shape == (3,) and (v >= 0).all() for v in t.values())
    assert not torch.equal(before, arms["a"][0][1].weight)  # the arms' models took their steps
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        train_module.step_seconds(arms, (x, y), TrainConfig(batch_size=16), rounds=0)

import subprocess
import sys
import textwrap

import pytest
import torch

from invlib import models
from invlib.models import CheckpointError
from invlib.train import StandardAugment, TrainConfig, evaluate, fit


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
        epochs=2, batch_size=64, optimizer=opt, lr=1e-3, schedule=schedule, step_size=1, gamma=0.5
    )
    hist = fit(m, _toy(), cfg, progress=False)
    expected_last_lr = {"step": 1e-3 * 0.5, "none": 1e-3, "cosine": 0.0}[schedule]
    assert hist[-1]["lr"] == pytest.approx(expected_last_lr, abs=1e-4)


def test_same_seed_same_weights_deterministic_cpu():
    a, b = _net(), _net()
    cfg = TrainConfig(epochs=1, batch_size=32)
    fit(a, _toy(), cfg, augment=StandardAugment(), progress=False)
    fit(b, _toy(), cfg, augment=StandardAugment(), progress=False)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


def test_interrupted_run_resumes_to_identical_weights(tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=32)
    full = _net()
    fit(full, _toy(), cfg, augment=StandardAugment(), progress=False)

    def crash(epoch, record):
        if epoch == 1:
            raise KeyboardInterrupt("simulated kill after epoch 2's checkpoint")

    ckpt = tmp_path / "run.pt"
    first = _net()
    with pytest.raises(KeyboardInterrupt):
        fit(first, _toy(), cfg, augment=StandardAugment(), checkpoint=ckpt, progress=False, callback=crash)
    resumed = _net()  # a fresh process: new model, same checkpoint file
    hist = fit(resumed, _toy(), cfg, augment=StandardAugment(), checkpoint=ckpt, progress=False)
    assert [h["epoch"] for h in hist] == [0, 1, 2]
    for (k, p), q in zip(full.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(p, q), k


def test_corrupt_checkpoint_raises_clear_error(tmp_path):
    ckpt = tmp_path / "run.pt"
    ckpt.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="(?s)corrupt.*Delete it"):
        fit(_net(), _toy(), TrainConfig(epochs=1), checkpoint=ckpt, progress=False)


def test_standard_augment_crops_and_flips_per_sample():
    x = torch.linspace(0, 1, 16).view(1, 1, 1, 16).expand(64, 3, 16, 16).contiguous()
    out = StandardAugment(scale=(1.0, 1.0), ratio=(1.0, 1.0), flip_p=0.5)(x, torch.Generator().manual_seed(0))
    flipped = out[:, 0, 8, 0] > out[:, 0, 8, -1]
    assert 10 < flipped.sum() < 54  # about half the batch flipped, each image on its own
    assert torch.allclose(out[~flipped], x[~flipped], atol=1e-5)  # full-area crop is the identity
    small = StandardAugment(scale=(0.25, 0.25), ratio=(1.0, 1.0), flip_p=0.0)(
        x, torch.Generator().manual_seed(1)
    )
    spread = small[:, 0, 8, -1] - small[:, 0, 8, 0]  # a half-width crop spans half the ramp
    assert torch.allclose(spread, torch.full_like(spread, 0.5), atol=0.08)


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
    from invlib.train import TrainConfig, StandardAugment, fit
    torch.manual_seed(0)
    x = torch.rand(128, 1, 16, 16); y = torch.randint(0, 4, (128,))
    m = models.create("small_resnet18", num_classes=4, in_chans=1)
    init = [p.detach().clone() for p in m.parameters()]
    hist = fit(m, (x, y), TrainConfig(epochs=2, batch_size=16), augment=StandardAugment(), progress=False)
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

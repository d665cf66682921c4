
import pytest
import timm
import torch
from torch import nn

from invlib import models
from invlib.models import CheckpointError, PretrainedUnavailableError


@pytest.mark.parametrize("name", models.available("image"))
def test_our_nets_forward_and_are_in_timms_registry(name):
    assert timm.is_model(name)
    m = models.create(name, num_classes=7, in_chans=1, img_size=28)
    assert m(torch.rand(3, 1, 28, 28)).shape == (3, 7)
    # the same net through timm itself
    assert timm.create_model(name, num_classes=7, in_chans=1).__class__ is m.__class__


def test_factory_serves_timm_and_torchvision_names():
    assert models.create("resnet18", num_classes=5).eval()(torch.rand(1, 3, 32, 32)).shape == (1, 5)
    tv = models.create("tv/resnet18", num_classes=4).eval()
    assert tv.__class__.__module__.startswith("torchvision")
    assert tv(torch.rand(1, 3, 32, 32)).shape == (1, 4)


def test_unknown_model_lists_ours_and_close_matches():
    with pytest.raises(ValueError, match="small_resnet18.*small_vit.*timm") as err:
        models.create("small_resnet81")
    assert "Close matches" in str(err.value)
    with pytest.raises(ValueError, match="Unknown torchvision model"):
        models.create("tv/not_a_net")


def test_probe_layers_and_features_in_one_pass():
    m = models.create("small_resnet18", in_chans=3).eval()
    layers = models.probe_layers(m)
    assert layers == ["layer1", "layer2", "layer3", "layer4", "pre_logits"]
    calls = []
    m.stem.register_forward_hook(lambda *a: calls.append(1))
    x = torch.rand(4, 3, 28, 28)
    f = models.features(m, x)
    assert len(calls) == 1  # one forward for all layers
    assert f["layer1"].shape == (4, 16, 28, 28) and f["layer4"].shape == (4, 128, 4, 4)
    # pre_logits is the classifier input: the fc layer applied to it gives the logits
    with torch.inference_mode():
        assert torch.allclose(m.fc(f["pre_logits"]), m(x), atol=1e-5)
    pooled = models.features(m, x, ["layer2"], pool=True)
    assert pooled["layer2"].shape == (4, 32)
    vit = models.create("small_vit", img_size=28).eval()
    fv = models.features(vit, x, ["blocks.0", "pre_logits"], pool=True)
    assert fv["blocks.0"].shape == (4, 128) and fv["pre_logits"].shape == (4, 128)


def test_features_grad_flag_and_errors():
    m = models.create("small_resnet18")
    x = torch.rand(2, 3, 28, 28)
    assert models.features(m, x, ["layer1"], grad=True)["layer1"].requires_grad
    assert not models.features(m, x, ["layer1"])["layer1"].requires_grad
    with pytest.raises(ValueError, match="Probe-able layers: layer1"):
        models.features(m, x, ["layer9"])
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        models.features(m, torch.rand(3, 28, 28))
    with pytest.raises(TypeError, match="floating point"):
        models.features(m, torch.zeros(1, 3, 28, 28, dtype=torch.uint8))


@pytest.mark.slow
def test_local_weights_roundtrip_and_checkpoint_dicts(tmp_path):
    a = models.create("small_resnet18").eval()
    torch.save(a.state_dict(), tmp_path / "w.pt")
    torch.save({"model": a.state_dict(), "epoch": 3}, tmp_path / "ckpt.pt")
    x = torch.rand(2, 3, 28, 28)
    for file in ("w.pt", "ckpt.pt"):
        b = models.create("small_resnet18", pretrained=tmp_path / file).eval()
        assert torch.equal(a(x), b(x))
    # a hub architecture loads a local file too (the offline path for timm/torchvision weights)
    r = models.create("resnet18", num_classes=3)
    torch.save(r.state_dict(), tmp_path / "r.pt")
    r2 = models.create("resnet18", num_classes=3, pretrained=str(tmp_path / "r.pt"))
    assert all(torch.equal(p, q) for p, q in zip(r.state_dict().values(), r2.state_dict().values()))


def test_bad_weight_files_raise_clear_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        models.create("small_resnet18", pretrained=tmp_path / "missing.pt")
    (tmp_path / "bad.pt").write_bytes(b"\x00not a torch file" * 10)
    with pytest.raises(CheckpointError, match="corrupt"):
        models.create("small_resnet18", pretrained=tmp_path / "bad.pt")
    torch.save(models.create("small_vit").state_dict(), tmp_path / "vit.pt")
    with pytest.raises(CheckpointError, match="do not fit"):
        models.create("small_resnet18", pretrained=tmp_path / "vit.pt")


@pytest.mark.parametrize("offline_env", [True, False])
def test_pretrained_offline_fails_fast(monkeypatch, offline_env):
    if not offline_env:  # no env switch: the real (absent) network must still fail, after one short probe
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("INVLIB_OFFLINE", raising=False)
    probes, real = [], models.is_online

    def probe(host, *args, **kwargs):  # fail fast: one reachability probe with a short timeout, nothing downloaded
        probes.append(kwargs.get("timeout", args[1] if len(args) > 1 else None))
        return real(host, *args, **kwargs)

    def download(*args, **kwargs):
        raise AssertionError("tried to download weights while offline")

    monkeypatch.setattr(models, "is_online", probe)
    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", download)
    with pytest.raises(PretrainedUnavailableError, match="pretrained='path/to/weights.pth'"):
        models.create("resnet18", pretrained=True)
    assert len(probes) <= 1 and all(t is not None and t <= 3 for t in probes), probes
    with pytest.raises(PretrainedUnavailableError):
        models.create("tv/resnet18", pretrained=True)


def test_our_nets_have_no_hub_weights(monkeypatch):
    monkeypatch.setattr(models, "is_online", lambda *a, **k: True)
    with pytest.raises(PretrainedUnavailableError, match="invlib.zoo"):
        models.create("small_resnet18", pretrained=True)


def test_normalize_hook_takes_unit_range_images():
    m = models.create("resnet18", num_classes=2).eval()
    n = models.create("resnet18", num_classes=2, normalize=True).eval()
    n.load_state_dict(m.state_dict())
    x = torch.rand(2, 3, 32, 32)
    mean = torch.tensor(models.IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(models.IMAGENET_STD).view(1, 3, 1, 1)
    assert torch.allclose(n(x), m((x - mean) / std), atol=1e-5)


def test_signal_nets_sizes_and_first_kernel():
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    cnn = models.create("signal_cnn", num_classes=4, in_chans=1)  # AugNet's Table 2 trunk, 2 filters
    assert count(cnn) == 232 and cnn(torch.randn(3, 1, 1000)).shape == (3, 4)
    assert cnn.features[0].kernel_size == (100,)  # two periods of 2 Hz at 100 Hz, as the authors' code
    assert count(models.create("signal_cnn", num_classes=4, in_chans=1, first_kernel=3)) == 38  # Table 2 as printed
    mlp = models.create("signal_mlp", num_classes=4, in_chans=1, length=1000, width=2, depth=3)
    assert count(mlp) == 1000 * 2 + 2 + 2 * (2 * 2 + 2) + 2 * 4 + 4
    assert mlp(torch.randn(3, 1, 1000)).shape == (3, 4)


def test_create_with_a_seed_is_reproducible_and_leaves_the_global_rng_alone():
    torch.manual_seed(5)
    expected_next = torch.rand(3)
    torch.manual_seed(5)
    a = models.create("conv4", num_classes=4, in_chans=1, seed=7)
    assert torch.equal(torch.rand(3), expected_next)  # the caller's random stream is untouched
    torch.manual_seed(7)
    b = models.create("conv4", num_classes=4, in_chans=1)
    c = models.create("conv4", num_classes=4, in_chans=1, seed=8)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))


def test_small_vit_takes_a_side_its_patch_does_not_divide_and_is_unchanged_at_28_px():
    # the issue: a folder decoded at 64 px reached the 28 px zoo ViT (patch 7) and timm asserted
    # "Input height (64) should be divisible by patch size (7)"
    vit = models.create("small_vit", seed=0, img_size=28).eval()
    with torch.no_grad():
        for side in (64, 32, 28):
            assert vit(torch.rand(2, 3, side, side)).shape == (2, 10)
    # built for a side 7 divides, it is the net it was before: same initial weights, same logits
    plain = models.create("small_vit", seed=0, img_size=28, dynamic_img_pad=False).eval()
    assert all(torch.equal(p, q) for p, q in zip(vit.state_dict().values(), plain.state_dict().values()))
    x = torch.rand(4, 3, 28, 28)
    with torch.no_grad():
        assert torch.equal(vit(x), plain(x))


@pytest.mark.usefixtures("one_thread")
def test_logits_from_runs_the_rest_of_the_network_on_replaced_features():
    m = models.create("small_resnet18", seed=0).eval()
    x = torch.rand(3, 3, 28, 28, generator=torch.Generator().manual_seed(0))
    f = models.features(m, x, ["layer3", "layer4", "pre_logits"])
    with torch.inference_mode():
        logits = m(x)
        # the features of the images themselves: the model's own logits
        assert torch.allclose(models.logits_from(m, "pre_logits", f["pre_logits"]), logits, atol=1e-5)
        assert torch.allclose(models.logits_from(m, "layer4", f["layer4"], x), logits, atol=1e-5)
        assert torch.allclose(models.logits_from(m, "layer3", f["layer3"], x), logits, atol=1e-5)
        # replaced features: zero features give the classifier's bias alone, whatever the images
        zeros = models.logits_from(m, "layer4", torch.zeros_like(f["layer4"]), x)
        assert torch.allclose(zeros, m.fc.bias.expand(3, -1), atol=1e-6)
        assert torch.allclose(models.logits_from(m, "pre_logits", torch.zeros_like(f["pre_logits"])), zeros)
        # another image's layer-3 features: that image's logits
        swapped = models.logits_from(m, "layer3", f["layer3"].flip(0), x)
        assert torch.allclose(swapped, logits.flip(0), atol=1e-5)
        assert not torch.allclose(swapped, logits, atol=1e-3)
    # the hook is removed afterwards, and gradients flow to the features (fine-tuning)
    with torch.inference_mode():
        assert torch.allclose(m(x), logits)
    feats = f["pre_logits"].clone().requires_grad_(True)
    models.logits_from(m, "pre_logits", feats).sum().backward()
    assert feats.grad is not None and feats.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="Model has no layer 'nope'. Probe-able layers: layer1, layer2"):
        models.logits_from(m, "nope", f["layer4"], x)
    with pytest.raises(ValueError, match="pass images x"):
        models.logits_from(m, "layer4", f["layer4"])


def test_batched_converts_moves_and_concatenates_like_one_pass():
    m = models.create("small_resnet18", seed=0).eval()
    x = torch.randint(0, 256, (7, 3, 28, 28), dtype=torch.uint8)
    z = models.batched(m, x, batch_size=3)
    fast = models.for_inference(m)  # what batched() runs: the BatchNorms folded into the convolutions
    with torch.inference_mode():
        ref = torch.cat([fast((x[i:i + 3].float() / 255).contiguous(memory_format=torch.channels_last))
                         for i in range(0, 7, 3)])
        plain = m(x.float() / 255)
    assert z.dtype == torch.float32 and z.device.type == "cpu" and torch.equal(z, ref)
    assert torch.allclose(z, plain, atol=1e-5)
    assert not z.is_inference()  # callers may modify it in place
    assert torch.equal(models.batched(m, x.float() / 255, batch_size=3), z)
    assert models.batched(lambda b: m(b).argmax(1), x, 3).dtype == torch.int64  # class indices keep their dtype


def test_batched_layout_transform_devices_and_default_batch(monkeypatch):
    seen = []

    def fn(b):
        seen.append((len(b), b.is_contiguous(memory_format=torch.channels_last), b.is_contiguous()))
        return b.double().mean((1, 2, 3), keepdim=True)

    x = torch.rand(10, 3, 4, 4)
    assert models.batched(fn, x, 4).dtype == torch.float32  # float outputs become float32
    assert seen == [(4, True, False), (4, True, False), (2, True, False)]
    seen.clear()
    models.batched(fn, x.permute(0, 1, 3, 2), 4, channels_last=False)  # the layout left as it is
    assert [s[1:] for s in seen] == [(False, False)] * 3
    signals = torch.rand(5, 2, 9).transpose(1, 2)  # (N, C, T) has no channels_last: made contiguous
    assert models.batched(lambda b: torch.full((len(b),), float(b.is_contiguous())), signals, 2).tolist() == [1] * 5
    marks = models.batched(lambda b: b[:, 0, 0, 0], torch.zeros(5, 1, 2, 2), 2, transform=lambda b, k: b + k)
    assert marks.tolist() == [0, 0, 1, 1, 2]  # transform(x, batch index)
    sizes = []
    monkeypatch.setitem(models.EVAL_BATCH, "cpu", 3)
    models.batched(lambda b: sizes.append(len(b)) or b, torch.rand(7, 1, 2, 2))
    assert sizes == [3, 3, 1]
    stay = models.batched(lambda b: b, torch.rand(2, 1, 2, 2), out_device=None, transform_device="cpu")
    assert stay.device.type == "cpu"
    with pytest.raises(ValueError, match="at least one"):
        models.batched(lambda b: b, torch.rand(0, 1, 2, 2))


def test_batched_defaults_to_the_modules_device_and_runs_without_grad():
    m = nn.Linear(4, 2)
    out = models.batched(m, torch.rand(5, 4))
    assert out.shape == (5, 2) and not out.requires_grad


def test_weights_key_follows_parameters_buffers_and_names():
    a, b = models.create("small_resnet18", seed=0), models.create("small_resnet18", seed=0)
    assert models.weights_key(a) == models.weights_key(b)
    with torch.no_grad():
        next(b.parameters()).add_(1e-3)
    assert models.weights_key(a) != models.weights_key(b), "a parameter"
    c = models.create("small_resnet18", seed=0)
    bn = next(m for m in c.modules() if isinstance(m, nn.BatchNorm2d))
    bn.running_mean.add_(1.0)
    assert models.weights_key(a) != models.weights_key(c), "a buffer (BatchNorm statistics)"
    one, other = nn.Sequential(nn.Linear(2, 2)), nn.Sequential(nn.Identity(), nn.Linear(2, 2))
    other[1].load_state_dict(one[0].state_dict())
    assert models.weights_key(one) != models.weights_key(other), "the same weights under other names"


def _stride_2_twin(name: str, channels: int):
    """``name`` with a stride-2 stem against its stride-1 net: a 56 px canvas gives the plain net's 28 px maps, and
    only the stem's stride differs (the same parameters). Returns the two models."""
    s2, plain = models.create(f"{name}_s2", seed=0), models.create(name, seed=0)
    assert s2.stem[0].stride == (2, 2) and plain.stem[0].stride == (1, 1)
    assert [f["reduction"] for f in s2.feature_info] == [2, 4, 8, 16]
    with torch.no_grad():
        big, small = s2.forward_features(torch.rand(2, 3, 56, 56)), plain.forward_features(torch.rand(2, 3, 28, 28))
    assert big.shape == small.shape == (2, channels, 4, 4)
    assert [p.shape for p in s2.parameters()] == [p.shape for p in plain.parameters()]
    return s2, plain


def test_stride_2_stem_sees_a_56_px_canvas_at_the_28_px_maps_of_the_plain_net():
    _, plain = _stride_2_twin("small_resnet18", 128)
    # torchvision's stem (stride 2, then a stride-2 max-pool): a quarter of the side before the first stage
    s4 = models.create("small_resnet18_s4", seed=0)
    assert isinstance(s4.stem[-1], nn.MaxPool2d) and [f["reduction"] for f in s4.feature_info] == [4, 8, 16, 32]
    with torch.no_grad():
        assert s4.forward_features(torch.rand(2, 3, 56, 56)).shape == (2, 128, 2, 2)
    assert [p.shape for p in s4.parameters()] == [p.shape for p in plain.parameters()]


def test_vit_with_14_px_patches_sees_a_56_px_canvas_as_16_tokens():
    p14, p7 = models.create("small_vit_p14", seed=0), models.create("small_vit", seed=0)
    assert p14.patch_embed.proj.kernel_size == (14, 14) and p14.pretrained_cfg["architecture"] == "small_vit_p14"
    with torch.no_grad():
        big, small = p14.forward_features(torch.rand(2, 3, 56, 56)), p7.forward_features(torch.rand(2, 3, 28, 28))
    assert big.shape == small.shape
    with pytest.raises(models.PretrainedUnavailableError, match="'small_vit_p14'"):
        models.create("small_vit_p14", pretrained=True)


def test_resnet50_with_a_stride_2_stem_halves_the_side_of_every_stage():
    s2, _ = _stride_2_twin("small_resnet50", 512)
    with torch.no_grad():
        assert s2.forward_features(torch.rand(2, 3, 28, 28)).shape == (2, 512, 2, 2)
    assert s2.pretrained_cfg["architecture"] == "small_resnet50_s2" and "small_resnet50_s2" in models.OURS


@pytest.mark.parametrize("name,px", [("small_resnet18", 28), ("small_resnet18_s4", 56), ("small_resnet50_s2", 28),
                                     ("conv4", 32), ("signal_cnn", None)])
def test_for_inference_folds_every_conv_bn_pair_and_keeps_the_outputs(name, px):
    net = models.create(name, in_chans=1 if px is None else 3).eval()
    with torch.no_grad():  # BatchNorms with statistics of their own, so that folding is not the identity
        for m in net.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.running_mean.uniform_(-0.5, 0.5), m.running_var.uniform_(0.5, 2), m.weight.uniform_(0.5, 1.5)
    fast = models.for_inference(net)
    norms = lambda model: sum(isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) for m in model.modules())
    assert norms(net) > 0 and norms(fast) == 0
    assert [n for n, _ in fast.named_modules()] == [n for n, _ in net.named_modules()]
    x = torch.rand(6, 1, 1000) if px is None else torch.rand(6, 3, px, px)
    with torch.inference_mode():
        assert torch.allclose(fast(x), net(x), rtol=1e-4, atol=1e-4)
    assert torch.allclose(models.batched(net, x), models.batched(lambda b: net(b), x), rtol=1e-4, atol=1e-4)


def test_for_inference_keeps_hooked_convs_training_models_and_follows_new_weights():
    net = models.create("small_resnet18").eval()
    x = torch.rand(3, 3, 28, 28)
    kept = models.for_inference(net, keep=["stem.0"])
    assert isinstance(kept.stem[1], nn.BatchNorm2d) and isinstance(kept.layer1[0].body[1], nn.Identity)
    with torch.inference_mode():  # a hooked convolution's own output is what it was
        assert torch.allclose(models.features(net, x, ["stem.0"])["stem.0"], net.stem[0](x))
    assert models.for_inference(net.train()) is net
    net.eval()
    before = models.for_inference(net)
    assert models.for_inference(net) is before
    with torch.no_grad():
        net.fc.weight.add_(1.0)  # written in place: the copy is made anew
    after = models.for_inference(net)
    assert after is not before
    with torch.inference_mode():
        assert torch.allclose(after(x), net(x), atol=1e-5)

import copy
import re

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


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
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
    kept = models.for_inference(net, keep=["stem.0"])
    assert models.for_inference(net) is before and models.for_inference(net, keep=["stem.0"]) is kept, \
        "passes that alternate their kept layers reuse their copies (none is made anew per batch)"
    with torch.no_grad():
        net.fc.weight.add_(1.0)  # written in place: the copy is made anew
    after = models.for_inference(net)
    assert after is not before
    with torch.inference_mode():
        assert torch.allclose(after(x), net(x), atol=1e-5)


def test_a_model_marked_bf16_is_measured_under_bf16_autocast_and_returns_float32():
    net, plain = models.create("small_resnet18").eval(), models.create("small_resnet18").eval()
    models.mark_precision(net, "bf16")
    seen = {}
    fast = models.for_inference(net)
    fast.layer2.register_forward_hook(lambda _m, _a, y: seen.__setitem__("bf16", y.dtype))
    models.for_inference(plain).layer2.register_forward_hook(lambda _m, _a, y: seen.__setitem__("f32", y.dtype))
    x = torch.rand(4, 3, 28, 28)
    with torch.inference_mode():
        z, z32, zp = fast(x), net(x), models.for_inference(plain)(x)
    assert seen == {"bf16": torch.bfloat16, "f32": torch.float32}, "the layers ran in bf16 only for the marked one"
    assert z.dtype == torch.float32 and zp.dtype == torch.float32
    assert not torch.equal(z, z32) and torch.allclose(z, z32, rtol=0.05, atol=0.05), "bf16 rounding, no more"
    with torch.inference_mode():
        assert net.layer2(net.layer1(net.stem(x))).dtype == torch.float32, "the model itself stays float32"
    f = models.features(net, x, ["layer3", "pre_logits"])
    assert {k: v.dtype for k, v in f.items()} == {"layer3": torch.float32, "pre_logits": torch.float32}
    assert models.batched(net, x).dtype == torch.float32
    assert models.weights_key(net) != models.weights_key(models.mark_precision(copy.deepcopy(net), "float32"))
    assert models.precision(net.layer1) == "bf16", "a part of the model measures as the whole"
    with pytest.raises(ValueError, match="Valid precisions: bf16, float32"):
        models.mark_precision(net, "half")


# ----------------------------------------------------------------------------- stages, layers, input, weights
def _meta(name: str, **kwargs):
    """A model built on the meta device: its modules and names, no weights to initialise (a ViT in ~0.1 s)."""
    with torch.device("meta"):
        return models.create(name, **kwargs)


def test_stages_of_a_timm_resnet_and_the_books_nets_are_their_feature_info_blocks():
    r18 = models.create("resnet18", num_classes=10).eval()
    assert models.stages(r18) == ["layer1", "layer2", "layer3", "layer4", "pre_logits"]  # timm's act1 stem left out
    assert [r18.get_submodule(n).__class__.__name__ for n in models.stages(r18)[:-1]] == ["Sequential"] * 4
    s4 = models.create("small_resnet18_s4").eval()
    assert models.stages(s4) == ["layer1", "layer2", "layer3", "layer4", "pre_logits"]
    f = models.features(s4, torch.rand(2, 3, 56, 56), models.stages(s4))
    assert f["layer1"].shape == (2, 16, 14, 14) and f["layer4"].shape == (2, 128, 2, 2)
    assert models.stages(models.create("small_vit_p14_cls")) == ["blocks.0", "blocks.1", "blocks.2", "blocks.3",
                                                                  "pre_logits"]


def test_stages_of_a_vit_are_its_blocks_at_quarter_depths():
    vit = _meta("vit_tiny_patch16_224", num_classes=10)
    assert len(vit.blocks) == 12
    assert models.stages(vit) == ["blocks.2", "blocks.5", "blocks.8", "blocks.11", "pre_logits"]
    assert models.check_layers(vit, models.stages(vit)) == models.stages(vit)
    assert models._spread(list("abcdefgh")) == ["b", "d", "f", "h"] and models._spread(list("abc")) == list("abc")


class _Untraceable(nn.Module):
    """A model of one's own whose forward branches on the data (torch.fx cannot trace it) and has no head names."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(4, 4, 3), nn.ReLU())
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        x = self.a(x) if x.sum() >= 0 else -self.a(x)
        return self.out(self.b(x).mean((2, 3)))


def test_stages_without_feature_info_come_from_the_traced_graph():
    tv = models.create("tv/resnet18", num_classes=10)
    assert not hasattr(tv, "feature_info")
    assert models.stages(tv) == ["layer1", "layer2", "layer3", "layer4", "pre_logits"]
    assert models.stages(models.create("conv4")) == ["features.2", "features.6", "features.10", "features.14",
                                                     "pre_logits"]  # a flat level: one stage per conv group
    vit = _meta("tv/vit_b_16")  # one block entered twice: encoder, then encoder.layers; quarter depths of 12
    assert models.stages(vit)[0] == "encoder.layers.encoder_layer_2" and len(models.stages(vit)) == 5
    seq = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
    assert models.stages(seq) == ["2", "4", "pre_logits"]  # the pooling and flattening are pre_logits' own input
    own = _Untraceable().eval()
    assert models.stages(own) == ["a", "b", "pre_logits"]  # untraceable: registration order
    f = models.features(own, torch.rand(2, 3, 16, 16), models.stages(own))
    assert f["b"].shape == (2, 4, 12, 12) and f["pre_logits"].shape == (2, 4)


def test_check_layers_names_the_unknown_layer_and_lists_the_stages():
    net = models.create("resnet18", num_classes=10)
    assert models.check_layers(net, "layer3") == ["layer3"]
    assert models.check_layers(net, ["layer1.0.conv1", "pre_logits"]) == ["layer1.0.conv1", "pre_logits"]
    with pytest.raises(ValueError, match=r"ResNet has no layer 'layer5'\. Did you mean 'layer4'.*Its stages: "
                                         r"layer1, layer2, layer3, layer4, pre_logits"):
        models.check_layers(net, ["layer1", "layer5"])
    with pytest.raises(ValueError, match="no layer 'penultimate'"):
        models.check_layers(net, ["penultimate"])


def test_check_input_says_what_a_model_expects():
    assert models.check_input(models.create("small_resnet18", num_classes=7).eval(), 28) == 7
    grey = models.create("small_resnet18", in_chans=1).eval()
    assert models.check_input(grey, 28, channels=1) == 10
    with pytest.raises(ValueError, match=r"rejects a \(1, 3, 28, 28\) input\. It expects 1 input channels .*"
                                         r"expected input\[1, 3, 28, 28\] to have 1 channels"):
        models.check_input(grey, 28)
    vit = models.create("small_vit", num_classes=3, img_size=28).eval()
    assert models.check_input(vit, 30) == 3  # the book's ViTs take any side
    vit.patch_embed.strict_img_size, vit.dynamic_img_size = True, False  # as timm's ImageNet ViTs are
    with pytest.raises(ValueError, match=r"a fixed image size \(28, 28\).*doesn't match model"):
        models.check_input(vit, 56)

    class Pair(nn.Module):
        def forward(self, x):
            return {"logits": x.mean((2, 3))}

    with pytest.raises(ValueError, match=r"gives dict for a \(1, 3, 8, 8\) input.*\(1, K\) tensor"):
        models.check_input(Pair(), 8)


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_weights_that_do_not_fit_name_missing_unexpected_keys_and_shapes(tmp_path):
    torch.save(models.create("resnet18", num_classes=1000).state_dict(), tmp_path / "r18.pt")
    with pytest.raises(CheckpointError) as err:  # another architecture: resnet34 has more blocks
        models.create("resnet34", num_classes=1000, pretrained=tmp_path / "r18.pt")
    assert re.search(r"do not fit this ResNet: 96 missing keys \(in the model, not in the file\): layer1\.2\.conv1"
                     r"\.weight, .* and 92 more\.", str(err.value)), err.value
    with pytest.raises(CheckpointError) as err:  # another family: every name differs
        models.create("small_resnet18", num_classes=1000, pretrained=tmp_path / "r18.pt")
    msg = str(err.value)
    assert "120 missing keys" in msg and "120 unexpected keys (in the file, not in the model): conv1.weight" in msg
    assert "1 shape mismatch: fc.weight file (1000, 512) vs model (1000, 128)" in msg and "another architecture" in msg
    torch.save({"state_dict": models.create("resnet18", num_classes=5).state_dict()}, tmp_path / "r18_5.pt")
    with pytest.raises(CheckpointError, match=r"2 shape mismatches: fc\.weight file \(5, 512\) vs model \(1000, 512\)"
                                              r".*Only the classifier differs.*num_classes=5"):
        models.create("resnet18", num_classes=1000, pretrained=tmp_path / "r18_5.pt")
    state = models.read_weights(tmp_path / "r18_5.pt")  # the checkpoint's entry, unwrapped
    assert models.head_outputs("resnet18", state) == 5
    assert models.head_outputs("resnet18", {k: v for k, v in state.items() if not k.startswith("fc.")}) == 0
    assert models.head_outputs("resnet18", {"x": torch.zeros(1)}) == 1000  # cannot tell: the default
    assert models.head_outputs("tv/resnet18", models.create("tv/resnet18", num_classes=7).state_dict()) == 7
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(CheckpointError, match="holds a list, not a state dict"):
        models.read_weights(tmp_path / "list.pt")


def test_check_name_lists_close_names_from_timm_torchvision_and_the_book():
    assert models.check_name("resnet18.a1_in1k") == "resnet18.a1_in1k"  # a timm name with its weights tag
    with pytest.raises(ValueError, match="Close matches: resnet18,") as err:
        models.check_name("resnet81")
    assert "small_resnet18" in str(err.value)  # our nets are listed
    with pytest.raises(ValueError) as err:
        models.check_name("small_resnt18")
    close = str(err.value).split("Close matches: ")[1]
    assert close.startswith("small_resnet18") and close.count("small_resnet18,") == 1  # each name once
    with pytest.raises(ValueError, match=r"Unknown torchvision model 'resnext50'\. Valid: .*resnext50_32x4d"):
        models.check_name("tv/resnext50")

"""invlib.papers.e.experiments: the settings of paper E's experiments per profile, the data (capped, own
folders), the models' shared starting weights, the oracle shift, and the chapters E1-E4 of the smoke book."""

import functools
import math

import pytest
import torch

from invlib import data, results
from invlib.learned import max_rotation
from invlib.papers.e import experiments as E
from invlib.papers.e import experiments_reports as R


# ----------------------------------------------------------------------------- settings
def test_settings_profile_tables_and_overrides():
    paper, cpu, smoke = (E.settings(p, experiment="sprites") for p in ("paper", "cpu", "smoke"))
    assert (paper.n_train, paper.size, paper.widths, paper.aug_lr) == (10_000, 32, (32, 64, 128, 256), None)
    assert (paper.weight_decay, paper.weight_decay_on, paper.init_logit, paper.translate_scale, paper.color) == (
        1.0, "all", 1.0, 0.45, True)  # the authors' code where the paper is silent
    assert (cpu.size, cpu.widths, cpu.lr, cpu.profile) == (32, (8, 16, 32, 64), 5e-4, "cpu")  # only its table
    assert smoke.extra_seeds == () and cpu.extra_seeds == (1, 2, 3) and paper.extra_seeds == (1, 2, 3, 4, 5)
    sprites, images = (functools.partial(E.settings, experiment=e) for e in ("sprites", "images"))
    assert sprites("cpu", epochs=None, widths=[4, 8]).widths == (4, 8)  # None keeps, lists -> tuples
    assert sprites("cpu", extra_seeds=[]).extra_seeds == ()  # an empty list is a value, not None
    assert images("gpu").epochs == 30 and images("gpu").dataset == "cifar10"
    assert images("cpu", dataset=None).dataset == "fashion_mnist"
    assert images("smoke", dataset="folder", root="/data/x").root == "/data/x"
    assert E.settings(experiment="capacity").profile == "cpu"  # the profile comes first, cpu by default
    assert E.settings("cpu", experiment="capacity").depths == (1, 2)
    # the claims about what training does rest on the protocol's n_min of 3 seeds at cpu; smoke keeps one
    cap = {p: E.settings(p, experiment="capacity") for p in ("smoke", "cpu", "paper")}
    assert (cap["smoke"].seeds, cap["cpu"].seeds, cap["paper"].seeds) == ((0,), tuple(range(6)), (0,))
    assert (smoke.ablation_seeds, cpu.ablation_seeds, paper.ablation_seeds) == ((), (), ())
    sin = {p: E.settings(p, experiment="sinusoids") for p in ("smoke", "cpu", "paper")}
    assert sin["smoke"].seeds == (0,) and sin["cpu"].seeds == (0, 1, 2, 3) and sin["paper"].seeds == tuple(range(6))
    # the runs beyond the paper are cheaper at cpu (benchmarks/measurements/e.md says why); the paper's runs are not
    assert (cpu.epochs, cpu.range_epochs, cpu.shear_ablation, paper.range_epochs, paper.shear_ablation) == (
        12, 9, False, None, True)
    assert (sin["cpu"].epochs, sin["cpu"].alone_epochs, sin["paper"].alone_epochs) == (50, 30, None)


def test_cpu_seed_counts_keep_the_selection_claims_decidable():
    """E1's and E2's selection claims are a share over seeds: at cpu a unanimous outcome must still decide them
    (it would not at 3 seeds), as at the 6 seeds the counts were cut from (benchmarks/measurements/e.md)."""
    from invlib.papers.e.protocol import PROTOCOL
    from invlib.protocol import decide

    counts = {"fig3/augnet_selects_rotate": 1 + len(E.settings("cpu", experiment="sprites").extra_seeds),
              "fig5/frequency_shift_selected": len(E.settings("cpu", experiment="sinusoids").seeds)}
    for cid, n in counts.items():
        claim = PROTOCOL[cid].part("on most seeds") if PROTOCOL[cid].gate else PROTOCOL[cid]  # E1's, once its
        # premise is met
        assert n >= 4, cid
        assert decide(claim, R.selection_share([False] * n)).verdict == "not reproduced", cid
        assert decide(claim, R.selection_share([True] * n)).verdict == "reproduced", cid
        assert decide(claim, R.selection_share([False] * 3)).verdict == "inconclusive at this budget"


def test_settings_errors_name_the_fix():
    with pytest.raises(ValueError, match="Did you mean 'epochs'"):
        E.settings("cpu", experiment="sprites", epoch=3)
    with pytest.raises(TypeError, match="n_train.*int"):
        E.settings("cpu", experiment="images", n_train="lots")
    with pytest.raises(ValueError, match="experiment.*capacity, images, sinusoids, sprites"):
        E.settings("cpu", experiment="mario")
    with pytest.raises(ValueError, match="experiment None.*capacity, images, sinusoids, sprites"):
        E.settings("cpu")  # the experiment is named, never guessed
    with pytest.raises(TypeError):
        E.settings("sprites", "cpu")  # the profile is the only positional argument
    with pytest.raises(ValueError, match="profile"):
        E.settings("laptop", experiment="sprites")
    with pytest.raises(ValueError, match="all, augmentation"):
        E.settings("cpu", experiment="sprites", weight_decay_on="trunk")
    with pytest.raises(ValueError, match="degrees, in \\(0, 90\\)"):
        E.settings("cpu", experiment="sprites", max_angle=3.14 * 40)


# ----------------------------------------------------------------------------- models
def trunk_weights(net):
    return [p.detach().clone() for p in getattr(net, "trunk", net).parameters()]


def test_sprite_models_share_their_seed_trunk_whatever_the_order_and_keep_the_rng():
    specs = E.sprite_models(E.settings("smoke", experiment="sprites", extra_seeds=[1], shear_ablation=True))
    rng = torch.random.get_rng_state()
    first = {name: trunk_weights(make()) for name, (make, _) in reversed(specs.items())}
    assert torch.equal(rng, torch.random.get_rng_state())  # the caller's random state is untouched
    again = trunk_weights(specs["AugNet"][0]())
    for name in ("Augerino", "AugNet, no regulariser", "AugNet, no shear ops"):
        assert all(torch.equal(a, b) for a, b in zip(first[name], again)), name
    assert not torch.equal(first["AugNet, seed 1"][0], again[0])  # another seed, other weights
    assert specs["AugNet, seed 1"][1].seed == 1 and specs["AugNet"][1].seed == 0


def test_image_models_share_one_trunk():
    specs = E.image_models(E.settings("smoke", experiment="images"), in_chans=1, num_classes=10)
    weights = [trunk_weights(make()) for make, _, _ in specs.values()]
    assert all(all(torch.equal(a, b) for a, b in zip(w, weights[0])) for w in weights)
    layers = [len(make().augment.layers) for name, (make, _, _) in specs.items() if name.startswith("AugNet")]
    assert layers == [1, 2, 3]


# ----------------------------------------------------------------------------- data
def test_rows_keeps_images_and_labels_aligned():
    ds = data.load("sinusoids", "test", n=12)
    part = E.rows(ds, torch.tensor([5, 2]))
    assert torch.equal(part.images, ds.images[[5, 2]]) and torch.equal(part.labels, ds.labels[[5, 2]])
    assert part.classes == ds.classes and len(ds) == 12  # the source is not changed


def write_folder(root, per_class=10, classes=("a", "b", "c"), split=None):
    from PIL import Image

    g = torch.Generator().manual_seed(0)
    for k, c in enumerate(classes):
        folder = root / (split or "") / c
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            img = (torch.rand(20, 20, generator=g) * 80 + 60 * k).to(torch.uint8).numpy()
            Image.fromarray(img).save(folder / f"{i}.png")  # greyscale PNGs
    return root


def test_image_data_caps_sizes_and_holds_out_a_test_fifth_of_a_single_folder(tmp_path, capsys):
    root = write_folder(tmp_path)
    S = E.settings("smoke", experiment="images", dataset="folder", root=str(root), size=16)  # asks for 1500 + 500
    train, val, test = E.image_data(S)
    out = capsys.readouterr().out
    assert "30 images, fewer than the 2000 asked for" in out and "6 of its 30 images are the test set" in out
    assert (len(train), len(val), len(test)) == (20, 4, 6)
    assert train.images.shape[1:] == (3, 16, 16)
    every = torch.cat([train.images, val.images, test.images]).flatten(1)
    assert len(torch.unique(every, dim=0)) == 30  # no image in two splits


def test_image_data_uses_a_folders_own_test_split(tmp_path, capsys):
    write_folder(tmp_path, per_class=8, split="train")
    write_folder(tmp_path, per_class=3, split="test")
    S = E.settings("smoke", experiment="images", dataset="folder", root=str(tmp_path), size=16, n_train=20, n_test=100)
    train, val, test = E.image_data(S)
    assert (len(train), len(val), len(test)) == (16, 4, 9)
    assert "no test split" not in capsys.readouterr().out


# ----------------------------------------------------------------------------- the oracle shift
def test_true_shift_moves_the_frequency_by_at_most_half_a_hertz():
    t = torch.arange(1000) / E.FS
    x = torch.sin(2 * math.pi * 4.0 * t).repeat(64, 1, 1)
    y = E.true_shift(x, torch.Generator().manual_seed(0))
    spectrum = torch.fft.rfft(y[:, 0], n=16_000).abs()  # 100 Hz / 16000 = 0.00625 Hz per bin
    peak = spectrum.argmax(1) * E.FS / 16_000
    assert (peak - 4.0).abs().max() <= 0.5 + 0.01
    assert (peak - 4.0).min() < -0.4 and (peak - 4.0).max() > 0.4  # both directions, most of the range
    assert torch.equal(y, E.true_shift(x, torch.Generator().manual_seed(0)))  # the generator fixes the draws


# ----------------------------------------------------------------------------- training, end to end
@pytest.mark.slow
def test_image_chapter_runs_on_an_own_folder_of_greyscale_pngs(tmp_path, capsys):
    S = E.settings("smoke", experiment="images", dataset="folder", root=str(write_folder(tmp_path)), size=16,
                   epochs=2, batch_size=8)
    hist = E.train_image_models(S, *E.image_data(S))
    assert len(hist) == 6 and all(len(h) == 2 and 0 <= h[-1]["test_at_best_val"] <= 1 for h in hist.values())
    run = results.Run("demo_e4", "smoke")
    table, facts = R.report_images(run, S, hist)
    assert {c["verdict"] for c in run.claims.values()} == {"not measurable at this profile"}  # not CIFAR-10
    learned = R.learned_table(hist)
    assert learned.groupby("model").size().to_dict() == {"Augerino": 6, "AugNet, 1 layer": 1, "AugNet, 2 layers": 2,
                                                         "AugNet, 3 layers": 3}
    assert set(learned.loc[learned["model"] == "Augerino", "unit"]) >= {"radians", "fraction of width"}


# ----------------------------------------------------------------------------- the E chapters of the smoke book
def test_e_chapters_log_their_metrics_and_claims(smoke_book):
    """The E chapters of the smoke book (run once per session by the book runner) log the learned
    augmentations per epoch in radians, and record the paper's claims with the evidence of their numbers: at smoke's
    one seed, claims about training are inconclusive at this budget."""
    e1 = results.load("e1_learning_the_right_invariance", "smoke")
    m = e1["metrics"]
    epochs = e1["params"]["epochs"]
    for key in ("augnet", "augerino", "augnet/no_regulariser", "augnet/augerinos_regulariser"):
        curve = m[f"{key}/rotation_by_epoch"]
        assert len(curve) == epochs and all(0 <= a <= math.pi + 1e-6 for a in curve)
    assert m["augerino/final_state"]["layer0"]["rotate"]["max_value"] == pytest.approx(
        m["augerino/final_state"]["layer0"]["rotate"]["magnitude"] / 2)  # radians, theta / 2
    claims = {c["id"]: c for c in e1["claims"]}
    assert claims["fig3/same_as_authors"]["verdict"] == "not measurable at this profile"  # their code: not at smoke
    # smoke trains AugNet on one seed and each ablation once: claims about training need three seeds, whatever the
    # numbers, and each one's evidence carries this run's number; smoke's few steps cannot carry AugNet's range to
    # the paper's value either, so the claims on it also lack their premise
    for cid in ("fig3/augnet_selects_rotate", "fig3/augerino_rotation", "fig3/no_regulariser_collapses",
                "fig4/augerino_regulariser_misses"):
        ev = claims[cid]["evidence"]
        ev = ev["parts"].get("on most seeds", ev["parts"].get("shrinks")) if ev.get("parts") else ev
        assert claims[cid]["verdict"] == "inconclusive at this budget", claims[cid]
        assert (ev["unit"], ev["n"], ev["n_min"]) == ("seed", 1, 3) and ev["n_needed_why"] or ev["n_needed"] is None
    for cid in ("fig3/augnet_selects_rotate", "fig3/no_regulariser_collapses", "fig4/augerino_regulariser_misses"):
        assert claims[cid]["evidence"]["n_needed_why"].startswith("premise not met"), cid
    assert claims["fig3/no_regulariser_collapses"]["evidence"]["parts"]["shrinks"]["estimate"] == pytest.approx(
        m["augnet/no_regulariser/rotation_rad"])
    assert claims["fig3/augerino_rotation"]["evidence"]["estimate"] == pytest.approx(m["augerino/rotation_rad"])
    assert claims["fig3/augnet_selects_rotate"]["evidence"]["parts"]["on most seeds"]["estimate"] == float(
        m["augnet_criterion_met"])

    e2 = results.load("e2_beyond_vision", "smoke")
    assert len(e2["metrics"]["alone/seed0/shift_hz_by_epoch"]) == e2["params"]["epochs"]
    claim = e2["claims"][0]
    assert claim["verdict"] == "inconclusive at this budget" and claim["evidence"]["n"] == 1
    assert e2["metrics"]["criterion_met"] is False  # logged as "reproduced", which one seed cannot be

    e3 = results.load("e3_capacity", "smoke")
    claims = {c["id"]: c for c in e3["claims"]}
    medians = [v for k, v in e3["metrics"].items() if k.startswith("augnet/d") and k.endswith("invariance_median")]
    parts = claims["fig6/augnet_invariance_any_capacity"]["evidence"]["parts"]
    assert sorted(p["estimate"] for p in parts.values()) == pytest.approx(sorted(medians)) and len(medians) == 2
    assert {c["verdict"] for c in claims.values()} == {"inconclusive at this budget"}  # one model per trunk

    e4 = results.load("e4_image_recognition", "smoke")
    assert e4["params"]["dataset"] == "fashion_mnist"
    assert {c["verdict"] for c in e4["claims"]} == {"not measurable at this profile"}
    assert len(e4["metrics"]["augnet/3_layers/final_state"]) == 3
    rotate = e4["metrics"]["augnet/1_layer/final_state"]["layer0"]["rotate"]
    assert rotate["max_value"] == pytest.approx(rotate["magnitude"] * math.pi)  # radians, not degrees


@pytest.mark.slow
def test_the_learned_angle_follows_the_datas_range_when_rotate_alone_is_offered(capsys):
    """Rotate alone, from 45 degrees: on sprites within 15 degrees the largest label-preserving rotation is 75,
    on sprites within 60 it is 30, so the angle learned on the narrower data ends larger, and the one learned on
    the wider data ends below where it started. A layer stuck at its start fails both.

    The margins are what the mechanism guarantees on any CPU, not a threshold read off one: float paths differ
    between CPUs (AVX2, AVX-512) and thread counts, and eight epochs amplify them (seed 0 learned 0.711 rad for
    15 degrees on an AVX-512 Xeon and 0.805 on an AVX2 EPYC). So the test compares the two ranges on three seeds
    and asks a majority: measured gaps 0.06 (Xeon, seed 0) and 0.16, 0.41, 0.35 (EPYC, seeds 0-2)."""
    start, wins, below = 0.25 * math.pi, 0, 0
    for seed in range(3):
        S = E.settings("smoke", experiment="sprites", n_train=1024, epochs=8, batch_size=64, lr=3e-3,
                       range_aug_lr=2e-2, init_magnitude=0.25, max_angle=15.0, other_angle=60.0, seed=seed)
        got = {a: max_rotation(h[-1]["state"]) for a, h in E.train_angle_ranges(S).items()}
        wins += got[15.0] > got[60.0]
        below += got[60.0] < start - 0.05
    assert wins >= 2 and below >= 2, f"narrower range larger in {wins} of 3 seeds, wider range shrank in {below}"
    assert "data within 15 degrees" in capsys.readouterr().out

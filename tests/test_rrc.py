"""invlib.papers.b.rrc: paper B part 2's settings and family specs, Table 1a/1b, App. B, D.1 and F computed from known
predictions, the claims' verdicts, and one tiny end-to-end run of the family and of Augerino."""

import math

import numpy as np
import pandas as pd
import pytest

from invlib import crops, results, zoo
from invlib.papers.b import rrc as R
from invlib.papers.b import rrc_reports as RR

K = 4  # classes of the synthetic evaluations


def _eval(acc: dict, n: int = 400, seed: int = 0, train: float = 100.0) -> R.Evaluation:
    """Predictions with a known accuracy per (method, seed): the first ``round(a n)`` samples right, the rest
    wrong (the same samples for every model, so the helped lists are predictable); every model's last-epoch
    training accuracy is ``train``."""
    labels = np.arange(n) % K
    preds = {}
    for m, accs in acc.items():
        rows = []
        for a in accs:
            p = (labels + 1) % K
            right = int(round(a / 100 * n))
            p[:right] = labels[:right]
            rows.append(p)
        preds[m] = np.stack(rows)
    return R.Evaluation(labels, [f"c{k}" for k in range(K)], None, preds,
                        {m: np.full(len(v), float(train)) for m, v in acc.items()})


def test_settings_specs_and_bad_inputs():
    S = R.settings("cpu")
    assert (S.dataset, S.arch, S.size, S.seeds, len(S.methods)) == ("scenes", "small_resnet18_s4", 56, 2, 7)
    assert R.spec(S, "rrc").img_size == 64 and (S.n_train, S.epochs) == (2000, 14)
    # -p dataset=fashion_mnist_color brings back the 28 px models and their regime; an explicit value still wins
    F = R.settings("cpu", dataset="fashion_mnist_color")
    assert (F.arch, F.size, F.n_train, F.epochs, F.seeds) == ("small_resnet18", 28, 5000, 3, 3)
    assert R.settings("cpu", dataset="fashion_mnist_color", seeds=1, size=32).seeds == 1
    assert R.settings("cpu", dataset="fashion_mnist_color", size=32).size == 32
    P = R.settings("paper")
    assert (P.arch, P.epochs, P.lr, P.weight_decay, P.schedule) == ("tv/resnet18", 150, 0.01, 1e-3, "step")
    s = R.spec(P, "rrc", seed=2)
    assert s.train_config().schedule == "step" and s.train_config().step_size == 30 and s.img_size == 256
    # the Beta shape 1 is RRC itself: the same checkpoint as B1's RRC model
    assert zoo.path(R.beta_family(S)[1.0][0]) == zoo.path(R.family(S)["rrc"][0])
    assert zoo.path(R.spec(S, "rrc", 0, 0.5)) != zoo.path(R.spec(S, "rrc", 0))
    assert "translate" not in dict(R.spec(S, "rrc").augment_params)
    # a spec at the zoo's default schedule keeps the key it had before the schedule field existed
    assert "schedule" not in zoo.Spec().key() and zoo.Spec(schedule="step").key()["schedule"] == "step"
    with pytest.raises(ValueError, match="Valid crop methods"):
        R.settings("cpu", methods=("rrc", "zoom"))
    with pytest.raises(ValueError, match="beta_shape must be > 0"):
        R.settings("cpu", beta_shapes=(0.0, 1.0))
    with pytest.raises(ValueError, match=r"at most 100 %"):
        R.settings("cpu", translate=1.5)
    with pytest.raises(ValueError, match="zooms >= 1"):
        R.settings("cpu", zooms=(0.5, 1.0))


def test_the_chapters_recipe_parameters_reach_every_spec_and_unknown_names_list_the_valid_ones():
    S = R.settings("smoke", n_train=500, epochs=2, arch="small_resnet50", device="cuda", executor="slurm")
    assert isinstance(S, zoo.Recipe)
    for s in [*sum(R.family(S).values(), []), *sum(R.beta_family(S).values(), [])]:
        assert (s.n_train, s.epochs, s.arch, s.device, s.lr, s.schedule) == (500, 2, "small_resnet50", "cuda", 0.1,
                                                                           "cosine")
        assert s == S.spec(s.augment, dict(s.augment_params), s.seed, n_test=500,
                           img_size=crops.stored_size(S.size)), "one spec maker"
    with pytest.raises(ValueError, match=r"Unknown Settings field 'n_trian'. Did you mean 'n_train'\? .*epochs"):
        R.settings("smoke", n_trian=500)
    with pytest.raises(ValueError, match="Valid executors: local, none, slurm"):
        R.settings("smoke", executor="slrum")
    with pytest.raises(TypeError, match="'epochs' must be int"):
        R.settings("smoke", epochs="two")


def test_predict_crops_on_the_cpu_batch_by_batch_and_is_seeded():
    import torch

    from invlib import models

    net = models.create("small_resnet18", seed=0).eval()
    x = torch.randint(0, 256, (7, 3, 36, 36), dtype=torch.uint8)
    extra = crops.Crop("random_size_center_crop", 28, (0.5, 1.0), (1.0, 1.0))
    got = R.predict(net, x, 28, extra, seed=3, batch=3)
    center, gen, ref = crops.Crop(R.NONE, size=28), torch.Generator().manual_seed(3), []
    with torch.inference_mode():  # the loop predict() ran before models.batched
        for i in range(0, 7, 3):
            b = extra(center(x[i:i + 3].float() / 255), gen)
            ref.append(net(b.contiguous(memory_format=torch.channels_last)).argmax(1))
    assert got.dtype == torch.int64 and torch.equal(got, torch.cat(ref))
    assert torch.equal(R.predict(net, x, 28, extra, seed=3, batch=3), got)


def test_plot_methods_shows_each_method_with_its_boxes():
    import types

    import matplotlib
    import torch

    matplotlib.use("Agg")
    S = R.settings("smoke")
    ds = types.SimpleNamespace(images=torch.randint(0, 256, (1, 3, 40, 40), dtype=torch.uint8))
    fig = RR.plot_methods(ds, S, n=3)
    assert len(fig.axes) == 4 * len(S.methods)
    assert [len(ax.patches) for ax in fig.axes[:4]] == [3, 0, 0, 0]  # the boxes on the stored image only
    assert fig.axes[0].get_ylabel() == R.NAMES[S.methods[0]].replace(" + ", "\n+ ")
    assert fig.axes[1].images[0].get_array().shape[:2] == (S.size, S.size)

def test_table_1a_iou_and_hurt_classes_from_known_predictions():
    ev = _eval({R.NONE: [60, 62], "rrc": [70, 72], "translate": [69, 69],
                "translate_random_size_center_crop": [70, 70], "fixed_size_random_crop": [65, 65]})
    t = RR.table_1a(ev)
    assert t.loc["RandomResizedCrop", "top1"] == 71 and t.loc["RandomResizedCrop", "gain"] == 10
    assert t.loc["FixedSizeCenterCrop", "paper"] == 63.5 and t.loc["T.(p%)", "paper"] == "not in the text"
    iou = R.helped_iou(ev)
    # T.(30%)'s four lists: samples 240..275 (over the none seed 0, twice) and 248..275 (over seed 1, twice);
    # of the six pairs, two are identical and four overlap 28/36
    assert iou.loc["T.(p%)", "T.(p%)"] == round((2 + 4 * 28 / 36) / 6, 3)
    assert iou.loc["T.(p%)", "FixedSizeRandomCrop"] < iou.loc["T.(p%)", "T.(p%)"]
    # per class: one class of the RRC models loses every comparison
    ev.preds["rrc"][:, ev.labels == 3] = 0
    hurt = R.hurt_classes(ev, R.settings("smoke"))
    assert hurt.index[0] == "c3" and hurt.hurt.iloc[0] == 100 and hurt.consistently.iloc[0] == "hurt"
    assert hurt.index.name == "class (4 comparisons)" and (hurt.consistently == "hurt").sum() == 1


def test_b1_claims_follow_the_numbers():
    S = R.settings("smoke")
    paper_like = {R.NONE: [60, 61], "rrc": [70, 71], "random_size_center_crop": [64, 65],
                  "fixed_size_random_crop": [65, 66], "translate": [68, 69], "translate_random_size_center_crop":
                  [69, 70], "translate_random_size_center_crop_no_ar": [69, 69]}
    curve = pd.DataFrame(dict(method=["RandomResizedCrop"] * 3 + ["FixedSizeCenterCrop"] * 3,
                              zoom=[1.0, 2.0, 3.5] * 2, top1=[70, 68, 60, 60, 50, 40], sem=[0.1] * 6))
    verdicts = {}
    cases = (("paper", paper_like, 100), ("no gain", {**paper_like, "rrc": [60, 61]}, 100),
             ("no overfitting", paper_like, 63))  # no augmentation: 63 % train vs 60.5 % test
    for name, acc, train in cases:
        run = results.Run("demo", "smoke")
        ev = _eval(acc, train=train)
        RR.record_b1_claims(run, S, ev, R.helped_iou(ev), R.hurt_classes(ev, S), curve)
        verdicts[name] = {c: v["verdict"] for c, v in run.claims.items()}
    assert verdicts["paper"]["table1a/translation_recovers_rrc"] == "reproduced"
    assert verdicts["paper"]["table1a/scale_alone_less"] == "reproduced"
    assert verdicts["paper"]["table1a/neither_part_matches_rrc"] == "reproduced"
    assert verdicts["paper"]["figA7/rrc_partly_invariant_to_zoom"] == "reproduced"
    assert verdicts["no gain"]["table1a/translation_recovers_rrc"] == "not measurable at this profile"
    assert verdicts["no gain"]["table1a/neither_part_matches_rrc"] == "not reproduced"
    assert verdicts["no gain"]["tableA2/classes_consistently_hurt"] == "not measurable at this profile"
    # a crop can only pay where the model without it overfits: below OVERFIT_GAP the crop claims are not measured
    assert _eval(paper_like, train=63).overfit_gap() == pytest.approx(2.5)
    for claim in ("translation_recovers_rrc", "scale_alone_less", "neither_part_matches_rrc"):
        assert verdicts["no overfitting"][f"table1a/{claim}"] == "not measurable at this profile"
    assert verdicts["no overfitting"]["figA7/rrc_partly_invariant_to_zoom"] == "reproduced"
    t1a = RR.table_1a(_eval(paper_like, train=63))
    assert t1a.loc["FixedSizeCenterCrop", "train"] == 63 and t1a.loc["FixedSizeCenterCrop", "top1"] == 60.5
    # the figures draw from the same tables
    import matplotlib.pyplot as plt

    ev = _eval(paper_like)
    for ax in (RR.plot_table_1a(RR.table_1a(ev)), RR.plot_iou(R.helped_iou(ev)), RR.plot_zoom(curve)):
        assert ax.has_data() or ax.images
    ticks = RR.plot_table_1a(RR.table_1a(ev)).collections[-1].get_offsets()  # the paper's stated values
    assert sorted(np.asarray(ticks)[:, 0][~np.isnan(np.asarray(ticks)[:, 0])].tolist()) == [63.5, 67.9, 67.9]
    plt.close("all")


def test_table_a1_and_b2_claims():
    S = R.settings("cpu")
    beta = R.beta_table(S, n=4_000_000)
    assert list(beta.index) == [0.1, 0.5, 1.0, 2.0, 3.0, 10.0]
    assert beta.size_ratio.is_monotonic_increasing and beta.mean_s.is_monotonic_decreasing
    assert abs(beta.var_inv_s[1.0] - 4.9625) < 0.03  # the uniform's exact value: 12.5 - (ln 12.5 / 0.92)^2
    run = results.Run("demo", "smoke")
    t1b = pd.DataFrame(dict(top1=[65.0, 68.0, 70.0, 69.0, 67.0, 66.0], sem=0.1), index=beta.index)
    RR.record_b2_claims(run, beta, t1b)
    v = {c: r["verdict"] for c, r in run.claims.items()}
    assert v["table1b/uniform_best"] == "reproduced" and v["table1b/too_small_shape_hurts"] == "reproduced"
    assert v["sec2.2/smaller_shape_less_discrepancy"] == "reproduced"
    run = results.Run("demo", "smoke")
    RR.record_b2_claims(run, beta, t1b.assign(top1=[71.0, 68.0, 70.0, 72.0, 67.0, 66.0]))
    assert run.claims["table1b/uniform_best"]["verdict"] == "partly"
    assert run.claims["table1b/too_small_shape_hurts"]["verdict"] == "partly"
    import matplotlib.pyplot as plt

    assert RR.plot_table_1b(t1b.join(beta[["var_inv_s"]])).has_data() and RR.plot_beta_shapes(S).has_data()
    plt.close("all")


def test_wordnet_check_of_the_hurt_classes():
    hurt = pd.DataFrame({"consistently": ["hurt", "hurt", "helped", ""]}, index=["dog", "cat", "car", "tree"])
    rep = R.hurt_wordnet(hurt, list(hurt.index), ["dog.n.01", "cat.n.01", "car.n.01", "tree.n.01"])
    rep["rrc_gain"] = 1.5  # RRC helps overall (hurt_report measures it)
    assert rep["n_hurt"] == 2 and rep["among"] > rep["with_rest"] and rep["hurt"] == ["dog", "cat"]
    run = results.Run("demo", "smoke")
    RR.record_d1_wordnet_claim(run, rep)
    assert run.claims["appD1/hurt_classes_unrelated"]["verdict"] == "not reproduced"  # dog and cat are related
    one = R.hurt_wordnet(hurt.assign(consistently=["hurt", "", "", ""]), list(hurt.index),
                         ["dog.n.01", "cat.n.01", "car.n.01", "tree.n.01"])
    run = results.Run("demo", "smoke")
    RR.record_d1_wordnet_claim(run, dict(one, rrc_gain=1.5))
    assert run.claims["appD1/hurt_classes_unrelated"]["verdict"] == "not measurable at this profile"
    run = results.Run("demo", "smoke")
    RR.record_d1_wordnet_claim(run, dict(rep, rrc_gain=-2.0))  # RRC hurts overall: "hurt" means most classes
    assert run.claims["appD1/hurt_classes_unrelated"]["verdict"] == "not measurable at this profile"
    blind = R.hurt_wordnet(hurt, list(hurt.index), None)  # a folder of your own: no synsets, counts only
    assert blind["n_hurt"] == 2 and blind["hurt"] == ["dog", "cat"] and np.isnan(blind["among"])
    run = results.Run("demo", "smoke")
    RR.record_d1_wordnet_claim(run, dict(blind, rrc_gain=1.5))
    assert run.claims["appD1/hurt_classes_unrelated"]["verdict"] == "not measurable at this profile"


def test_augerino_caps_and_b6_claims():
    S = R.settings("cpu")
    caps = R.augerino_caps(S)
    assert caps["translate_x"] == pytest.approx(1.2) and caps["scale"] == pytest.approx(2 * math.log(12.5) / 2)
    rows = []
    for group, tx, ty, zoom in (("translation", [0.05, 0.15, 0.3], [0.05, 0.15, 0.3], None),
                                ("translation then scale", [0.05, 0.25, 0.3], [0.0, 0.01, 0.3], [0.0, 0.05, 1.2])):
        for i, reg in enumerate(S.regs):
            row = dict(group=group, reg=reg, seed=0, top1_on=[70.0, 72.0, 71.0][i] - (group != "translation"),
                       top1_off=[71.0, 72.5, 71.0][i], **{"translate_x bound": tx[i], "translate_y bound": ty[i]})
            if zoom:
                row["scale bound"] = zoom[i]
            rows.append(row)
    tables = RR.augerino_tables(pd.DataFrame(rows))
    assert tables.loc[("translation", 0.1), "tx (% size)"] == 15 and tables.loc[("translation then scale", 1.0),
                                                                               "zoom (x)"] == round(math.e ** 1.2, 2)
    run = results.Run("demo", "smoke")
    RR.record_b6_claims(run, S, tables, _eval({R.NONE: [68, 68], "translate": [70, 70]}))
    v = {c: r["verdict"] for c, r in run.claims.items()}
    assert v["figA8/bounds_depend_on_reg"] == "reproduced"
    assert v["tableA3/augerino_translation_beats_none"] == "reproduced"
    assert v["tableA4/off_at_evaluation_slightly_higher"] == "reproduced"
    assert v["figA9/x_translation_only"] == "reproduced"  # weight 0.1: tx 25 %, ty 1 %, zoom e^0.05
    assert v["tableA5/scale_worse_than_translation"] == "reproduced"


@pytest.mark.slow
def test_a_tiny_family_and_augerino_run_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    S = R.settings("smoke", methods=(R.NONE, "rrc"), seeds=2, n_train=128, n_test=64, zooms=(1.0, 2.0),
                   regs=(1.0,), batch_size=32)
    trained = R.train(R.family(S), S)
    ds = R.eval_images(S)
    ev = R.evaluate(trained, S, ds)
    assert ev.preds["rrc"].shape == (2, 64) and len(ev.classes) == 10
    assert (R.evaluate(trained, S, ds).preds["rrc"] == ev.preds["rrc"]).all()  # from the cache
    curve = R.zoom_curve(trained, S, ds)
    assert list(curve.zoom) == [1.0, 2.0, 1.0, 2.0] and curve.top1.between(0, 100).all()
    runs = R.train_augerino(S, ds)
    assert len(runs) == 2 and set(runs.group) == set(R.AUGERINO_GROUPS)
    scaled = runs[runs.group == "translation then scale"].iloc[0]
    assert 0 <= scaled["scale bound"] <= 2 * math.log(S.zoom_cap) and runs.top1_off.between(0, 100).all()
    assert R.train_augerino(S, ds).equals(runs)  # cached
    assert crops.stored_size(S.size) == ds.images.shape[-1]


def test_eval_images_of_a_folder_without_splits_are_those_the_seed_0_models_held_out(tmp_path):
    from PIL import Image

    gen = np.random.default_rng(0)
    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(15):
            Image.fromarray(gen.integers(0, 256, (32, 32), dtype=np.uint8), "L").save(tmp_path / c / f"{i}.png")
    S = R.settings("smoke", dataset="folder", root=str(tmp_path), n_train=20, n_test=6)
    ds = R.eval_images(S)  # the folder has no test/: before, "its only split is 'train'"
    train, held_out = zoo.splits(R.spec(S, R.NONE, 0))
    side = crops.stored_size(S.size)
    assert ds.images.shape == (6, 3, side, side) and ds.images.equal(held_out.images) and ds.classes == ["a", "b"]
    assert not (train.images[:, None] == ds.images[None]).flatten(2).all(-1).any()

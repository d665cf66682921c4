# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # E2. Beyond vision: a frequency-shift invariance in signals
#
# Section 4.2 of {cite}`rommel2022augnet`. Four classes of noisy sinusoids at 2, 4, 6 and 8 Hz. Each signal's
# frequency is jittered by up to ±0.5 Hz, so the labels are invariant to frequency shifts of ±0.5 Hz and to
# no larger shift. One AugNet layer offers three EEG augmentations: frequency shift, FT surrogate (random
# Fourier phases) and Gaussian noise. The paper reports that the layer selects frequency shift and learns
# a range of about ±0.5 Hz. Affine methods such as Augerino cannot express this transformation.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
epochs = None  # training epochs (50 on paper)
widths = None  # filters of the two trunk convolutions (2 and 2 on paper)
init_magnitude = None  # starting magnitude of every op (0 on paper)
reg = None  # strength of the selective regulariser (0.2 on paper)
seeds = None  # training seeds, e.g. [0, 1, 2]
seed = 0  # data seed

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import Markdown
from myst_nb import glue

from invlib import data, learned, models, profiles, results
from invlib.learned import augnet
from invlib.train import TrainConfig

P = profiles.resolve(profile)
S = learned.settings("sinusoids", P, epochs=epochs, widths=tuple(widths) if widths else None,
                     init_magnitude=init_magnitude, reg=reg, seeds=tuple(seeds) if seeds else None)
run = results.Run("e2_beyond_vision", P, params=dict(S, seed=seed))
train = data.load("sinusoids", "train", n=S["n_train"], seed=seed)
test = data.load("sinusoids", "test", n=S["n_test"], seed=seed)
FS, TRUE_HZ = 100.0, 0.5
print(train, test, sep="\n")

# %% [markdown]
# ## The signals (Figure B.3)

# %%
t = np.arange(train.images.shape[-1]) / FS
fig, axes = plt.subplots(4, 1, figsize=(9, 5), sharex=True)
for k, ax in enumerate(axes):
    ax.plot(t[:300], train.images[train.labels == k][0, 0, :300], lw=0.8)
    ax.set_ylabel(train.classes[k], rotation=0, labelpad=25)
axes[-1].set_xlabel("time (s), first 3 of 10 s")
plt.show()

# %% [markdown]
# ## AugNet on the sinusoids
#
# The trunk is the paper's small convolutional network (Table 2). Training uses Adam at 1e-2 with weight
# decay 1e-4 on every parameter, batch 32, one copy in training and four at evaluation. Each seed trains
# a fresh model on the same data.

# %%
cfg = dict(epochs=S["epochs"], batch_size=S["batch_size"], optimizer="adam", lr=S["lr"],
           weight_decay=S["weight_decay"], aug_weight_decay=S["weight_decay"], schedule="none", device=P.device)


def augnet_model(ops, s):
    torch.manual_seed(s)  # the trunk's initial weights depend on the seed only
    trunk = models.create("signal_cnn", num_classes=4, in_chans=1, widths=S["widths"])
    return augnet.augnet(trunk, ops=ops, reg=S["reg"], init_magnitude=S["init_magnitude"], fs=FS,
                         copies=S["copies"])


hist = {}
for s in S["seeds"]:
    hist[s] = learned.fit(augnet_model("signal", s), train, TrainConfig(seed=s, **cfg), test=test,
                          progress=P.progress)
    sel = augnet.selected(hist[s][-1]["state"])["layer0"]
    print(f"seed {s}: selected {sel[0]} (weight {sel[1]:.2f}), max value {sel[2]:.3f}, "
          f"test acc {hist[s][-1]['test_acc']:.3f}")

# %% [markdown]
# Beyond the paper, a layer that offers frequency shift alone isolates the other half of the claim: given
# the right operation, does the layer learn its range, about ±0.5 Hz?

# %%
alone = {}
for s in S["seeds"]:
    alone[s] = learned.fit(augnet_model(["frequency_shift"], s), train, TrainConfig(seed=s, **cfg),
                           progress=P.progress)
    print(f"seed {s}, frequency shift alone: largest shift "
          f"{alone[s][-1]['state']['layer0']['frequency_shift']['max_value']:.3f} Hz")

# %% [markdown]
# ## Learned frequency-shift range (Figure 5) and the weights over training (Figure B.1)
#
# Solid lines: the paper's layer of three operations; dotted: frequency shift alone.

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
for s, h in hist.items():
    ep = [r["epoch"] + 1 for r in h]
    axes[0].plot(ep, [r["state"]["layer0"]["frequency_shift"]["max_value"] for r in h], label=f"seed {s}")
    for op, ls in zip(h[0]["state"]["layer0"], ["-", "--", ":"]):
        axes[1].plot(ep, [r["state"]["layer0"][op]["weight"] for r in h], ls=ls, color=f"C{s}",
                     label=f"{op}, seed {s}")
        axes[2].plot(ep, [r["state"]["layer0"][op]["magnitude"] for r in h], ls=ls, color=f"C{s}")
for s, h in alone.items():
    axes[0].plot([r["epoch"] + 1 for r in h], [r["state"]["layer0"]["frequency_shift"]["max_value"] for r in h],
                 ls=":", color=f"C{s}", label=f"shift alone, seed {s}")
axes[0].axhline(TRUE_HZ, color="k", ls="--", lw=1, label="0.5 Hz (true)")
axes[0].set(xlabel="epoch", ylabel="largest shift (Hz)", title="frequency shift range")
axes[1].set(xlabel="epoch", ylabel="weight", title="weights (solid: shift, dashed: FT surrogate, dotted: noise)")
axes[2].set(xlabel="epoch", ylabel="magnitude", title="magnitudes")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Training curves (Figure B.2)

# %%
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.2))
for s, h in hist.items():
    a1.plot([r["loss"] for r in h], label=f"seed {s}")
    a2.plot([r["train_acc"] for r in h], color=f"C{s}", label=f"train, seed {s}")
    a2.plot([r["test_acc"] for r in h], color=f"C{s}", ls="--", label=f"test, seed {s}")
a1.set(xlabel="epoch", ylabel="loss (cross-entropy + penalty)")
a2.set(xlabel="epoch", ylabel="accuracy")
a2.legend(fontsize=7)
plt.show()

# %% [markdown]
# ## Paper vs this run

# %%
rows = []
for s, h in hist.items():
    st = h[-1]["state"]["layer0"]
    sel = augnet.selected(h[-1]["state"])["layer0"]
    rows.append({"seed": s, "selected": sel[0], "weight": round(sel[1], 3),
                 "shift range (Hz)": round(st["frequency_shift"]["max_value"], 3),
                 "shift weight": round(st["frequency_shift"]["weight"], 3), "test acc": round(h[-1]["test_acc"], 3)})
    run.log(f"seed{s}/selected", sel[0], paper="frequency_shift")
    run.log(f"seed{s}/shift_hz", st["frequency_shift"]["max_value"], paper=TRUE_HZ)
    run.log(f"seed{s}/shift_weight", st["frequency_shift"]["weight"])
    run.log(f"seed{s}/test_acc", h[-1]["test_acc"])
    run.log(f"seed{s}/shift_hz_by_epoch", [r["state"]["layer0"]["frequency_shift"]["max_value"] for r in h])
    run.log(f"seed{s}/final_state", st)
for s, h in alone.items():
    run.log(f"alone/seed{s}/shift_hz", h[-1]["state"]["layer0"]["frequency_shift"]["max_value"], paper=TRUE_HZ)
    run.log(f"alone/seed{s}/shift_hz_by_epoch",
            [r["state"]["layer0"]["frequency_shift"]["max_value"] for r in h])
alone_hz = float(np.median([h[-1]["state"]["layer0"]["frequency_shift"]["max_value"] for h in alone.values()]))
run.log("alone/median_shift_hz", alone_hz, paper=TRUE_HZ, note="beyond the paper: frequency shift as the only op")
alone_ok = sum(abs(h[-1]["state"]["layer0"]["frequency_shift"]["max_value"] - TRUE_HZ) <= 0.15 for h in alone.values())
run.log("alone/seeds_within_0.15_hz", alone_ok, note=f"of {len(alone)}")
glue("e2_alone", Markdown(f"{alone_hz:.2f} Hz, within 0.15 Hz of the true 0.5 Hz on {alone_ok} of {len(alone)} seeds"),
     display=False)
table = pd.DataFrame(rows).set_index("seed")
shift_hz = float(np.median(table["shift range (Hz)"]))
shift_w = float(np.median(table["shift weight"]))
ok = shift_w >= 0.8 and abs(shift_hz - TRUE_HZ) <= 0.15
n_ok = int(((table["shift weight"] >= 0.8) & ((table["shift range (Hz)"] - TRUE_HZ).abs() <= 0.15)).sum())
run.log("median_shift_hz", shift_hz, paper=TRUE_HZ, note="median over seeds")
run.log("median_shift_weight", shift_w, note="median over seeds")
run.log("criterion_met", ok, note="median weight >= 0.8 and median range within 0.15 Hz of 0.5 Hz")
glue("e2_hz", Markdown(f"{shift_hz:.2f} Hz (median weight {shift_w:.2f})"), display=False)
glue("e2_verdict", Markdown("reproduces" if ok else "does not reproduce"), display=False)
glue("e2_nok", Markdown(f"{n_ok} of {len(table)}"), display=False)
n_sel = int((table["selected"] == "frequency_shift").sum())
run.log("seeds_selecting_frequency_shift", n_sel, note=f"of {len(table)}")
glue("e2_nsel", Markdown(f"{n_sel} of {len(table)}"), display=False)
free_gain = S["reg"] * 1.0 - S["weight_decay"] / 2  # an operation harmless at magnitude 1, at full weight
mu_true = TRUE_HZ / augnet.OPS["frequency_shift"].scale
shift_gain = S["reg"] * mu_true - S["weight_decay"] / 2 * mu_true**2  # frequency shift held to 0.5 Hz
glue("e2_obj", Markdown(f"an operation that costs nothing at magnitude 1 lowers the loss by {free_gain:.3f}, "
                        f"frequency shift held to 0.5 Hz (μ = {mu_true:.2f}) by {shift_gain:.3f}"), display=False)
table

# %%
run.table()

# %% [markdown]
# ## What this run shows
#
# Frequency shift was selected on {glue:md}`e2_nsel` seeds. Over the seeds, the median learned
# frequency-shift range is {glue:md}`e2_hz`. The paper's result, frequency shift selected with a range
# near ±0.5 Hz, {glue:md}`e2_verdict` on the median, and {glue:md}`e2_nok` seeds meet it on their own
# (weight of at least 0.8, range within 0.15 Hz of 0.5 Hz).
# Offered frequency shift alone, the layer learns a median largest shift of {glue:md}`e2_alone`. The
# range is set where the pull of the regulariser (`λ = 0.2` per unit of magnitude) meets the rise of the
# training loss. That loss does not jump at ±0.5 Hz: a shifted signal only starts to overlap the
# neighbouring class there. So the learned range depends on `λ`, on the scale that maps magnitude 1 to
# hertz (2 Hz, from the authors' code; the paper does not give it) and on how robust the trunk is. With
# Adam at 1e-2 the magnitude can overshoot and come back within a run (the curves above).
#
# The `cpu` profile runs the paper's settings (`smoke` trains for 12 epochs, one seed). Settings the paper
# does not give come from the authors' code:
#
# - **Trunk.** The first convolution is 100 samples wide (two periods of the slowest class at 100 Hz), the
#   second 3, with 2 filters each. The paper's Table 2 prints a width of 3 for both; with 3, the 2-filter
#   trunk reached only 67–90% training accuracy in our measurements.
# - **Operation scales.** Magnitude 1 is a shift drawn in ±2 Hz, a random phase of up to 0.1 × 2π per
#   Fourier coefficient, or noise of standard deviation 0.1 (the signals' own noise is 0.5).
# - **Starting magnitude** 0, as the paper. Magnitudes pass through a straight-through clamp, so they keep
#   a gradient at 0 (the torch 2.14.1 clamp has none there). The regulariser `‖w ⊙ μ‖₂` still gives no pull
#   to a magnitude that sits at 0, so at first only the cross-entropy moves them.
# - **Why the operations compete.** At these scales FT surrogate and noise barely change a signal even at
#   magnitude 1, so by the selective regulariser's own argument (the operation that can take the largest
#   magnitude without hurting wins) either of them can win: {glue:md}`e2_obj` (`λ = 0.2`, weight decay
#   1e-4). Which operation wins is decided in the first epochs and varies with the seed.
#
# ## Sleep staging (section 5.2) and your own signals
#
# The paper's MASS sleep-staging experiment needs MASS Session 3, which is distributed only on request under
# a data-use agreement, so this book cannot run it. The same layers apply to any 1-D signal set, given as
# `x (N, C, T)` float and `labels (N,)`. The example below uses a random stand-in with the shape of 30-s,
# 6-channel EEG windows at 128 Hz:

# %%
x_eeg = torch.randn(8, 6, 30 * 128)
eeg_net = augnet.augnet(models.create("signal_cnn", num_classes=5, in_chans=6, widths=(8, 8)),
                        ops=["signal", "signal"], reg=10.0, fs=128, init_magnitude=0.05)
print(eeg_net.eval()(x_eeg).shape, "| train with learned.fit(eeg_net, (x, labels), TrainConfig(...))")

# %%
run.save()

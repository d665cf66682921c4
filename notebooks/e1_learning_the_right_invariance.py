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
# # E1. Learning the right invariance: rotated sprites
#
# Section 4.1 of {cite}`rommel2022augnet`, after the "Mario and Iggy" experiment of
# {cite}`benton2020augerino`. Two asymmetric images, rotated by an angle in [-π/4, π/4] (upright) or by that
# plus π (upside down), make four classes. The labels are invariant to rotations of up to π/4 and to nothing
# larger, so a method that learns invariances from the training set should end with a rotation range of
# about π/4. Four models share one trunk (the paper's 4-conv net): AugNet with one layer of five affine
# operations and the selective regulariser, Augerino, AugNet without a regulariser, and AugNet with
# Augerino's regulariser. The sprites are two real Fashion-MNIST items (a sneaker and an ankle boot) rendered
# in colour, 3 channels, as the RGB sprites of the authors' code; `sprite_files` takes any two image files
# instead. As in the generator of {cite}`benton2020augerino`, the whole frame is rotated, so the corners of
# a rotated sprite are cut off.
#
# Where the paper is silent, the settings follow the authors' code (github.com/cedricrommel/augnet): Adam
# with weight decay 1 on *every* parameter, op weight logits starting at 1, translations of at most 0.45 of
# the side. Each is a parameter below, so you can see what it does. The same seeds were also run through
# the authors' own code on this machine (`benchmarks/authors/`), and the chapter sets the two side by side.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
n_train = None  # training images (the paper: 10000)
n_test = None  # test images (the paper: 5000)
size = None  # canvas side in pixels (the paper: 32)
epochs = None  # training epochs (the paper: 20)
widths = None  # trunk widths (the paper: [32, 64, 128, 256])
aug_lr = None  # learning rate of the augmentation parameters; None: the trunk's (one optimiser, as the authors)
weight_decay_on = None  # "all" parameters (the authors' Adam) or "augmentation" parameters only
init_logit = None  # where the op weight logits start (the authors: 1)
translate_scale = None  # largest translation, a fraction of the side (the authors: 0.45)
eval_draw = None  # at evaluation one op per "sample" or per "batch" (the authors)
color = None  # the two sprites in colour, 3 channels (True), or grey (False)
max_angle = None  # the data's rotation range in degrees (the paper: 45)
other_angle = None  # beyond the paper: a second data range in degrees, for rotate alone
sprite_files = None  # two image paths; None: a Fashion-MNIST sneaker and ankle boot
fill = 1.0  # sprite side over canvas side, 1 as Benton et al. (0.707 keeps every rotation inside the canvas)
seed = 0
extra_seeds = None  # more seeds for AugNet, each its own trunk initialisation (the paper shows one run)
ablation_seeds = None  # more seeds for Augerino and the two regulariser ablations (the paper shows one run each)
shear_ablation = None  # beyond the paper: also AugNet without its two shears

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from invlib import plots, results
from invlib.papers.e import experiments as E
from invlib.papers.e import experiments_reports as R

S, run = results.open_chapter(E.settings, globals(), experiment="sprites")
train, test = E.sprite_data(S)
print(train, test, sep="\n")
S

# %% [markdown]
# ## The data (Figure A.1)
#
# Each row is one class: the sprite, upright or upside down, at random angles.

# %%
rows = [train.images[train.labels == k][:8] for k in range(4)]
plots.image_grid(torch.cat(rows), titles=[c for c in train.classes for _ in range(8)], ncols=8)
plt.show()

# %% [markdown]
# ## Four models, one trunk
#
# AugNet trains with Adam at one learning rate and the authors' weight decay of 1 on every parameter (the
# paper mentions it only for the augmentation). Augerino trains everything at 1e-2 without weight decay.
# Both start at a rotation range equivalent to π/8 (AugNet's magnitude 1/8 of ±π; Augerino's width 0 gives
# log 2 / 2 ≈ 0.35 rad). Training uses one copy per image, evaluation four. Every model starts from the
# trunk weights of its seed (`invlib.papers.e.experiments.sprite_models` lists them); the extra seeds repeat
# the paper's AugNet with other initial weights and data orders. The test accuracy is measured once, after
# the last epoch.

# %%
hist = E.train_sprite_models(S, train, test)

# %% [markdown]
# ## Learned rotation range (Figure 3)
#
# The largest rotation each model applies after every epoch: AugNet's rotate magnitude times π, Augerino's
# half-width. The dashed line is the true invariance, π/4.

# %%
R.plot_rotation(hist)
plt.show()

# %% [markdown]
# ## What each AugNet layer selected (Figure 4)
#
# Weights `softmax(w'/T)` and magnitudes of the five operations at the end of training, with the selective
# regulariser (top of the paper's Figure 4) and with Augerino's (bottom).

# %%
panels = ["AugNet", "AugNet, Augerino's regulariser", "AugNet, no regulariser"]
R.plot_layers({n: hist[n][-1]["state"] for n in panels})
plt.show()

# %% [markdown]
# The same over training for the selective regulariser: which operation takes the weight, and when.

# %%
R.plot_ops_over_training(hist["AugNet"])
plt.show()

# %% [markdown]
# ## Paper vs this run, and vs the authors' code
#
# One row per model: the operation its layer selected (Augerino applies all six generators), the largest
# rotation it learned and its test accuracy.

# %%
table, seeds, facts = R.report_sprites(run, S, hist)
table

# %% [markdown]
# The paper's AugNet on every seed, beside the authors' code run on this machine with the same seed numbers
# at the same setting: our colour sprites fed to their generator, the same number of sprites, trunk width
# and epochs, each seed with its own trunk initialisation. "Largest value" is the selected op's range:
# radians for rotate, a fraction of the side for translations, the shear coefficient for shears. An empty
# side means that code was not run at this setting (run `benchmarks/authors/augnet_runs.py`, or pick the
# `cpu` profile).

# %%
seeds

# %% [markdown]
# Every setting the authors' code was run at here, with how many seeds selected rotate, on our sprites and
# on their own Mario and Iggy: the sprites themselves change how often rotate wins. The paper's setting
# is 10,000 sprites of width 32. "trunk shared" is their script as published: every seed starts from one trunk
# initialisation, and the seed changes only the data order and the augmentation draws.

# %%
R.authors_table("sprites", "rotate")

# %% [markdown]
# ## Beyond the paper: does the learned angle follow the data?
#
# At the paper's ±45°, two answers coincide: the data's own range, and the largest rotation that keeps
# every label (an upright sprite turned past 90° − 45° lies nearer the upside-down ones). A layer offering
# rotate alone, trained on sprites rotated within `max_angle` and within `other_angle`, tells them apart.

# %%
ranges = E.train_angle_ranges(S)
range_table, range_facts = R.report_angle_ranges(run, S, ranges)
if ranges:
    R.plot_rotation({f"rotate alone, data within {a:g}°": h for a, h in ranges.items()},
                    {f"{90 - a:g}° (label-preserving at {a:g}°)": np.radians(90 - a) for a in ranges})
    plt.show()
range_table

# %% [markdown]
# The paper's claims, each with the criterion its verdict is computed by, and the metrics that have a
# paper value.

# %%
results.glue({**facts, **range_facts})
run.claims_table()

# %%
run.table()

# %% [markdown]
# ## What this run shows
#
# - **AugNet, the paper's five operations.** The layer ends on {glue:md}`e1_sel`; its rotation range is
#   {glue:md}`e1_rot`. Over all the seeds run, the selected operations were {glue:md}`e1_seeds`:
#   {glue:md}`e1_count` seeds meet the paper's result (rotate's weight at least 0.8, range within 0.15 rad
#   of the data's range). {glue:md}`e1_selects` {glue:md}`e1_rot_when`
# - **The authors' code** on the same seeds and setting: {glue:md}`e1_authors`. The table of settings above
#   shows how their rate moves with the trunk initialisation and the size of the run.
# - **Why another operation can win.** The selective regulariser rewards the operation whose magnitude can
#   grow the most before it hurts the training loss (the paper's Figure 2 argument). On these sprites a shear
#   of at most 0.3, or a vertical shift, never changes the label, so by that argument they are admissible at
#   a large magnitude, while rotation is admissible only up to a quarter of its ±π scale. With `λ = 0.5` and
#   the weight decay of 1 on the magnitudes, {glue:md}`e1_obj`. The weights are also decided early: with
#   `T = 0.01` the softmax is near-hard once one logit leads by a few hundredths, so whichever operation
#   leads then keeps the weight.
# - **How far the range can move.** {glue:md}`e1_reach`. Where that bound is near π/4, a range short of
#   π/4 says the run was short, not that the method stopped; the selection is decided long before.
# - **Without the shears** (beyond the paper): {glue:md}`e1_ns`.
# - **Rotate alone, two data ranges** (beyond the paper): {glue:md}`e1_ranges`. The two candidate answers,
#   the data's range and the largest label-preserving rotation (90° minus it), meet at the paper's 45°, so
#   the paper's experiment cannot tell them apart; another range can.
# - **Augerino** ends at {glue:md}`e1_aug`
# - **Without a regulariser**, AugNet's rotation range ends at {glue:md}`e1_none`
# - **With Augerino's regulariser**, AugNet {glue:md}`e1_miss`
#
# Augerino and the two ablations are trained from seed 0 and from each of `ablation_seeds` (two more on `cpu`,
# none on `smoke`): the paper's claims about them are claims about what training does, so each needs three seeds
# before it can be decided (one run shows the direction only; the claims table says so). The sentences above
# give every seed's number; the panels of Figure 4 are seed 0's.
#
# On the `cpu` profile the trunk is narrower, with fewer images and epochs (the settings printed at the top);
# the authors' code was run at that size too, so the side-by-side compares like with like. The `paper`
# profile restores the paper's sizes.

# %%
run.close()

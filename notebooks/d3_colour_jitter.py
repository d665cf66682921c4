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
# # D3. Colour jitter learned per image, under lighting never seen
#
# Section 5.4 of {cite}`miao2023instaaug` (Tables 3 and 4, Fig. 7, App. D.2, E.1, Fig. D.1). RawFooT photographs
# 68 food textures under 46 lighting conditions. A classifier is trained under one light (D45, 4500 K daylight)
# and tested under all of them: its **general** accuracy (all conditions mixed evenly), its **in-distribution**
# accuracy (the "easy" group, lights like D45) and its **out-of-distribution** accuracy (the "hard" group:
# coloured lights, mixtures). Colour jitter should help, but how much hue, saturation and brightness change an
# image can take depends on the image: a hue shift leaves a leaf a leaf but turns a lemon into a lime. InstaAug
# learns one range per image and per operation; the baselines are random jitter at a fixed range (the paper
# sweeps 216 settings of `ColorJitter`), a learned range shared by all images (the paper's Augerino "with relaxed
# symmetry restrictions") and no augmentation. Table 4 repeats the comparison with 1, 2, 4 and 8 training lights.
#
# **The stand-in data** (`invlib.data.load("lighting", ...)`). RawFooT is not here, so the chapter builds data
# with the property the experiment needs: whether the hue may change depends on the image. Twelve classes of
# Fashion-MNIST items on a textured background. Eight of them come in four *hue-identified pairs*: the same item
# in two hues 120° apart (a "red" and a "green" sandal), so the hue is the label and a wide hue jitter destroys
# it. The other four are *random-hue* classes whose hue is uniform on the circle, so the hue carries nothing. Each
# image is lit by one of 23 conditions, a per-channel gain on the whole image (Planck daylight from 2700 to
# 9500 K, two intensities, six coloured lights, four mixtures), split into an easy and a hard group as App. D.2
# splits RawFooT's. A global range must serve both kinds of classes at once; a per-image range need not.
#
# The learned ranges use section 3.3's uniform parameterisation: per image and per operation a range `[-b, a]`,
# `a, b = sigmoid(p - 2) * max`, hue in turns (at most half a turn each way), saturation and value as log-factors
# (at most ln 2 each way: the applied factor is clamped to [0, 2], so a wider bound would change nothing). The
# entropy `sum log(a + b)` is held inside a band by the dynamic weight λ. The authors'
# released code sets the hue and saturation maxima to 0 in every commit, so only brightness is jittered there;
# this chapter learns all three, as the paper describes.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
train_condition = None  # Table 3's training light (D45)
n_train = None  # training images (200 per class, as RawFooT's 200 patches per texture)
n_test = None  # test images, each under one of the 23 conditions
size = None  # canvas side in pixels
hue_spread = None  # half-width in degrees of a hue-identified class's hue (10)
hue_share = None  # share of the 4 hue pairs whose hue is the label (1: 8 of 12 classes; 0: none) (1.0)
control_share = None  # the data control's hue share (None: no control; the paper runs none)
control_seeds = None  # the control's seeds (None: seeds)
trunk = None  # classifier: small_resnet18 (widths 64-512, the paper's PreActResNet-18) or conv4
widths = None  # the classifier's widths
epochs = None  # training epochs (the paper: 50)
lr = None  # classifier SGD (the paper: 0.02)
module_lr = None  # invariance module SGD (the paper: 1e-5)
h_min = None  # entropy band on sum log(a + b) over hue, saturation, value (-1.5)
h_max = None  # (-0.5)
tta = None  # test-time draws (the paper: 10)
jitter = None  # random-jitter settings [(h, s, v), ...] (the paper's 216)
n_conditions = None  # Table 4's numbers of training conditions ([1, 2, 4, 8])
seeds = None  # runs per model (the paper: 10)

# %%
import matplotlib.pyplot as plt

from invlib import plots, results
from invlib.papers.d import colour as D
from invlib.papers.d import colour_reports as R

S, run = results.open_chapter(D.settings, globals())
test = D.general_test_set(S)
S

# %% [markdown]
# ## The data under different lights
#
# The same test images (rows: two hue-identified pairs, then two random-hue classes) under eight of the 23
# conditions. Training sees only the first column.

# %%
images, titles = D.condition_grid(S)
plots.image_grid(images, titles=titles, ncols=len(D.SHOWN), size=1.2)
plt.show()

# %% [markdown]
# ## Training the family
#
# Every model starts from the classifier weights of its seed: no augmentation, one random jitter per setting of
# the reduced sweep (hue shift uniform in `[-h, h]` turns, saturation and brightness factors uniform in
# `[1 - s, 1 + s]` and `[1 - v, 1 + v]`, `ColorJitter`'s meaning), the global learned range (the module's
# network replaced by one set of learned bounds: input-free InstaAug) and InstaAug. The last two train with the
# same objective, band and module step. Each model is then tested on every test image with and without
# test-time augmentation (mean logits over draws of its own augmentation). The same then runs for Table 4 on the
# larger training sets.

# %%
res = D.train(S, test)

# %% [markdown]
# ## Table 3: trained under D45
#
# General accuracy (%) beside the paper's, and ours in and out of distribution. Augerino and AdaAug are not run.
# Our global range, InstaAug's own input-free version (the same module, objective and band, reading `0 · x`), is
# a row of its own: the paper has no such model, and its Augerino is another one.

# %%
t3, sweep, t4, facts = R.report(run, S, res)
t3

# %% [markdown]
# ## Fig. 7: in distribution against out of distribution
#
# Every model of the sweep (means over seeds), without and with test-time augmentation. Random jitter runs from
# yellow to red as the hue jitter grows; larger dots jitter the brightness more, more opaque ones the
# saturation.

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 5))
R.plot_fig7(res, ax=axes[0])
R.plot_fig7(res, tta=True, ax=axes[1])
plt.show()
sweep

# %% [markdown]
# Accuracy under each light (first seed): where the models part.

# %%
R.plot_conditions(res, tta=True)
plt.show()

# %% [markdown]
# ## Fig. D.1: what InstaAug learned per image
#
# Every test image's learned range width for hue (turns), saturation and value (log-factors), split by class
# type; the dashed line is the global range's one width. Below, examples: each image, then the image at both
# ends of its hue range and at both ends of its value range.

# %%
R.plot_ranges(res)
plt.show()
R.plot_examples(res, test)
plt.show()

# %% [markdown]
# ## Table 4: more training lights
#
# General accuracy (%) when the training set mixes 1, 2, 4 or 8 lights (nested sets: D45, then the others in a
# seeded random order; the paper draws each set at random); random jitter is the best setting of Table 3, and it
# and InstaAug use test-time augmentation, as in the paper. The sets this run used:

# %%
print({k: ", ".join(v) for k, v in res.sets.items()})
t4

# %% [markdown]
# ## The data control: no hue-defined classes
#
# A per-image range can only beat one range for all images where the right range differs between images. At hue
# share 0 the stand-in's four pairs lose their colour classes: each pair's item becomes one class of random hue
# (8 classes, all random hue, the same number of training images), so nothing is left for a per-image hue range
# to read. The global range and InstaAug are trained again there, at the control's seeds, beside the same two at
# the chapter's share; the claim: InstaAug's gain over its input-free version shrinks (per seed, paired).

# %%
R.plot_control(res)
plt.show()
R.control_table(res)

# %% [markdown]
# ## The paper's claims

# %%
results.glue({**facts, "d3_departures": R.departures(S)})
run.claims_table()

# %%
run.table()

# %% [markdown]
# ## What this run shows
#
# - **Table 3.** InstaAug reaches {glue:md}`d3_instaaug_vs_random` in general accuracy without test-time
#   augmentation, and {glue:md}`d3_instaaug_vs_random_tta` with it (the paper: 81.11 against 79.99 %, and 81.35
#   against 80.55 %). Without test-time augmentation: {glue:md}`d3_instaaug_vs_random_verdict` With it:
#   {glue:md}`d3_instaaug_vs_random_tta_verdict` The best random jitter here is {glue:md}`d3_best_random`; the
#   paper's is `h=0, s=0.2, v=0.8`. On the stand-in a small hue jitter is safe for every class (a pair's hues are
#   120° apart), which RawFooT's textures may not allow.
# - **Fig. 7, out of distribution.** Under the hard group's lights InstaAug reaches
#   {glue:md}`d3_ood_above_every_random` without test-time augmentation, and
#   {glue:md}`d3_ood_above_every_random_tta` with it. Without: {glue:md}`d3_ood_above_every_random_verdict` With:
#   {glue:md}`d3_ood_above_every_random_tta_verdict` In distribution it is above {glue:md}`d3_easy_share` random
#   settings. {glue:md}`d3_easy_share_verdict`
# - **Fig. D.1, per-image ranges.** InstaAug's hue range is {glue:md}`d3_hue_identified` turn wide on the
#   hue-identified classes and {glue:md}`d3_random_hue` on the random-hue ones (difference {glue:md}`d3_hue_gap`);
#   the global range has one width, {glue:md}`d3_global_hue`. {glue:md}`d3_hue_verdict` The saturation and value
#   ranges are {glue:md}`d3_sv_widths` on average; whatever of the entropy band they leave goes to the hue. The
#   ranges need not be symmetric (mean bounds in turns: {glue:md}`d3_hue_bounds`): a hue-identified item may move
#   far from the hue of its twin class and little towards it.
# - **Per-image against global.** {glue:md}`d3_global_vs_instaaug`. {glue:md}`d3_global_verdict` This compares
#   InstaAug with its own input-free version, a control the paper does not run; the paper's nearest row, Augerino
#   (78.97 % against InstaAug's 81.11 %), is another model.
# - **The data control.** {glue:md}`d3_control` ({glue:md}`d3_control_seeds`). {glue:md}`d3_control_verdict`
# - **Table 4.** InstaAug minus random jitter, both with test-time augmentation, in points per number of training
#   lights, with each verdict: {glue:md}`d3_table4_gains` (the paper: +3.3, +2.8, +2.3, +2.3). Numbers of lights
#   not trained at this profile: {glue:md}`d3_left_out`.
# - **Seeds.** {glue:md}`d3_seeds`. Every claim of this chapter is about what training produces, so its verdict
#   rests on the spread of the seeds (a 95 % interval over seeds, paired by seed); the test images of one trained
#   model are not replicates of training.
#
# ## Where this run departs from the paper
#
# The paper trains a PreActResNet-18 on 200 px texture patches for 50 epochs, ten times per method, and sweeps 216
# random-jitter settings. The `cpu` profile keeps the number of training images (200 per class) and the method,
# and shrinks the rest to fit a few minutes on two cores: 16 px images (the experiment is about colour), the
# 4-conv classifier, a cosine schedule at a larger step, a module step far above the paper's 1e-5 (at 1e-5 the
# ranges would not move in a few hundred steps), a band check every few steps instead of once per epoch, fewer
# test-time draws, a reduced sweep around the paper's best setting, and three seeds instead of ten (the fewest that
# decide a claim about training). Setting by setting, the paper's value beside this run's:
#
# {glue:md}`d3_departures`
#
# The band is a choice of this chapter: the authors' colour configuration bands each bound on its own, while here
# one band holds the summed entropy of the three ranges (see `invlib.papers.d.colour.Colour`). The best random
# jitter is chosen on the test set, as the paper chooses it, which favours the baseline.

# %%
run.close()

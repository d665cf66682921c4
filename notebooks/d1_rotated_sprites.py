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
# # D1. Do learned rotation ranges follow each image's angle?
#
# Section 5.1 of {cite}`miao2023instaaug`, on the "Mario and Iggy" task of {cite}`benton2020augerino`: two
# sprites, upright or upside down (four classes), each rotated by an angle φ in [-π/4, π/4] (plus π upside down).
# An image at angle φ can be rotated further by δ and keep its label while |φ + δ| < π/2, the class boundary
# half-way between the upright and the upside-down ranges: the largest label-preserving range is
# [-(π/2 + φ), π/2 - φ], a different one for every image. Augerino learns one symmetric range for all images;
# InstaAug's invariance module reads the image and gives it its own range U[-b, a]. The question of Fig. 5: do
# the learned bounds follow each image's angle up to the boundary?
#
# The sprites are paper E's (chapter E1): two Fashion-MNIST items in colour, and the data set records each image's
# angle, so the chapter can set every learned range beside the one the image allows. Two controls are trained from
# the same seeds: Augerino, and the **input-free** model, InstaAug's own module reading 0·x (one range for all
# images, learned with the same recipe and band): what per-image ranges add is what they do beyond it.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
n_train = None  # training sprites (the authors' code: 1,000)
n_test = None  # test sprites (500)
size = None  # canvas in pixels (the authors' code: 64)
epochs = None  # training epochs
module_lr = None  # the invariance module's learning rate (the authors' code: 1e-5; ours larger, see the end)
h_min = None  # entropy band on log(a + b); None: chosen by the band sweep on held-out training images
h_max = None
lam0 = None  # the entropy weight's start
augerino_reg = None  # Augerino's regulariser (Benton et al.: 0.01 to 0.1)
seeds = None  # InstaAug runs from this many seeds (the paper's figure: one run)
seed = 0

# %%
from IPython.display import display

from invlib import pages, results
from invlib.papers.d import authors_code as A
from invlib.papers.d import rotations as D
from invlib.papers.d import rotations_reports as R

S, run = results.open_chapter(D.settings, globals())
train, test = D.sprite_data(S)
results.glue(dict(n_train=len(train), n_sprites_test=len(test), size=S.size, epochs=S.epochs))

# %% [markdown]
# This run has {glue:text}`n_train:,` training and {glue:text}`n_sprites_test:,` test sprites of {glue:text}`size` px,
# and trains every model for {glue:text}`epochs` epochs.
#
# ## Choosing the band without the answer
#
# The paper gives no band for this task, and the width that keeps the labels (π, so log π = 1.14) is the answer
# the chapter tests for: handing it to the module would be circular. The band is chosen as the paper chooses its
# crop band (Table E.1): InstaAug is trained with each band of length 0.5 on log(a + b) on half the training
# sprites, for as many steps as the main runs, and ranked by its accuracy on the other half; among the bands
# within {glue:text}`tolerance:.0f` point of the best, the widest wins (more diversity, at no cost in accuracy). The
# test set is not read. The band used below is [{glue:text}`h_min:g`, {glue:text}`h_max:g`].

# %%
sweep = D.band_sweep(S, train)
S = D.with_band(S, sweep)
run.use(S)  # the chosen band is a parameter of the run
chosen = f"[{S.h_min:g}, {S.h_max:g}]"
results.glue(dict(tolerance=100 * D.SELECT_TOLERANCE[0]))
if len(sweep):
    R.plot_sweep(sweep, (S.h_min, S.h_max))
    pages.show(f"The band sweep, one InstaAug model per band on half the training sprites (first seed). Left: "
               f"accuracy on the other half, with test-time augmentation (the selection's measure) and with one "
               f"draw. Right: the widths a + b the band allows (grey) and the mean width the module learned, with "
               f"the slopes of its upper / lower bound on the angle. The chosen band, {chosen}, is starred.")
    display(pages.table(R.sweep_table(sweep, (S.h_min, S.h_max)), f"Bands tried (chosen: {chosen})."))

# %% [markdown]
# ## Training
#
# The three models share the classifier (paper E's 4-conv net) and its starting weights. InstaAug and its
# input-free control are trained on the paper's objective: the cross-entropy on one rotated copy, minus λ times the
# entropy log(a + b) of the range, with λ steered into the chosen band (widths {glue:text}`width_min:.2f` to
# {glue:text}`width_max:.2f` rad) and the module's learning rate warmed up over the first epoch; Augerino on its
# own objective, with its regulariser on the width. All are tested with {glue:text}`copies` rotated copies.

# %%
trained = D.train(S, train, test)
per_image = {m: D.bounds(net, test) for m, (net, _) in trained.items()}
items = {}  # each test image's share of the measures, per seed: where their spread comes from
per_seed = D.seed_slopes(S, train, test, trained, items=items)
acc = {m: h[-1]["test_acc"] for m, (_, h) in trained.items()}
summary, facts = R.report(run, S, per_image, acc, per_seed, sweep, items)
results.glue(dict(facts, copies=S.copies, module_lr=S.module_lr, **R.seed_facts(per_seed)))
display(pages.table(R.readable(summary), f"The first seed's models on the {len(test):,} test sprites: the slopes "
                    "of each bound on the image's angle (the boundary's: -1 for a, +1 for b), the share of images "
                    "with both bounds within 0.2 rad of the boundary, and test accuracy."))

# %% [markdown]
# ## Figure 5: learned ranges against each image's angle
#
# InstaAug's bounds (the first seed's model) have slopes {glue:text}`instaaug_upper_slope:+.2f` and
# {glue:text}`instaaug_lower_slope:+.2f` on the angle, where the boundary's are -1 and +1. The input-free model's
# range is one for all images, so its slopes are 0 by construction; its centre lies
# {glue:text}`input_free_centre_error:.2f` rad from each image's label-preserving centre on average, InstaAug's
# {glue:text}`instaaug_centre_error:.2f` rad. Augerino's half-width is {glue:text}`augerino_half:.2f` rad for every
# image.

# %%
R.plot_bounds(per_image, facts["max_angle"])
pages.show(f"Each dot is one of the {len(test):,} test sprites: its learned upper bound a (how far it may turn "
           "further counter-clockwise) and lower bound b against its angle φ within its class, for the first seed's "
           "models. The dashed lines are the class boundary; bounds that follow the image fall along them. The "
           "input-free model and Augerino learn one range for all images, hence flat rows.")

# %% [markdown]
# ## How much depends on the start
#
# Every model was trained from each of {glue:md}`seeds_text` (the classifier's and the module's starting weights
# and the training draws; the same data). The claims are about what training produces, so each is decided over
# these seeds, the controls paired with InstaAug seed by seed. Averaged over the seeds, InstaAug's bounds have
# slopes {glue:text}`mean_upper_slope:+.2f` and {glue:text}`mean_lower_slope:+.2f` on the angle, and
# {glue:text}`near_instaaug:.0f` % of the test images have both bounds within 0.2 rad of the boundary (the
# input-free model: {glue:text}`near_input_free:.0f` %). The mean gap between a bound and the boundary is
# {glue:text}`gap_instaaug:.2f` rad for InstaAug, {glue:text}`gap_input_free:.2f` rad for the input-free model and
# {glue:text}`gap_augerino:.2f` rad for Augerino.

# %%
pages.table(R.seed_table(per_seed), f"Every model's measures per seed, on the {len(test):,} test sprites.")

# %%
R.plot_arcs(per_image)
pages.show("Figure 5 as the paper draws it, for five test sprites spread over the angles (first seed's models): "
           "the data's upright range (blue), each image's angle (dot) and its learned rotation range (green arc), "
           "and the class boundary (red). A range that fits its image ends at the red lines on both sides.")

# %% [markdown]
# ## The authors' code at this setting
#
# The authors' training script (NingMiao/InstaAug, run here by `benchmarks/authors/instaaug_runs.py rotation_cpu`
# on their own Mario-Iggy sprites) with this chapter's cpu setting: the same number of steps and module learning
# rate, their ResNet-18 at the widths of our classifier, and their objective as released (the bounds a and b
# themselves as the "entropy", weight 0.1, in a band they never leave). Their learned bounds are measured with this
# chapter's code. The rows with other learning rates show whether a smaller step changes the picture (their
# optimizer is SGD, ours Adam), and those with a smaller entropy weight (their config's is 0.1) whether a weaker
# pull on the bounds does. The claim "same as the authors' code" asks whether their run at the same learning
# rate ({glue:text}`module_lr:g`) and their weight reaches the same two Fig. 5 verdicts as ours, each side decided
# on its own seeds.

# %%
authors_table = A.rotation_table(per_image["instaaug"], trained["instaaug"][1][-1]["test_acc"])
same = A.report_rotation(run, S, authors_table, per_seed["instaaug"])
results.glue(A.rotation_facts(authors_table, S.module_lr, same))
pages.table(R.readable(authors_table.set_index("who")), "Our InstaAug (first seed) beside the authors' code, one "
            "run of theirs per learning rate and entropy weight, each measured by this chapter's code on its own "
            "test sprites.")

# %% [markdown]
# At this chapter's learning rate, the authors' code ends with bounds of mean width {glue:md}`their_width` rad (the
# full turn is 2π) and slopes {glue:md}`their_slopes` on the angle, at {glue:md}`their_acc` test accuracy:
# {glue:md}`their_reading`

# %% [markdown]
# ## Paper vs this run

# %%
run.claims_table()
# %% [markdown]
# ## What differs from the paper here
#
# - **The module's learning rate and the band.** The authors' configuration trains the module with SGD at 10⁻⁵,
#   an entropy weight of 0.1 and a band that never binds; at that rate the bounds barely move in a run of a few
#   hundred steps. Here the module learns with Adam at {glue:text}`module_lr:g`, in the band the sweep chose.
#   Whether the ranges bend with each image's angle is still left to the module, and is what the slopes measure.
# - **The warm-up** raises the module's learning rate over the first epoch (the authors' code: ten epochs). A
#   factor on the gradient would do nothing under Adam, which divides it out.
# - **One joint step per batch** with the reparameterised range (the paper's objective); the authors' code
#   alternates a classifier step and a module step.
# - **Size.** Sprites of {glue:text}`size` px and paper E's small 4-conv classifier; the authors' code upsamples its
#   32 px sprites to 64 px and trains a ResNet-18.

# %%
run.close()

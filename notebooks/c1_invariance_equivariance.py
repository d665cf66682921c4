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
# # C1. Invariance and equivariance of a layer
#
# Section 6.1, Figs. 1, 2 and 7–9 and Table 3 of {cite}`tensmeyer2016invariance`. One network is trained per
# transformation type and training range (Table 1, App. A), plus a baseline without augmentation. For a
# fixed transform `g` of the test grid, the features `r' = φ(g x)` of the penultimate layer are compared with
# those of the untransformed image, `r = φ(x)`:
#
# - **invariance**: the frozen rest of the network classifies `r'` as it is;
# - **equivariance**: it classifies `M_g(r') = ReLU(r' + W r' + b)`, a residual linear map fitted on other
#   images to bring `r'` back to `r` (Eq. 8).
#
# If `M_g` recovers accuracy that the identity loses, the representation is *structured* with respect to `g`:
# the transformation moves features in a predictable, linearly undoable way. The paper's grids reach about
# twice the largest training magnitude, so the curves also show robustness beyond the training range.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # the training images (invlib.data.available(); the paper: ILSVRC, RVL-CDIP); "folder" with root
root = None  # folder of your own images (<root>/<class>/<image>, or train/ and test/ inside)
arch = None  # any invlib.models.create name (paper: tv/alexnet, whose fc7 is layer classifier.5)
types = None  # a subset of invlib.transform_types.TYPES
magnitudes = None  # training ranges per type: 1 (the widest) to 4 (all of App. A)
n_train = None
epochs = None
layer = None  # the measured layer (pre_logits: the classifier's input)
grid = None  # "paper" (App. A) or "small"
executor = None  # None (train here), "local" or "slurm": one zoo job per network
baselines = None  # baseline networks (seeds) without augmentation: 3 in the paper
n_fit = None  # images the maps M_g are fitted on, and scored on (n_eval)
n_eval = None
map_epochs = None  # epochs of each map's fit (10 in the paper)
device = None  # None: the profile's device; a torch device name (e.g. "cuda:1") overrides it
seed = 0

# %%
from invlib import pages, results
from invlib.papers.c import equivariance as C
from invlib.papers.c import equivariance_reports as R

S, run = results.open_chapter(C.settings, globals())
results.glue(R.scale_readings(S))

# %% [markdown]
# ## The transformation types
#
# Each row is one type at the widest training range of the family: random draws as the network saw them in
# training. At {glue:text}`size` px the paper's pixel units (blur and elastic widths in pixels) are about
# {glue:text}`size_ratio:.0f` times stronger relative to the image than at the paper's {glue:text}`paper_size` px.
# The paper's perspective sigmas (0.001 to 0.004 of the side) would move a corner by less than a pixel here, so ours
# are {glue:text}`persp_lo:g` to {glue:text}`persp_hi:g` of the side.

# %%
fit_ds, eval_ds = C.images(S)
members = C.family_members(S)
R.plot_training_draws(S, members, eval_ds)
pages.show(f"One test image (left) under six random training draws of each type's widest range (rows), as the "
           f"{len(S.types)} augmented networks saw them in training.")

# %% [markdown]
# ## Training the family
#
# Every network is a zoo model (`invlib.zoo.Spec` with augmentation `tm_<type>`), trained once and cached; with
# `-p executor=slurm` each becomes a SLURM job.

# %%
nets = C.train(S, members)
acc = C.accuracy_table(nets, S, eval_ds)
pages.table(R.readable(acc), f"Table 3 beside the paper: each network's accuracy on the {S.n_eval:,} untransformed "
            "test images (crop networks: the centre window). The paper's columns are its RVL-CDIP and ILSVRC networks "
            "with the same training range; compare orderings, not levels.")

# %% [markdown]
# ## Invariance and equivariance curves (Figs. 1, 7)
#
# For each type, the network trained with its widest range against the first baseline (every baseline is
# measured on every grid; the summary below averages them): invariance is the accuracy of the frozen network on
# transformed images, equivariance the accuracy after the map `M_g` has brought their features back.

# %%
table = C.curves(nets, S, fit_ds, eval_ds)
summary = R.type_summary(table)
R.plot_curves(table)
pages.show(f"The paper's Figs. 1 and 7 on this run: accuracy (%) on {S.n_eval:,} test images under each test "
           "transform (x), for the type's widest augmented network (blue: equivariance, green: invariance) and the "
           "first baseline (red, black); one network each. Where red stands far above black, the map recovers what "
           "the transformation costs the baseline; grey columns lie beyond the augmented network's training range.")
pages.table(R.readable(summary), f"Per type, the widest augmented network against the baselines (the mean of "
            f"{S.baselines}), mean accuracy in % over the type's grid: invariance, invariance beyond the training "
            "range, the map's gain (equivariance minus invariance) and clean accuracy.")

# %% [markdown]
# ## Wider training ranges (Fig. 2)
#
# Invariance accuracy of each training range of a type against the baseline; the table averages it over the test
# values beyond the narrow network's range.

# %%
ranges = R.range_summary(table)
R.plot_ranges(table)
pages.show("The paper's Fig. 2 on this run: invariance accuracy (%) of each training range of a type (colours, "
           "narrow to wide) and of the first baseline (black) under each test transform; one network each. A wider "
           "range should hold its accuracy further out.")
pages.table(R.readable(ranges), "Mean invariance and equivariance accuracy (%) over the test values beyond the "
            "narrow network's range, for the narrow and the wide network of each type with two ranges.")

# %% [markdown]
# ## The same curves as normalised L2 distances
#
# `1 - L_L2` of the features themselves (dimensions rescaled by their RMS), the measure App. B.2 uses when no
# classifier applies.

# %%
R.plot_curves(table, what="l2")
pages.show(f"The curves above measured as `1 - L_L2`, the normalised distance of the features to those of the "
           f"untransformed image (1: identical), on the same {S.n_eval:,} test images; colours as above.")

# %% [markdown]
# ## Paper vs this run
#
# The claims about what augmentation does are about the transformation types in general: each type gives one
# value (its widest augmented network against the mean of the baselines, on the same grid), and the verdict
# takes a 95 % interval over the types; a single type rests on one trained network, so none is decided alone.
# The claim about the baseline itself takes one value per baseline, a seed of the network trained without
# augmentation. Either needs {glue:text}`n_min` replicates before it can be decisive.

# %%
results.glue(R.report_c1(run, table, acc, C.network_seconds(nets)))
results.glue({"open_questions": R.open_questions(run, S)})
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The paper's networks are CaffeNets trained on 1.2 million ILSVRC photographs or 320,000 RVL-CDIP documents.
# This run trains a small network ({glue:md}`arch`) for {glue:md}`epochs` on {glue:text}`n_train:,`
# images of {glue:md}`dataset`: {glue:md}`family`, measured on a smaller grid with maps fitted on
# {glue:text}`n_fit:,` images and scored on {glue:text}`n_eval:,` others. What it answers:
#
# - **Does training with a transformation make a network more invariant to it, also beyond the training
#   range?** {glue:md}`c1_raises`.
# - **Does the map recover much of what the transformation costs a baseline, for most types but colour?**
#   {glue:md}`c1_gap`.
# - **Does the map add little inside an augmented network's training range?** {glue:md}`c1_collapses`.
# - **Is a network trained on a wider range robust further out?** {glue:md}`c1_wider`.
#
# {glue:md}`open_questions` Each type contributes one trained network, so a claim over types rests on as many
# values as the family has types, however many images each is measured on. On colourised Fashion-MNIST (the
# small profiles' data) garments are centred and upright, so a baseline that never saw a rotation or a shear has
# nothing to fall back on, much like the paper's documents. `-p profile=gpu` reruns the chapter on CIFAR-10
# with two ranges per type, and `paper` on ILSVRC (`-p root=/path/to/imagenet`) or on RVL-CDIP as a folder
# (`-p dataset=folder -p root=/path/to/rvl-cdip`).

# %%
run.close()

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
# # Y1. Your model: how invariant is it, and to what?
#
# The book's chapters measure invariance their papers' ways on the book's own models. This chapter applies every one
# of those measures to **a model and images of your choice**, layer by layer, each through its paper's own
# functions (`invlib.papers.s.yours`, which generalises chapter S1's measures to any model, folder and layer), and
# places the model among models of the book whose training you know. Run it on your own network and folder:
#
# ```
# python -m invlib measure resnet18@my_weights.pt --data my_images
# ```
#
# (or `python -m invlib book --only y1_your_model -p model=... -p data=...`). The model can be a zoo entry
# (`zoo:small_resnet18/standard`), a timm or torchvision name (hub weights, online only), `name@weights-file`,
# `random:name`, `my_nets.py:build` (a function returning a `torch.nn.Module`, for an architecture of your own) or
# one of the book's models (`book:B1/rrc`); the images, `scenes` or a folder `my_images/<class>/<image>`. Every
# number has a 95 % interval **over the images**: it says how sure we are of this model on such images, not of
# models trained alike. There are no claims here and no verdicts: this chapter describes one model.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
model = None  # None: chapter B1's model trained with zoom alone (book:B1/scale); or e.g. "resnet18@weights.pt"
data = None  # None: scenes; a dataset name, or a folder of your images root/<class>/<image>
side = None  # the side the model sees (None: the model's own)
n_images = None  # images measured (half fit A's probe and C's maps, half score them)
layers = None  # e.g. ["layer2", "pre_logits"]; None: the model's stages, found by timm or torchvision
transforms = None  # e.g. ["translation", "zoom", "rotation", "brightness"] (all four)
references = None  # the book's models beside it, e.g. ["book:B1/none", "book:B1/rrc"]
seed = None

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from invlib import results
from invlib.papers.s import yours
from invlib.papers.s import yours_reports as R

S, run = results.open_chapter(yours.settings, globals(), name="y1_your_model")  # named for papermill too
table = yours.measure(S)
results.glue(R.report(run, S, table))
pd.Series(table.attrs["found"], name="what was measured")

# %% [markdown]
# ## What is measured
#
# The model {glue:md}`y1_model` on {glue:md}`y1_n_images` images of {glue:md}`y1_data` at {glue:md}`y1_side` px,
# at the layers {glue:md}`y1_layers`; `pre_logits` is the embedding the classifier reads. Each measure, in two lines
# (the papers' chapters say more):
#
# - **accuracy under T** (%): the share of images still classified right once transformed (paper B's grids, mean over
#   levels {glue:md}`y1_levels`). Accuracies are {glue:md}`y1_accuracy`.
# - **A: probe ranks T**: a linear probe on the layer (averaged over positions) tells which of two views of an image
#   was transformed more; 0.5 is chance, 1 means the layer encodes the transformation (trained on the view pairs of
#   half the images, scored on one pair of each of the other {glue:md}`y1_half`).
# - **B: relative invariance**: how much less a transformation moves an image's representation than the distance to
#   another image (median over images; 1 invariant, 0 no closer than another image). **B: equivariance alignment**:
#   whether the moves of all images share a direction, beyond chance (0).
# - **C: invariance / equivariance**: the transformed image's features, as they are (invariance) or mapped back by a
#   linear map `M_g` fitted on the other half of the images (equivariance), passed through the rest of the network
#   (accuracy, %) or compared with the untransformed features (normalised L2 distance: 0 is the same).
#
# A ranks only zoom and brightness among these transformations; C has no zoom. A and B read a layer averaged over its
# positions (for a ResNet, `pre_logits` is its last stage averaged, so their numbers there repeat the last stage's);
# C maps the whole layer, one map per position. The intervals are Wilson's for shares of images, a bootstrap over
# images for B's median and alignment and for shares over several levels, and Student's t for C's mean distance.

# %% [markdown]
# ## The invariance fingerprint
#
# Each panel is one measure, a transformation per row and a layer per column, the value in each cell (each panel on
# its own colour scale). Read a row from left to right to see where in depth the model becomes invariant.

# %%
R.plot_fingerprint(table)
plt.show()

# %% [markdown]
# ## Among the book's models
#
# The same measures at `pre_logits`, the model (black) beside {glue:md}`y1_references`: chapter B1's small ResNet on
# scenes trained without augmentation, with RandomResizedCrop and with translation alone, and chapter B3's ViT, each
# on the same images at its own side. The bars are 95 % intervals over the images. By B's relative invariance, the
# embedding is most invariant to {glue:md}`y1_most_invariant` and least to {glue:md}`y1_least_invariant`; the book's
# model closest to it under that measure is {glue:md}`y1_closest`.

# %%
R.plot_references(table)
plt.show()

# %% [markdown]
# ## The tables
#
# Each measure as `value [95 % interval]`: a transformation per row, the model's layers and then the references per
# column. The chapter's JSON and these tables as CSV files are beside each other in `results/<profile>/`
# (`y1_your_model.json`, `y1_your_model.csv` with every number, and one `y1_your_model_<measure>.csv` per table).

# %%
for m in R.measures_of(table):
    print(yours.MEASURES[m])
    display(R.wide(table, m))

# %% [markdown]
# What was left out, and why (empty when every measure was taken):

# %%
R.skipped(table)

# %%
run.close()

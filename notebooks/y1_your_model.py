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
from IPython.display import display

from invlib import pages, results
from invlib.papers.s import yours
from invlib.papers.s import yours_reports as R

S, run = results.open_chapter(yours.settings, globals(), name="y1_your_model")  # named for papermill too
table = yours.measure(S)
results.glue(R.report(run, S, table))
found, refs = table.attrs["found"], R.beside(table).query("role == 'reference'")["model"].nunique()

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
#   half the images, scored on one pair of each of the other {glue:md}`y1_half`). The lower, the more invariant.
# - **B: relative invariance**: how much less a transformation moves an image's representation than the distance to
#   another image (median over images; 1 invariant, 0 no closer than another image). **B: equivariance alignment**:
#   whether the moves of all images share a direction, beyond chance (0).
# - **C: invariance / equivariance**: the transformed image's features, as they are (invariance) or mapped back by a
#   linear map `M_g` fitted on the other half of the images (equivariance), passed through the rest of the network
#   (accuracy, %) or compared with the untransformed features (normalised L2 distance: 0 is the same, so the lower,
#   the more invariant). C's invariance accuracy is the same at every layer by construction: the transformed image's
#   features passed unchanged through the rest of the network give the network's own prediction on that image.
#
# A ranks only zoom and brightness among these transformations; C has no zoom. A and B read a layer averaged over its
# positions (for a ResNet, `pre_logits` is its last stage averaged, so their numbers there repeat the last stage's);
# C maps the whole layer, one map per position. The intervals are Wilson's for shares of images, a bootstrap over
# images for B's median and alignment and for shares over several levels, and Student's t for C's mean distance.
# Left out of this run: {glue:md}`y1_skipped`.

# %% [markdown]
# ## The invariance fingerprint
#
# Each panel is one measure against depth, from the first layer measured (left) to the embedding (right), one line
# per transformation. Every panel points the same way: up is more invariant (for the equivariance measures, more
# equivariant); where a smaller number is the more invariant one (A's probe, C's distances) the axis is reversed,
# and its label says so. Read a line from left to right to see where in depth the model becomes invariant, with the
# caveat of the next section for A and B.

# %%
pages.show(f"The invariance fingerprint of `{found['model']}`: each measure (panel) at each layer (x, input side "
           f"left), one line per transformation, with 95 % intervals over the {found['images']} images. Up is more "
           "invariant in every panel (more equivariant for B's alignment and C's equivariance); the axes of A's probe "
           "accuracy and of C's L2 distances are reversed. C's invariance accuracy is flat by construction.",
           R.plot_fingerprint(table))

# %% [markdown]
# ## Why can an early layer look the most invariant?
#
# A and B read each layer averaged over its positions, and a feature map averaged over all its positions is unchanged
# by any rearrangement of them. An early layer's features are local detectors of colour, edges and texture; their
# average over the image is close to the image's colour and texture statistics, which a rotation, a translation or a
# zoom largely keep. So a pooled early layer can score as invariant because the average has forgotten where things
# are, not because its features ignore the transformation (C maps every position, and averages none away).
# Measured on the same images with B's relative invariance: to {glue:md}`y1_pool_transform`, the transformation
# {glue:md}`y1_pool_layer` averaged over positions is most invariant to, it scores {glue:md}`y1_pool_pooled` (the
# fingerprint's number); with every position kept, {glue:md}`y1_pool_kept` ({glue:md}`y1_pool_change`); and the
# images' mean colour alone, three numbers and no network, scores {glue:md}`y1_pool_colour`.

# %%
pooled, facts = R.report_pooling(run, S, table)
results.glue(facts)
if pooled is not None:
    display(pages.table(pooled, f"B's relative invariance of `{pooled.attrs['layer']}` averaged over positions, "
                        "with every position kept, and of the images' mean colour (no network), per transformation; "
                        f"mean over levels {', '.join(map(str, S.levels[1:]))} of the median over {found['images']} "
                        "images."))

# %% [markdown]
# ## Among the book's models
#
# The same measures at `pre_logits`, the model (black) beside {glue:md}`y1_references`, each on the same images at its
# own side. The bars are 95 % intervals over the images, and up is again more invariant in every panel. By B's
# relative invariance, the embedding is most invariant to {glue:md}`y1_most_invariant` and least to
# {glue:md}`y1_least_invariant`; the book's model closest to it under that measure is {glue:md}`y1_closest`.

# %%
pages.show(f"`{found['model']}` (black) beside {refs} model{'s' * (refs != 1)} of the book at `pre_logits` (the "
           f"accuracy: at the output), per measure and transformation, with 95 % intervals over the {found['images']} "
           "images. Up is more invariant (more equivariant, more robust) in every panel; the axes of A's probe "
           "accuracy and of C's L2 distances are reversed.", R.plot_references(table))

# %% [markdown]
# ## The tables
#
# Each measure as `value [95 % interval]`: a transformation per row, the model's layers and then the book's models
# per column. The chapter's JSON and these tables as CSV files are beside each other in `results/<profile>/`
# (`y1_your_model.json`, `y1_your_model.csv` with every number, and one `y1_your_model_<measure>.csv` per table).

# %%
for m in R.measures_of(table):
    display(pages.table(R.wide(table, m), f"{yours.MEASURES[m]}: value [95 % interval over the images]"))
left = R.skipped(table)
if len(left):
    display(pages.table(left, "What was left out, and why"))

# %%
run.close()

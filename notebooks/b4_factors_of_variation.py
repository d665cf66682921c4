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
# # B4. Which transformations explain a dataset?
#
# Sections 4.1-4.4 and App. E of {cite}`bouchacourt2021grounding`. If a transformation is a factor of
# variation of a class, applying it to one image of a same-class pair should make the pair *more* similar.
# The paper pairs training images of the same class (image `i` with image `i + 16` of each batch of 32),
# transforms the second image only, and records the percent change of the pair's cosine similarity in the
# embedding of a ResNet trained *without* augmentation. The pool of transformations is the 63 (operation,
# level) entries of AutoAugment's ImageNet and SVHN policies plus ten rescales (`invlib.papers.b.similarity.POOL`),
# and the policies' two-operation sub-policies.
#
# The operations act as in the authors' code (`search_ops="authors"`): their PIL operations fill what a
# translation, shear or rotation uncovers with grey 128, shear about the top-left corner, and rotate one way
# only. The embedding is the penultimate layer, as the paper says; their code loads the logits. Both choices are
# checked below against the alternative.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # scenes, fashion_mnist_color (the 28 px models) or imagenet (the paper's, with root)
root = None  # folder of your own images
models = None  # {arch: {variant: spec}}; the search uses models[search_arch]["none"] and ["standard"]
seeds = None  # seeds of the none and standard models for Fig. 3A's dampening (the paper: one)
n_search = None  # training images loaded for the search
pairs_per_class = None  # pairs per class
search_ops = None  # "authors" (their PIL operations, the default) | "ours" (centre, black fill, signed rotation)
search_embedding = None  # "penultimate" (the paper, the default) | "logits" (their code)
seed = 0

# %%
from invlib import pages, results
from invlib.papers.b import authors_code as AC
from invlib.papers.b import grounding as B
from invlib.papers.b import grounding_reports as R

S, run = results.open_chapter(B.settings, globals())
x, labels, classes, synsets, boxes = B.search_images(S)
# every search of the chapter at once (the settings' own first, then the alternatives of its last section): each
# operation transforms the images once for every model
configurations = B.search_configurations(S, x, labels, classes)
searches = next(iter(configurations.values()))
n = R.search_numbers(searches)
results.glue(n)
over = f"{n['b4_classes']} classes ({n['b4_pairs']} same-class pairs)"

# %% [markdown]
# ## One transformation for all classes? (Fig. 3A, A3, A5)
#
# The search takes {glue:text}`b4_pairs` pairs of same-class training images over {glue:text}`b4_classes` classes
# (the embeddings of a pair have a mean cosine similarity of {glue:text}`b4_similarity:.3f`) and applies each of the
# {glue:text}`b4_entries` pool entries ({glue:text}`b4_distinct` distinct) and {glue:text}`b4_subpolicies`
# sub-policies to the second image of each pair. Each box is the distribution over classes of an entry's mean
# percent change. A transformation that explains variation across the whole dataset would sit right of the red
# line for every class. Left: the ResNet trained without augmentation (the paper's embedding); right: with standard
# augmentation.

# %%
pages.show(f"Each pool entry's mean percent change of pair similarity, one box per entry over {over}; the red line "
           "is no change. An entry whose whole box lies right of it raises every class's similarity.",
           R.plot_search(searches))

# %% [markdown]
# Fig. A5: the same without translations and rescales, the operations standard augmentation trains on.

# %%
pages.show(f"As above, without translations and rescales: each entry's mean percent change over {over}.",
           R.plot_search(searches, drop=("translateX", "translateY", "rescale")))

# %% [markdown]
# ## Two operations at once (Fig. A4)

# %%
pages.show(f"Each two-operation sub-policy's mean percent change of pair similarity, one box per sub-policy over "
           f"{over}; the red line is no change.", R.plot_search(searches, kind="sub"))

# %% [markdown]
# ## The best transformation per class (Fig. 3B)
#
# Each class's best entry (named on its bar) against the best entry across classes, mean ± SEM over the
# class's pairs.

# %%
pages.show("Per class, the mean percent change of its pairs' similarity under the class's own best entry (blue; "
           "named under the class) and under the best entry across classes (orange), ± the standard error over the "
           "class's pairs, for the ResNet trained without augmentation.", R.plot_top_per_class(searches))
pages.table(R.global_ranking_table(searches, k=10), f"The 10 best entries across classes: mean percent change over "
            f"the {n['b4_classes']} classes' means, and its standard error over classes.")

# %% [markdown]
# ## Invariance learned in training and factors of variation (Fig. 3C)
#
# Computed as the authors' script does: chapter B3's sweep (read from its cache when B3 has run) gives, per
# transformation, the *invariance gap*, the median invariance of the ResNet trained with standard augmentation
# minus the untrained one's, averaged over levels 3-7. Each class's top 5 entries of levels 3-7, ranked by the
# share of pairs they bring closer, then fill slots; a transformation's share of the slots is averaged over the
# transformations whose invariance grew, and over the others. Their script leaves out the operations that have no
# grid in their sweep (colour, sharpness, equalize, autocontrast, invert) and maps every rescale to the zoom-in
# grid, though levels 1-5 zoom out; we follow it (`invlib.papers.b.grounding.FIG3C_GRIDS`).

# %%
gap = B.search_gap(S)
numbers = R.report_search(run, searches, gap, boxes, tuple(x.shape[-2:]), generated=S.dataset == "scenes",
                          seeds=B.seed_searches(S, x, labels, classes))
pages.table(R.fig3c_table(numbers, gap), f"Per sweep grid, the invariance gap (trained with standard augmentation "
            f"minus untrained, levels 3-7) and the slots its pool entries take among the {n['b4_classes']} classes' "
            "top 5 (— for none).")

# %% [markdown]
# ## Where the objects are (App. E.1)
#
# The paper measures foreground boxes (U2Net saliency on ImageNet). The boxes of `scenes` are exact: each is the
# main object's own box, moved and scaled as the object was pasted, so on `scenes` the claim is a deterministic
# check of the data this chapter runs on (sizes spread widely, centres near the middle, as the paper reports for
# ImageNet), not a finding: it could only fail if the generator drew its boxes otherwise. Fashion-MNIST's boxes
# come from thresholding the garment against its black background (`invlib.data.foreground_boxes`), and there the
# claim is measured, with a bootstrap over the images. A folder of your own images has no boxes: the table is
# then empty and the claim is not tested.

# %%
pages.table(R.foreground_table(numbers), f"The foreground boxes of the {len(x)} search images, as fractions of the "
            "frame: their centre (cx, cy), area and side (the square root of the area); mean, its standard error, "
            "standard deviation, and the 5th and 95th percentiles.")

# %% [markdown]
# ## The operations and the embedding: does the verdict depend on them?
#
# The same claims, computed the chapter's way, under the authors' operations and ours (centred shears, black
# fill, rotations of either sign). The third column uses the embeddings of the authors' code: the logits of the
# model trained without augmentation, and the penultimate layer of the standard one. `differs` marks a claim whose
# verdict changes.

# %%
pages.table(R.sensitivity_table(R.log_sensitivity(run, configurations, gap)), "Each claim's verdict under the "
            "authors' operations, ours, and the authors' embedding; `differs`: the verdict changes.")

# %% [markdown]
# ## Our operations and search against the authors' code
#
# `benchmarks/authors/grounding_runs.py` ran the authors' own functions (facebookresearch/grounding-inductive-biases)
# on fixed images of this book and stored their numbers in `invlib/papers/b/authors_grounding.json`. Here our
# implementation computes the same numbers now: each pool entry's mean pixel change (signs fixed to +1), and the
# per-class boosts of a search with one embedding fed to both.

# %%
AC.report(run, "aa_ops", "boosts")

# %% [markdown]
# ## Paper vs this run

# %%
results.glue(numbers["readings"])
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The paper's argument: standard augmentation applies one distribution of transformations to every class,
# but no single transformation explains the variation within every class, while a per-class choice does;
# the useful transformations are mostly appearance changes, and they tend to be those that training made the
# network invariant to. The search embeds the images with one trained model, so most verdicts are about *this
# model*: their intervals run over its same-class image pairs or over its classes, and a maximum over many entries
# or classes is decided on simultaneous (Bonferroni) intervals. Whether augmentation dampens the changes is a claim
# about what training with augmentation does, and rests on seeds: the search is repeated, single operations only,
# with the models of every seed (chapter B3's), each pair compared within its seed.
#
# Of the claims that carry this argument, in short: {glue:md}`b4_reading` The findings box at the top of the
# chapter lists every claim.
#
# At the `cpu` profile the classes are ten Fashion-MNIST objects in `scenes`: each in a random tint, at a random
# place and size over a textured background, with a dimmer object of another class behind half of them. The
# colour changes within a class are synthetic, so appearance operations that touch colour have an easy job;
# position and scale vary as the foreground boxes above show, so translations and rescales can match real
# within-class variation, which they could not on the centred garments of `-p dataset=fashion_mnist_color`.
# The paper's 1,000 ImageNet classes also vary in pose and background.
#
# How the operations fill matters on these scenes. The authors' operations bring in flat grey where a translation,
# shear or rotation uncovers the frame, and a textured scene never contains flat grey. Our first reading brought
# in black, which is closer to the dark edges of a scene. So a geometric operation can cost more similarity under
# the authors' operations, and the appearance operations can gain ground among the top entries. The sensitivity
# table above shows which verdicts that moves, and the alternatives are single operations only (sub-policies
# "not computed"). The "same as the authors' code" rows check that our version of
# their operations is theirs: per entry, the pixel change our operations make against the change theirs made on
# the same images.

# %%
run.close()

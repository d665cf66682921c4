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
# # B3. Invariance across architectures, training and augmentation
#
# Section 3 and App. D of {cite}`bouchacourt2021grounding`. Where does a network's invariance come from: its
# architecture, its training data, or its augmentation? The paper measures the *relative invariance* of an
# embedding (the pooled penultimate layer) to a transformation `T` at magnitudes 0 to 9:
# `(b - d(z, z_T)) / b`, with `d` the cosine distance between an image's embedding and that of its
# transformed version, and `b` the distance to another image's transformed embedding
# (`invlib.metrics.relative_invariance`). 1 means `T` does not move the embedding; 0 means it moves it as far
# as swapping the image for another. It compares a ResNet and a ViT, each untrained, trained without
# augmentation, and trained with standard augmentation (RandomResizedCrop and flips). App. D adds an
# *equivariance* score: are the responses `z - z_T` of different images aligned with each other beyond
# chance (`invlib.metrics.equivariance_alignment`)?

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # scenes, fashion_mnist_color (the 28 px models) or imagenet (the paper's, with root)
root = None  # folder of your own images
models = None  # {arch: {variant: spec}}, e.g. {"ResNet": {"untrained": "random:tv/resnet18"}}
seeds = None  # seeds of every zoo: or random: model (the paper: one model each, hub weights)
untrained_seeds = None  # seeds of the untrained models for the claims on initialisations alone (None: seeds)
grids = None  # transform grids of invlib.papers.b.similarity.GRIDS (default: grounding.SWEEP_GRIDS)
n_probe = None  # probe images (the paper: 300 batches of 32)
seed = 0

# %%
import pandas as pd

from invlib import pages, results
from invlib.papers.b import authors_code as AC
from invlib.papers.b import grounding as B
from invlib.papers.b import grounding_reports as R

S, run = results.open_chapter(B.settings, globals())
x = B.probe_images(S)
results.glue(dict(b3_n_probe=len(x), b3_side=int(x.shape[-1]), b3_dataset=S.dataset))
over = f"{S.seeds} seed{'s' * (S.seeds > 1)}"  # what a caption's means run over

# %% [markdown]
# ## The transformations (Fig. A2)
#
# The paper's grids (its authors' code fixes them; see the reference facts): translation up to the image's
# width, zoom in up to 3.5x, zoom out down to 0.28, rotations and shears that alternate in sign, brightness
# and contrast up to 2x and down to 0, posterize from 8 bits to 0, solarize from no pixel to every pixel. Two more
# grids are swept for chapter B4's Fig. 3C, which maps vertical translations and shears to them: `translate_y`
# and `shear_y`, the paper's translation and shear grids along the other axis. The other operations of
# `invlib.transforms` (colour, blur, noise, flips; no claim or figure of the paper reads them) can be added through
# the `grids` parameter, from the identity to the far end of their range. All act on pixels in [0, 1] before any
# normalisation; the authors' code applied colour operations to normalised tensors, which changed images even at
# level 0.

# %%
pages.show(f"The first probe image of `{S.dataset}` under each of the {len(S.grids)} grids this run sweeps (rows), at "
           "levels 0 (the image itself) to 9 (the largest change, columns).", R.figure_a2(x, S.grids))

# %% [markdown]
# ## Invariance against magnitude (Fig. 2, A3)
#
# One batched pass per (transform, level) over all {glue:text}`b3_n_probe` probe images ({glue:text}`b3_side` px
# images of the {glue:md}`b3_dataset` data), fed to every model. The ViT's embedding is its LayerNorm'd class
# token, as in the authors' code (their ViT-B/16's `forward_features`); the ResNet's is the pooled penultimate layer.
# The ResNets are the zoo's models that papers A and B share (chapter 00 trains them); the ViTs are used by
# this chapter alone, so on a cold cache the next cell trains them first (cached in the zoo afterwards).

# %%
table = B.invariance_table(S, x)
lines = (f"Solid lines: ResNet, dashed: ViT; orange: untrained, blue: trained without augmentation, purple: trained "
         f"with standard augmentation. Each line is the mean over {over} of the median over the "
         f"{len(x)} probe images")
pages.show(f"Relative invariance of each model's embedding to each grid, against the level of the transformation. "
           f"{lines}; the band spans the quartiles. 1: the transformation does not move the embedding; 0: it moves "
           "it as far as swapping the image for another.", R.plot_sweep(table, S.grids))

# %% [markdown]
# ## Equivariance alignment (App. D, Fig. A10)
#
# Higher means the embedding moves in a more consistent direction for every image than when the response
# matrix's columns are shuffled independently; 0 means no alignment beyond chance.

# %%
pages.show(f"Equivariance alignment of each model's responses to each grid, against the level. "
           f"{lines.replace('median', 'alignment')}. Above 0: the images' embeddings move in aligned directions.",
           R.plot_sweep(table, S.grids, column="alignment"))

# %% [markdown]
# ## What training changed
#
# The mean over levels 1-9 of the median invariance, trained without augmentation minus untrained (the mean over
# seeds, each trained model against its own initialisation). Positive: training made the model more invariant to
# that transformation.

# %%
change = {arch: B.training_change(table, arch) for arch in sorted(set(table.arch))}
change_table = pd.DataFrame(change).round(3)
run.log("training_change", change)
pages.table(change_table, f"Trained without augmentation minus untrained: the change of the mean over levels 1-9 of "
            f"the median relative invariance, per grid (rows) and architecture, mean over {over}.")

# %% [markdown]
# ## Why the untrained ResNet ignores darkening
#
# Darkening (the `brightness_down` grid) multiplies every pixel by a factor from 1 down to 0, and no pixel clips.
# At initialisation the ResNet's BatchNorm layers shift nothing (running means and shifts 0, running variances 1)
# and its convolutions have no bias, so every layer, the ReLUs included, maps $a x$ to $a f(x)$ for any $a > 0$:
# the network is positively homogeneous, and a cosine distance does not see $a$. Its relative invariance to
# darkening is then 1 at every level but the last, a black image, whatever the weights. To check that this, and not
# something the architecture prefers, is what the sweep reads, we took the same weights twice on the same probe
# images: as initialised, and with every BatchNorm layer centred on the probe images (its running mean set to the
# mean of its input over them, layer by layer; nothing else changed), which makes the network no longer
# homogeneous.

# %%
check = B.homogeneity_check(S, x, table)
run.log("homogeneity_check", check.to_dict(orient="records"))
results.glue(R.homogeneity_numbers(check, table))
pages.table(R.homogeneity_table(check), f"The ResNet on the {len(x)} probe images, mean over {over}: how far "
            "halving every pixel turns the embedding (the largest 1 − cos over images and seeds; 0 for a positively "
            "homogeneous network) and the relative invariance to darkening (mean over levels 1-9 of the median).")

# %% [markdown]
# Halving the image turns the embedding of the network as initialised by {glue:md}`b3h_turn` (float rounding), and
# that of the centred network by up to {glue:text}`b3h_turn_centred:.2f`. Invariance to darkening falls from
# {glue:text}`b3h_untrained:.3f` to {glue:text}`b3h_centred:.3f`. The model {glue:md}`b3h_trained_label` reads
# {glue:text}`b3h_trained:.3f`: a change of {glue:text}`b3h_change:+.3f` against the network as initialised, but
# {glue:text}`b3h_change_centred:+.3f` against the centred one. So the fall in invariance to darkening that training
# seems to cause is the loss of an exact symmetry of the initialisation, which any network whose BatchNorm layers
# shift loses, a trained one among them; it is not evidence that training lowers an invariance the architecture
# has. The value a shifted untrained network takes depends on its shifts; centring is the shift a BatchNorm layer
# takes from data, and the one measured here. It matters for the claim that training raises invariance to
# appearance changes. {glue:md}`b3h_claim`

# %% [markdown]
# ## Our transformations and measures against the authors' code
#
# `benchmarks/authors/grounding_runs.py` ran the authors' own functions (facebookresearch/grounding-inductive-biases)
# on fixed images and embeddings of this book and stored their numbers in `invlib/papers/b/authors_grounding.json`;
# our implementation computes the same numbers now: each grid's mean pixel change at every level, and the relative
# invariance and alignment of one embedding.

# %%
AC.report(run, "sweep_transforms", "relative_invariance")

# %% [markdown]
# Two differences remain, and we keep ours on purpose. Their sweep's posterize converts a tensor to bytes as
# `x * 100`, not `x * 255`. So level 0 already changes the image, the bits kept are those of a 0-100 scale, and
# one bit leaves every pixel black. Ours posterizes the 0-255 values as the paper describes. Their alignment pairs
# images by one random permutation, which can pair an image with itself, and such a pair adds 0. So their score is
# (n − 1)/n of ours in expectation: visible with the comparison's 16 images, negligible with their 9,600. The
# translations, zooms, rotations, shears and colour changes are theirs to the pixel. The relative invariance is
# theirs to float rounding.

# %% [markdown]
# ## Paper vs this run
#
# "Training" in Fig. 2 is the model trained with standard augmentation (torchvision's ResNet-18, timm's ViT); the
# paper also shows a ResNet trained without augmentation. The translation and zoom claims are therefore tested
# for both: without augmentation − untrained, and standard − untrained. The two claims on untrained networks alone
# need no training, so they have seeds of their own: each untrained seed costs two initialisations and a
# translation sweep, and they average over more of them than the trained claims can afford.

# %%
results.glue(R.report_sweep(run, table, B.untrained_table(S, x)))
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The paper concludes that the training data, more than the architecture or the augmentation, shapes the
# invariances a network learns: training raises invariance to translation and appearance and lowers it to
# rotation and shear, whatever the architecture, while standard augmentation adds only a little translation
# invariance. Each of these statements is about what training (or, for the untrained models, a random
# initialisation) does, so its replicate is a seed: seed k's trained networks start from seed k's untrained one and
# train on seed k's draw of the training scenes, and a difference between two models of one seed says what that
# seed did, not what training does (the claims on untrained networks alone run over
# {glue:md}`b3_untrained_seeds` of initialisation). Over this run's {glue:md}`b3_seeds`, training without augmentation
# changed the mean invariance to translation by {glue:md}`b3_translate`, to rotation by {glue:md}`b3_rotate`, to
# shear by {glue:md}`b3_shear`, and to the appearance changes by {glue:md}`b3_appearance` on average.
# {glue:md}`b3_reading`
#
# At the `cpu` profile the models are the zoo's small ResNet (torchvision's stem) and ViT (14 px patches), trained
# for a few epochs on `scenes` at 56 px: Fashion-MNIST objects that move and change size over a textured
# background, as the paper's ImageNet objects do, so that training *can* teach invariance to translation and
# zoom. `-p dataset=fashion_mnist_color` measures the 28 px models trained on centred garments instead, where
# nothing in the training data moves. Chapter B7 tests that reading directly, over seeds, on scenes
# whose objects vary more and more in position and size. On `gpu` and `paper` the same
# chapter takes hub weights (`tv/resnet18`, timm's ViT-L/16) and an ImageNet folder (`-p root=...`); no
# ResNet-18 trained without augmentation is on the hub, so pass one as `"tv/resnet18@<weights file>"` in
# `models` to measure that variant.

# %%
run.close()

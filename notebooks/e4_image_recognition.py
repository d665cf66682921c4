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
# # E4. Do learned augmentation layers help image recognition?
#
# Section 5.1 of {cite}`rommel2022augnet` trains on CIFAR-10 with a pre-activated ResNet-18 for
# {glue:text}`e4_paper_epochs:d` epochs. It compares the trunk alone, the trunk with fixed augmentations (flip and
# random crop, plus channel normalisation), Augerino, and AugNet with one, two and three augmentation layers.
# Geometric layers offer the five affine operations of chapter E1; the non-geometric layer offers contrast,
# brightness and sample pairing. The paper reports test accuracy per epoch, early-stopped on a validation split (a
# fraction {glue:text}`e4_val:g` of the training set). This run trains on {glue:md}`e4_dataset` with the
# {glue:md}`e4_trunk` trunk for {glue:text}`e4_epochs:d` epochs: on the `cpu` and `smoke` profiles the chapter is a
# small stand-in (Fashion-MNIST and a narrow 4-conv trunk), and the `gpu` and `paper` profiles switch to CIFAR-10
# and a CIFAR-style ResNet-18.
#
# To run it on your own images, pass `-p dataset=folder -p root=/path/to/images` with one subfolder of images per
# class (or `train/` and `test/` folders holding those). The sizes are capped at what the folder holds; a folder
# without a test split gives a fifth of its images to the test set.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # any invlib.data.load name (the paper: cifar10); "folder" for your own images
root = None  # folder of the dataset if it is not found by default (for "folder": <root>/<class>/<image>)
size = None  # image side in pixels; None: the dataset's own (64 for a folder)
n_train = None  # training images before the validation split (capped at what the data hold)
n_test = None  # test images (capped at what the data hold)
epochs = None  # training epochs (the paper: 200)
seed = 0

# %%
from invlib import pages, results
from invlib.papers.e import experiments as E
from invlib.papers.e import experiments_reports as R

S, run = results.open_chapter(E.settings, globals(), experiment="images")
with R.quietly() as log:
    train, val, test = E.image_data(S)
results.glue(R.images_numbers(S, train, val, test))
results.glue({"e4_split": " ".join(line.removeprefix("note: ") for line in log.getvalue().splitlines()
                                   if line.startswith("note:")) or "The test images are the dataset's own test split."})

# %% [markdown]
# ## Six models
#
# The data: {glue:text}`e4_n_train:,d` training images, {glue:text}`e4_n_val:,d` for validation and
# {glue:text}`e4_n_test:,d` for testing. {glue:md}`e4_split` Following the paper's section A.3, the trunk is trained
# with Adam under a cosine schedule, with a weight decay of {glue:text}`e4_wd:g`. The trunk alone, fixed
# augmentation and Augerino use a learning rate of {glue:text}`e4_lr:g`, and Augerino's regulariser has `λ` =
# {glue:text}`e4_augerino_reg:g`. AugNet uses a weight decay of {glue:text}`e4_aug_wd:g` on its augmentation
# parameters, a starting magnitude of {glue:text}`e4_mu0:g`, `λ` of {glue:text}`e4_reg1:g`, {glue:text}`e4_reg2:g`
# and {glue:text}`e4_reg3:g` for one, two and three layers, and a learning rate of {glue:text}`e4_augnet_lr:g` (the
# paper's is {glue:text}`e4_paper_augnet_lr:g`; the small profiles raise it for their few epochs). Augerino and
# AugNet train with one copy of each image and evaluate with {glue:text}`e4_copies:d`. Fixed augmentation is a
# random crop of at least a fraction {glue:text}`e4_crop:g` of the area, resized back, with a horizontal flip. Every
# model starts from the same trunk weights.

# %%
with R.quietly():
    hist = E.train_image_models(S, train, val, test)

# %% [markdown]
# ## Test accuracy per epoch, early-stopped on validation (Figure 7), and training accuracy (Figure B.4)

# %%
R.plot_accuracy(hist)
pages.show(f"Left: the test accuracy of each model at its epoch of best validation accuracy so far (the paper's "
           f"early stopping), after each of the {S.epochs} epochs; right: the training accuracy on the augmented "
           f"inputs. One colour per model, each trained once from seed {S.seed}; {len(test):,} test images. Look for "
           "which model ends highest, and how soon the learned augmentations catch up with the trunk alone.")

# %% [markdown]
# ## What the augmentation layers learned

# %%
learned = R.learned_table(hist).rename(columns={"op": "operation", "max_value": "largest value"})
learned["layer"] = [int(x.removeprefix("layer")) + 1 for x in learned["layer"]]
pages.table(learned, "The operation each AugNet layer selected, and every generator Augerino learned: its layer "
            "(1 is the first), weight, magnitude and the largest value it applies, in its unit (radians for "
            "rotations, fractions of the image size for translations).")

# %% [markdown]
# ## Paper vs this run
#
# The paper's claims are about CIFAR-10 after {glue:text}`e4_paper_epochs:d` epochs. {glue:md}`e4_scope`

# %%
table, facts = R.report_images(run, S, hist)
results.glue(facts)
pages.table(table, f"Each model's early-stopped test accuracy after {S.epochs} epochs (one seed).")

# %%
run.claims_table()

# %% [markdown]
# ## What this run shows
#
# The best early-stopped model here is {glue:md}`e4_best`. Augerino and one-layer AugNet {glue:md}`e4_beats` the
# trunk without augmentation, one run each; the paper reports that both beat it on CIFAR-10 after
# {glue:text}`e4_paper_epochs:d` epochs. The paper's claims about how fast AugNet learns and how high it ends need
# CIFAR-10 and the paper's trunk, that is the `gpu` or `paper` profile, and at least {glue:text}`e4_n_min:d` seeds
# for a verdict.

# %%
run.close()

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
# # Data, transformations and the model zoo
#
# Every later chapter draws on the same four pieces of `invlib`: the datasets, the registry of
# transformations, WordNet, and a zoo of trained models. This chapter shows each of them once, on the run's
# profile, so that a reader knows what the images look like, what "magnitude 7 of shear" means, which
# classes WordNet considers close, and how good the shared models are before any paper's experiment starts.
#
# The papers work on ImageNet. The default `cpu` profile stands in for it with **colourised Fashion-MNIST**:
# the real Fashion-MNIST images (from the Debian package `dataset-fashion-mnist`), each tinted with a hue and
# saturation drawn per image independently of its class, so that colour transformations change something a
# model can see but colour alone cannot predict the label. Run this notebook with another dataset
# (`-p dataset=cifar10`, or `-p dataset=folder -p root=my_images` for a folder `my_images/<class>/<image>` of
# your own) and every cell below follows, the zoo included; sizes shrink to what the data hold.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper: sizes, epochs and device (see the introduction)
dataset = None  # None: the profile's dataset; or e.g. "fashion_mnist", "cifar10", "folder"
root = None  # folder of the dataset: your images as root/<class>/<image> (or root/train/..., root/test/...)
seed = 0  # which images are shown
n_show = 16  # images per grid

# %%
import pandas as pd
import torch

from invlib import data, pages, plots, profiles, results, transforms, wordnet, zoo

S, run = results.open_chapter(profiles.foundations, globals())
P = S.run_profile
_ = torch.manual_seed(S.seed)

# %% [markdown]
# ## The datasets
#
# `data.load(name, split)` returns a `Dataset`: images as `(N, C, H, W)` uint8, labels, class names, the
# WordNet synset of each class and, where the dataset has them, object boxes `x0, y0, x1, y1`. Fashion-MNIST
# has no annotated boxes; `invlib` derives one per image from the foreground (pixels above a small threshold),
# which is what paper A's zoom and aspect-ratio tasks crop around. The red boxes below are those boxes.
# Shown are the test images every zoo model below is scored on (`zoo.splits`: the test split, or for a folder
# without a `test/` sub-folder, images held out from it; the zoo scores on the first `zoo.SCORE_N` of them).

# %%
_, test = zoo.splits(zoo.BOOK[0], P.replace(n_test=min(P.n_test, zoo.SCORE_N)), S.root, train=False)
show = test.subset(min(S.n_show, len(test)), seed=S.seed)
run.log("test_images", len(test))
run.log("classes", len(test.classes))
plots.image_grid(show.images, [show.classes[i] for i in show.labels], show.boxes, size=1.0, fontsize=8)
pages.show(f"{len(show)} of the {len(test):,} test images of `{P.dataset}` ({len(test.classes)} classes, "
           f"{P.img_size} px), each with its class and, in red, its object box. Every zoo model below is scored on "
           "these test images.")

# %% [markdown]
# On Fashion-MNIST, the same images grey and colourised: only the tint differs, and it is drawn from a seed
# that ignores the label.

# %%
if P.dataset.startswith("fashion_mnist"):
    gray, color = (data.load(name, "test", n=8, seed=S.seed) for name in ("fashion_mnist", "fashion_mnist_color"))
    plots.image_grid(torch.cat([gray.images.expand(-1, 3, -1, -1), color.images]),
                     [gray.classes[i] for i in gray.labels] * 2, size=1.0, fontsize=8)
    pages.show(f"The same {len(gray)} test images of Fashion-MNIST, grey (top row) and colourised (bottom row): "
               "only the tint differs, drawn per image whatever its class.")

# %% [markdown]
# ### Scenes: objects that move and change size
#
# Fashion-MNIST garments are centred and fill the frame, on black. Data like that cannot teach a network
# invariance to position or scale, and a random crop of it only zooms into cloth, so the papers' crop and
# translation effects (B's thesis that invariance stems from variation in the data, D's per-image crops) have
# nothing to act on. `data.load("scenes")` composites the same garments onto a larger canvas: the main item's
# position and size are drawn around the middle with spreads shaped like ImageNet's object boxes, the
# background is smooth colour noise, and half the scenes hold a smaller, dimmer item of another class, so a
# crop that shows only that item loses the label. `variation` scales both spreads: 0 is a centred item of one
# size, 1 the ImageNet-like default. Each row below is one level; the red box is the main item's.

# %%
levels = (0.0, 0.5, 1.0, 2.0)
scenes = [data.load("scenes", "test", n=8, seed=S.seed, variation=v) for v in levels]
plots.image_grid(torch.cat([d.images for d in scenes]), [f"v={v:g}: {d.classes[i]}" for v, d in zip(levels, scenes)
                 for i in d.labels], torch.cat([d.boxes for d in scenes]), size=1.0, fontsize=8)
pages.show(f"`scenes` test images at {scenes[0].images.shape[-1]} px, {len(scenes[0])} per row, one row per variation "
           f"({', '.join(f'{v:g}' for v in levels)}, top to bottom), titled by variation and class; the red box is the "
           "main item's. At 0 every item is centred and of one size; position and size spread as the variation grows.")

# %% [markdown]
# The datasets `invlib` knows, and which of them are on this machine. CIFAR-10 and ImageNet need their files
# (the error message of `data.load` says where to put them); `folder` is any directory of class
# sub-folders, i.e. your own data.

# %%
pages.table(data.inventory(), "The datasets `invlib` knows: whether each is on this machine, and where to put its "
            "files if not.")

# %% [markdown]
# ## Transformations at magnitudes 0 to 9
#
# Every transformation the book uses is registered once in `invlib.transforms`, works on a batch
# `(B, C, H, W)` with one magnitude per image, and declares its valid range, its identity and its unit.
# Each row below is a single batched call: the same image at ten magnitudes from the identity (level 0) to
# the far end of the range (level 9). Papers B and C plot invariance against exactly such levels.

# %%
image = show.images[0]
geometric, appearance = transforms.available("geometric"), transforms.available("appearance")
for group, names in (("geometric", geometric), ("appearance", appearance)):
    plots.magnitude_grid(image, names, seed=S.seed)
    pages.show(f"One test image under the {len(names)} {group} transformations (rows), at levels 0 (the identity) to "
               "9 (the far end of each range) left to right; each row's label gives its range and unit.")

# %%
ops = pd.DataFrame([dict(name=n, group=op.group, low=op.low, high=op.high, identity=op.identity, unit=op.unit,
                         what=op.doc) for n in transforms.available() for op in [transforms.get(n)]]).set_index("name")
run.log("transforms", len(ops))
pages.table(ops, f"The {len(ops)} registered transformations: group, valid range, identity, unit and what each does.")

# %% [markdown]
# ## How close are the classes in WordNet?
#
# Paper B asks whether classes that WordNet puts close together also vary in the same ways. The book maps
# each class to a WordNet 3.0 synset (read offline through NLTK) and measures their similarity; the
# Wu-Palmer similarity below is 1 on the diagonal and higher for classes that share a closer ancestor.

# %%
if test.synsets is None:
    from IPython.display import Markdown

    display(Markdown(f"`{P.dataset}` has no map from classes to WordNet synsets: nothing to show."))  # noqa: F821
else:
    wup = wordnet.similarity_matrix(test.synsets, "wup")
    off = wup[~torch.eye(len(wup), dtype=torch.bool).numpy()]
    run.log("wup_offdiag_mean", float(off.mean()))
    plots.heatmap(wup, test.classes, fontsize=8, colorbar_label="Wu-Palmer similarity")
    pages.show(f"Wu-Palmer similarity of the {len(wup)} `{P.dataset}` classes in WordNet 3.0 (1 on the diagonal; "
               f"{off.mean():.2f} on average off it): the lighter a cell, the closer the two classes' nearest "
               "common ancestor.")
    display(pages.table(pd.DataFrame({"class": test.classes, "WordNet synset": test.synsets}).set_index("class"),  # noqa: F821
                        "The WordNet synset each class is mapped to."))

# %% [markdown]
# ## The model zoo
#
# Later chapters probe the same trained models, so they are trained once per profile and cached on disk under
# a hash of their spec (`zoo.Spec`: architecture, data, augmentation, seed, sizes, epochs, optimiser; the book
# trains every model its chapters load before the first chapter runs, and a chapter run alone trains what it
# lacks on first use). This chapter shows the models that several chapters share (`zoo.SHARED`: paper A's two
# chapters): a small ResNet-18 untrained, trained without augmentation and trained with the standard
# RandomResizedCrop + horizontal flip, all on this run's training images. Models that one chapter alone uses come
# from the same zoo: paper A's deeper ResNet-50-like network (bottleneck blocks, on a stride-2 stem) in chapter
# A1; paper B's ResNet-18 and ViT on 56 px `scenes` in chapter B3. Any other family (more seeds, your own
# augmentation) is one `zoo.train_many` call away, in this process or as SLURM jobs (see the README);
# `python -m invlib zoo train` trains every entry the book uses (`zoo.BOOK`).

# %%
rows = zoo.train_all(P, zoo.SHARED, root=S.root, progress=False)
table = pd.DataFrame(rows).set_index("name")[["params", "n_train", "epochs", "test_acc", "train_seconds"]]
table = table.assign(test_acc=100 * table.test_acc).rename(columns=dict(
    params="parameters", n_train="training images", test_acc="test accuracy %", train_seconds="training seconds"))
for r in rows:
    run.log(f"zoo/{r['name']}/test_acc", r["test_acc"])
row = {r["name"]: r for r in rows}
effect = row["small_resnet18/standard"]["test_acc"] - row["small_resnet18/none"]["test_acc"]
results.glue({**{f"acc_{r['name'].replace('/', '_')}": r["test_acc"] for r in rows},
              "n_train": row["small_resnet18/none"]["n_train"], "n_scored": len(test), "chance": 1 / len(test.classes),
              "aug_verdict": "costs accuracy rather than buying it" if effect < 0 else "helps"})
pages.table(table, f"The shared models of the zoo, one training seed each, scored on {len(test):,} test images of "
            f"`{P.dataset}`; the seconds are those of their training, when the zoo trained them.")

# %% [markdown]
# Trained on {glue:text}`n_train:,` images, the small ResNet-18 reaches {glue:text}`acc_small_resnet18_none:.1%`
# accuracy on the {glue:text}`n_scored:,` test images without augmentation and
# {glue:text}`acc_small_resnet18_standard:.1%` with RandomResizedCrop + flip; the untrained network sits near chance
# ({glue:text}`chance:.0%`). Here the standard augmentation {glue:md}`aug_verdict`. On centred garments of one size,
# as in the small profiles' Fashion-MNIST, it is expected to cost accuracy: a random crop of such an object removes
# information that every test image contains. That is one of paper B's points in small: an augmentation helps when
# it matches variation the data have. Each model is one training seed, so this describes these three networks; it
# is not a test.

# %% [markdown]
# ## This run
#
# Every chapter ends by writing its numbers to `results/<profile>/<chapter>.json` (with the torch version,
# the device and the seconds it took) and showing them; chapters that reproduce a paper's table put the
# paper's value beside each of ours.

# %%
pages.table(run.table(only_paper=False)[["this run"]], "What this chapter wrote to its results file.")

# %%
run.close()

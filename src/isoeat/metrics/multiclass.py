r"""Multiclass MAC and RNSB: the two-group metrics of :mod:`isoeat.metrics.formulas` over k >= 2 target groups.

Both pool the target words of every group, so relabelling the words among the groups leaves them unchanged:
they have no permutation p (nor does the literature give one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._cosine import cosine_matrix
from .._errors import ConfigError
from .formulas import Scores, rnsb

__all__ = ["mac_multiclass", "rnsb_multiclass"]


def mac_multiclass(targets: Any, attributes: Any) -> Scores:
    r"""Mean average cosine distance over k target groups and m attribute sets (Manzini, Lim, Black & Tsvetkov
    2019, NAACL; WEFE's ``MAC``).

    .. math::

        \mathrm{MAC} = \frac{1}{|T|}\sum_{t\in T}\frac1m\sum_{j=1}^{m}\frac{1}{|A_j|}\sum_{a\in A_j}
            \bigl(1 - \cos(\vec t, \vec a)\bigr),\qquad T = X_1\cup\dots\cup X_k .

    Each target word counts once (groups of different sizes weigh by their words), each attribute set once
    (sets of different sizes weigh alike). For k = m = 2 this is :func:`~isoeat.metrics.formulas.mac`.
    The per-word value is the inner mean for target word :math:`t`, words in group order.

    Examples
    --------
    >>> T = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])]
    >>> m = mac_multiclass(T, [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])])
    >>> round(m.estimate, 6)  # per word 0.5, 0.5 and 1 - cos 45° = 0.292893: their mean
    0.430964
    """
    if len(targets) < 2 or len(attributes) < 1:
        raise ConfigError(
            f"MAC needs at least 2 target groups and 1 attribute set (got {len(targets)} and {len(attributes)})"
        )
    W = np.vstack([np.asarray(t, dtype=np.float64) for t in targets])
    per_word = np.mean(
        [(1.0 - cosine_matrix(W, np.asarray(a, dtype=np.float64))).mean(axis=1) for a in attributes], axis=0
    )
    return Scores(float(per_word.mean()), per_word)


def rnsb_multiclass(targets: Any, attributes: Any, *, C: float = 1.0) -> Scores:
    r"""Relative negative sentiment bias over k target groups (Sweeney & Najafian 2019, ACL; WEFE's ``RNSB``).

    The attribute sets are exactly two: the first the positive, the second the negative pole. A logistic
    regression (:func:`~isoeat.metrics.formulas.logistic_regression`, L2 with inverse strength ``C``,
    unpenalised intercept, fitted to its optimum on every pole word) gives each target word :math:`w` of every
    group :math:`q(w) = P(\text{negative}\mid\vec w)`; :math:`P(w) = q(w)/\sum_v q(v)` over the pooled target
    words and

    .. math::

        \mathrm{RNSB} = D_{\mathrm{KL}}(P\,\Vert\,U) = \sum_w P(w)\log\bigl(|T|\,P(w)\bigr).

    The same computation as :func:`~isoeat.metrics.formulas.rnsb` on the pooled groups.
    """
    if len(attributes) != 2:
        raise ConfigError(
            f"RNSB trains a classifier of a positive and a negative pole: it needs exactly 2 "
            f"attribute sets (the first positive, the second negative), got {len(attributes)}"
        )
    if len(targets) < 2:
        raise ConfigError(f"RNSB needs at least 2 target groups, got {len(targets)}")
    W = np.vstack([np.asarray(t, dtype=np.float64) for t in targets])
    return rnsb(W, np.asarray(attributes[0], dtype=np.float64), np.asarray(attributes[1], dtype=np.float64), C=C)

r"""The embedding bias metrics as pure, vectorised functions of vectors.

Roles follow WEAT (Caliskan et al. 2017) and R's *sweater* (Chan 2022):
:math:`X` and :math:`Y` are the **target** words that are measured, :math:`A`
and :math:`B` are the two **poles** (attribute sets, groups) that define the
contrast. Every function takes the stacked target vectors
:math:`W = [X; Y]` (rows) and the pole vectors, and returns a
:class:`Scores`: the metric's estimate and, where the metric has them, one
value per target word (X words first).

Signed metrics (RND, RIPA, SemAxis, NAS) have a per-word value :math:`f(w)`
and report the differential

.. math::

    \hat\theta = \operatorname{mean}_{x\in X} f(x) - \operatorname{mean}_{y\in Y} f(y),

which changes sign when X and Y are swapped (their p-values permute the
target words, :mod:`isoeat.metrics.api`). Unsigned metrics (MAC, ECT, direct
bias, RNSB) summarise :math:`X\cup Y` as one set and are unchanged by the swap.

Only inner products, norms and means enter: every metric is unchanged when
all vectors are rotated by the same orthogonal matrix (the invariance the
tests check after ZCA whitening).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._cosine import cosine_matrix, unit_rows, unit_vector
from .._errors import ConfigError, DataFormatError
from ..stats.rank import spearman

__all__ = [
    "Scores",
    "differential",
    "relation_direction",
    "mac",
    "rnd",
    "ect",
    "ripa",
    "semaxis",
    "direct_bias",
    "nas",
    "rnsb",
    "logistic_regression",
    "spearman_p",
]


@dataclass(frozen=True)
class Scores:
    """What a metric formula returns.

    Attributes
    ----------
    estimate : float
        The metric's headline value (see each function).
    per_word : numpy.ndarray
        One value per target word, X words first; empty for ECT.
    p_value : float
        Only where the formula itself defines one (ECT's Spearman test);
        ``nan`` otherwise (permutation p-values are added by the caller).
    extra : dict
        Intermediate quantities for a caller who wants them (ECT's two
        similarity vectors, the RIPA / direct bias direction, direct bias's
        per-word terms :math:`|\\cos(w, g)|^c`, RNSB's model).
    """

    estimate: float
    per_word: np.ndarray
    p_value: float = math.nan
    extra: dict[str, Any] = field(default_factory=dict)


def differential(f: np.ndarray, n_x: int) -> float:
    r""":math:`\operatorname{mean}_X f - \operatorname{mean}_Y f` with the first ``n_x`` values the X words.

    Examples
    --------
    >>> differential(np.array([1.0, 3.0, 0.0, 1.0, 2.0]), 2)
    1.0
    """
    f = np.asarray(f, dtype=np.float64)
    return float(f[:n_x].mean() - f[n_x:].mean())


def _unit(v: np.ndarray, name: str) -> np.ndarray:
    return unit_vector(v, name)


#: The precision word vectors are taken to carry at best: float32's machine epsilon (vectors are stored in
#: float32; a float16 input counts its own). A difference of pairs or poles within twice the worst
#: rounding of that storage is 0: :func:`relation_direction` (no side) and :func:`semaxis` (no axis).
PAIR_PRECISION = float(np.finfo(np.float32).eps)


def _precision(*arrays: Any) -> float:
    """:data:`PAIR_PRECISION`, or the machine epsilon of a coarser floating input (float16)."""
    eps = [float(np.finfo(a.dtype).eps) for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    return max([PAIR_PRECISION, *eps])


def _row_norms(M: np.ndarray) -> np.ndarray:
    return np.asarray(np.linalg.norm(np.asarray(M, dtype=np.float64), axis=1))


def relation_direction(P1: np.ndarray, P2: np.ndarray, *, precision: float | None = None) -> np.ndarray:
    r"""Unit direction of the defining pairs :math:`(p_{1i}, p_{2i})`: first principal component of the centred pairs.

    Bolukbasi et al. (2016, §5) centre each pair on its mean and take the
    first principal component of the :math:`2n` centred vectors
    :math:`\pm(p_{1i}-p_{2i})/2`. Those vectors have mean zero, so this is the
    first right singular vector of the difference matrix
    :math:`D = [p_{1i}-p_{2i}]_i`. With one pair, :math:`g = (p_1-p_2)/\lVert p_1-p_2\rVert`.

    Orientation (a singular vector's sign is arbitrary): :math:`g` agrees with
    the mean pair difference,

    .. math::

        \Bigl\langle \tfrac1n \textstyle\sum_i (p_{1i}-p_{2i}),\ g\Bigr\rangle > 0,

    so the first words lie on the positive side on average. The rule, like
    :math:`D^\top D`, does not depend on the order the pairs are listed in.
    Pairs whose differences sum to 0 on :math:`g` have no positive side and
    are refused (e.g. ``a:b`` with ``b:a``, or two pairs whose differences
    cancel up to the rounding of float32 vectors): 0 is

    .. math::

        \Bigl|\textstyle\sum_i \langle p_{1i}-p_{2i}, g\rangle\Bigr|
        \le \varepsilon \textstyle\sum_i (\lVert p_{1i}\rVert + \lVert p_{2i}\rVert),

    twice the worst storage rounding of that sum, with :math:`\varepsilon`
    = :data:`PAIR_PRECISION` (float32's machine epsilon).

    Examples
    --------
    >>> np.round(relation_direction(np.array([[3.0, 4.0]]), np.array([[0.0, 0.0]])), 12).tolist()
    [0.6, 0.8]
    """
    D = np.asarray(P1, dtype=np.float64) - np.asarray(P2, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] < 1:
        raise ConfigError("the defining pairs must be two matrices with one row per pair")
    if not (np.abs(D).max(axis=1) > 0).all():
        raise ConfigError("a defining pair has two identical vectors: its difference has no direction")
    _, _, vt = np.linalg.svd(D, full_matrices=False)
    g = vt[0]
    proj = D @ g
    side = float(proj.sum())
    eps = _precision(P1, P2) if precision is None else precision
    if abs(side) <= eps * float(_row_norms(P1).sum() + _row_norms(P2).sum()):
        raise ConfigError("the defining pairs have no side: their differences sum to 0 on their principal "
                          "direction (pairs that cancel, such as a:b with b:a); give pairs whose first words "
                          "lie on one side")
    return -g if side < 0 else g


# --------------------------------------------------------------------------- unsigned metrics
def mac(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> Scores:
    r"""Mean average cosine distance (Manzini, Lim, Black & Tsvetkov 2019, NAACL).

    .. math::

        \mathrm{MAC}(T, \{A, B\}) = \frac{1}{|T|}\sum_{t\in T} \frac{1}{2}\sum_{S\in\{A,B\}}
            \frac{1}{|S|}\sum_{s\in S} \bigl(1-\cos(\vec t,\vec s)\bigr),\qquad T = X\cup Y.

    The per-word value is the inner mean for target word :math:`t`. MAC is a
    distance (0: every target word points the same way as every attribute
    word; 1: orthogonal on average); it has no sign and no p-value of its own
    (Manzini et al. compare MAC before and after debiasing with a paired
    t-test over target words, not a test of one space).

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> mac(W, np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])).estimate
    0.5
    """
    per_word = 0.5 * ((1.0 - cosine_matrix(W, A)).mean(axis=1) + (1.0 - cosine_matrix(W, B)).mean(axis=1))
    return Scores(float(per_word.mean()), per_word)


def spearman_p(rho: float, n: int) -> float:
    r"""Two-sided p-value of Spearman's :math:`\rho` by the t approximation (as :func:`scipy.stats.spearmanr`).

    :math:`t = \rho\sqrt{(n-2)/((1-\rho)(1+\rho))}` on :math:`n-2` degrees of
    freedom, :math:`p = 2\,P[T_{n-2} \ge |t|]`; :math:`|\rho| = 1` gives 0.

    Examples
    --------
    >>> round(spearman_p(0.8, 10), 6)
    0.005456
    """
    from scipy.special import stdtr

    if not math.isfinite(rho) or n < 3:
        return math.nan
    if abs(rho) >= 1.0:
        return 0.0
    t = rho * math.sqrt((n - 2) / ((1.0 - rho) * (1.0 + rho)))
    return float(min(1.0, 2.0 * stdtr(n - 2, -abs(t))))


def ect(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> Scores:
    r"""Embedding coherence test (Dev & Phillips 2019, AISTATS, §4.1).

    With the pole means :math:`\bar a`, :math:`\bar b` and the target words
    :math:`w \in X\cup Y`:

    .. math::

        u_A(w) = \cos(\vec w, \bar a),\quad u_B(w) = \cos(\vec w, \bar b),\qquad
        \mathrm{ECT} = \rho_{\mathrm{Spearman}}(u_A, u_B).

    ECT is a coherence in [-1, 1]: 1 when the target words rank the same
    against both poles (no bias), lower when the poles order them differently.
    Unsigned (swapping X and Y changes nothing). Its p-value tests
    :math:`\rho = 0` (:func:`spearman_p`, two-sided); a constant similarity
    vector leaves :math:`\rho` undefined (``nan``).

    Examples
    --------
    >>> W = np.array([[1.0, 0.1], [1.0, 0.5], [1.0, 0.9], [0.2, 1.0]])
    >>> ect(W, np.array([[1.0, 0.0]]), np.array([[1.0, 0.2]])).estimate
    1.0
    """
    u_a = cosine_matrix(W, A.mean(axis=0, keepdims=True))[:, 0]
    u_b = cosine_matrix(W, B.mean(axis=0, keepdims=True))[:, 0]
    try:
        rho = spearman(u_a, u_b)
    except DataFormatError:
        rho = math.nan
    return Scores(rho, np.empty(0), spearman_p(rho, len(u_a)), {"u_a": u_a, "u_b": u_b})


def direct_bias(W: np.ndarray, P1: np.ndarray, P2: np.ndarray, *, c: float = 1.0) -> Scores:
    r"""Direct bias (Bolukbasi, Chang, Zou, Saligrama & Kalai 2016, NeurIPS, §5.2).

    The bias direction :math:`g` is the first principal component of the
    centred defining pairs (:func:`relation_direction`), computed on unit
    vectors as in Bolukbasi et al.'s code (their embedding is normalised
    first). Over the target words :math:`N = X\cup Y`:

    .. math::

        \mathrm{DirectBias}_c = \frac{1}{|N|}\sum_{w\in N} \lvert\cos(\vec w, g)\rvert^{c}.

    ``c`` (default 1) sets how strict the measure is (:math:`c\to 0`: the share
    of words not exactly orthogonal to :math:`g`). The per-word value is the
    signed projection :math:`\cos(\vec w, g)` (positive: towards the first
    word of each pair). Unsigned; no p-value in the literature.

    Examples
    --------
    >>> W = np.array([[3.0, 4.0], [1.0, 0.0]])
    >>> direct_bias(W, np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]])).estimate
    0.8
    """
    g = relation_direction(unit_rows(P1, "pair first words"), unit_rows(P2, "pair second words"),
                           precision=_precision(P1, P2))
    proj = unit_rows(W, "targets") @ g
    terms = np.abs(proj) ** c if c > 0 else (np.abs(proj) > 0).astype(np.float64)  # c = 0: 0 only if orthogonal
    return Scores(float(np.mean(terms)), proj, extra={"direction": g, "terms": terms})


def _sigmoid(m: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * m))  # no overflow for any finite m


def logistic_regression(F: np.ndarray, y: np.ndarray, *, C: float = 1.0, max_iter: int = 100) -> np.ndarray:
    r"""L2-penalised logistic regression, fitted to its optimum by Newton's method.

    Minimises scikit-learn's ``LogisticRegression(C=C)`` objective (L2
    penalty, unpenalised intercept):

    .. math::

        \tfrac12\lVert w\rVert^2 + C\sum_i \Bigl(\log\bigl(1+e^{m_i}\bigr) - y_i m_i\Bigr),\qquad
        m_i = \langle w, f_i\rangle + b,\ y_i\in\{0,1\}.

    The objective is strictly convex, so its minimiser is unique; Newton steps
    (with backtracking) reach it to rounding error in a few iterations, and
    because both the penalty and the steps are rotation-equivariant the
    fitted model rotates with the space (a quasi-Newton solver stopped at a
    tolerance does not: lbfgs at scikit-learn's default ``tol=1e-4`` gave KL
    values 4e-4 apart on two rotated copies of one whitened space).

    Returns
    -------
    numpy.ndarray
        ``(w_1, ..., w_d, b)``.

    Examples
    --------
    >>> theta = logistic_regression(np.array([[-1.0], [1.0]]), np.array([0.0, 1.0]))
    >>> round(float(theta[0]), 6), round(float(theta[1]), 6)  # w = 2C(1 - sigmoid(w)), b = 0
    (0.674832, 0.0)
    """
    F = np.asarray(F, dtype=np.float64)
    Z = np.hstack([F, np.ones((len(F), 1))])
    penalised = np.r_[np.ones(F.shape[1]), 0.0]
    theta = np.zeros(Z.shape[1])

    def objective(t: np.ndarray) -> float:
        m = Z @ t
        return 0.5 * float(t[:-1] @ t[:-1]) + C * float(np.sum(np.logaddexp(0.0, m) - y * m))

    for _ in range(max_iter):
        p = _sigmoid(Z @ theta)
        grad = penalised * theta + C * (Z.T @ (p - y))
        hess = np.diag(penalised) + C * (Z.T * (p * (1.0 - p))) @ Z
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        decrement = float(grad @ step)  # twice the predicted decrease of the objective
        f0 = objective(theta)
        if decrement <= 1e-24 * max(1.0, abs(f0)):
            return theta
        t = 1.0
        if decrement > 1e-12 * max(1.0, abs(f0)):  # far from the optimum: backtrack (Armijo); near it, full steps
            while objective(theta - t * step) > f0 - 1e-4 * t * decrement and t > 1e-12:
                t *= 0.5
        theta = theta - t * step
    raise ConfigError(_not_converged(F, y, theta, C, max_iter))


def _not_converged(F: np.ndarray, y: np.ndarray, theta: np.ndarray, C: float, max_iter: int) -> str:
    """Why the logistic regression of RNSB stopped short, from what its inputs are (not a guess)."""
    if not np.isfinite(F).all():
        return "the logistic regression of RNSB cannot be fitted: the pole words' vectors hold NaN or inf"
    if not np.isfinite(theta).all():
        return (f"the logistic regression of RNSB overflowed with C = {C:g} (its weights are no longer finite); "
                "use a smaller C (--rnsb-c; the default 1 is scikit-learn's)")
    m = F @ theta[:-1] + theta[-1]
    separable = bool(np.all((m > 0) == (y > 0.5)))
    why = (f"the pole words A and B are linearly separable, so with C = {C:g} the L2 penalty hardly bounds the "
           f"weights (|w| = {np.linalg.norm(theta[:-1]):.3g} after {max_iter} Newton steps)" if separable else
           f"C = {C:g}")
    return (f"the logistic regression of RNSB did not reach its exact optimum in {max_iter} Newton steps (isoeat "
            f"fits it exactly, not to a solver's tolerance as lbfgs does, so that RNSB rotates with the space): {why}; "
            "use a smaller C (--rnsb-c; the default 1 is scikit-learn's)")


def rnsb(W: np.ndarray, A: np.ndarray, B: np.ndarray, *, C: float = 1.0) -> Scores:
    r"""Relative negative sentiment bias (Sweeney & Najafian 2019, ACL).

    A logistic regression (:func:`logistic_regression`: scikit-learn's
    ``LogisticRegression(C=C)`` model, L2 penalty, unpenalised intercept,
    fitted exactly) is trained on the pole words, A labelled 0 and B labelled
    1 (B plays the paper's *negative* sentiment). For each target word
    :math:`w\in X\cup Y` it predicts :math:`q(w) = P(B\mid \vec w)`;
    normalised over the target words, :math:`P(w) = q(w)/\sum_v q(v)`, and

    .. math::

        \mathrm{RNSB} = D_{\mathrm{KL}}(P \,\Vert\, U) = \sum_{w} P(w)\log\bigl(|N|\,P(w)\bigr),

    with :math:`U` uniform over the :math:`|N|` target words (0: no target word
    is singled out). The per-word value is :math:`P(w)`. Unsigned; no p-value
    in the literature. Trained on every pole word (no holdout split), so the
    value is deterministic.
    """
    features = np.vstack([A, B])
    labels = np.r_[np.zeros(len(A)), np.ones(len(B))]
    theta = logistic_regression(features, labels, C=C)
    q = _sigmoid(W @ theta[:-1] + theta[-1])
    P = q / q.sum()
    kl = float(np.sum(P * np.log(P * len(P))))
    return Scores(kl, P, extra={"q": q, "coef": theta})


# --------------------------------------------------------------------------- signed metrics
def rnd(W: np.ndarray, A: np.ndarray, B: np.ndarray, n_x: int) -> Scores:
    r"""Relative norm distance (Garg, Schiebinger, Jurafsky & Zou 2018, PNAS).

    With the pole (group) means :math:`\bar a`, :math:`\bar b`:

    .. math::

        f(w) = \lVert \vec w - \bar a\rVert_2 - \lVert \vec w - \bar b\rVert_2 ,

    Garg et al.'s per-word term (their RND of a word list :math:`M` is
    :math:`\sum_{w\in M} f(w)`; WEFE reports the mean). Negative: :math:`w` is
    nearer pole A. The estimate is the differential
    :math:`\operatorname{mean}_X f - \operatorname{mean}_Y f` (negative: X
    nearer A than Y is). Euclidean, so it depends on the vectors' norms.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> rnd(W, np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), 1).per_word.tolist()
    [-5.0, 5.0]
    """
    f = np.linalg.norm(W - A.mean(axis=0), axis=1) - np.linalg.norm(W - B.mean(axis=0), axis=1)
    return Scores(differential(f, n_x), f)


def ripa(W: np.ndarray, P1: np.ndarray, P2: np.ndarray, n_x: int) -> Scores:
    r"""Relational inner product association (Ethayarajh, Duvenaud & Hirst 2019, ACL, §4).

    The relation vector :math:`b` is the unit first principal component of the
    defining pairs (:func:`relation_direction`; for one pair
    :math:`(x-y)/\lVert x-y\rVert`), on the vectors as given (not normalised:
    RIPA keeps the norm on purpose). Per word,

    .. math::

        f(w) = \langle \vec w, b\rangle ,

    positive towards the first word of each pair. The estimate is
    :math:`\operatorname{mean}_X f - \operatorname{mean}_Y f`.

    Examples
    --------
    >>> W = np.array([[2.0, 1.0], [-1.0, 5.0]])
    >>> ripa(W, np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]), 1).estimate
    3.0
    """
    b = relation_direction(P1, P2)
    f = W @ b
    return Scores(differential(f, n_x), f, extra={"direction": b})


def semaxis(W: np.ndarray, P1: np.ndarray, P2: np.ndarray, n_x: int) -> Scores:
    r"""SemAxis (An, Kwak & Ahn 2018, ACL): cosine with the axis between two poles.

    .. math::

        v = \operatorname{mean}_{p\in P_1}\vec p - \operatorname{mean}_{p\in P_2}\vec p,\qquad
        f(w) = \cos(\vec w, v),

    with the poles :math:`P_1`, :math:`P_2` (A and B, or the two sides of the
    defining pairs). Positive: towards :math:`P_1`. An et al.'s augmentation
    of each pole with its nearest neighbours (sweater's ``l``) is not applied
    (``l = 0``). The estimate is :math:`\operatorname{mean}_X f - \operatorname{mean}_Y f`.

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> semaxis(W, np.array([[2.0, 0.0]]), np.array([[0.0, 0.0]]), 1).estimate
    1.0
    """
    m1, m2 = np.asarray(P1, dtype=np.float64).mean(axis=0), np.asarray(P2, dtype=np.float64).mean(axis=0)
    v = m1 - m2
    bound = _precision(P1, P2) * float(_row_norms(P1).mean() + _row_norms(P2).mean())
    if not float(np.linalg.norm(v)) > bound:  # twice the worst float32 rounding of the means' difference
        raise ConfigError("SemAxis: the semantic axis (mean of the first poles minus mean of the second) is the "
                          "zero vector within float32 rounding: the two poles have the same mean (defining pairs "
                          "that cancel, such as he:she with she:he, or the same words on both sides); give poles "
                          "that differ")
    f = unit_rows(W, "targets") @ _unit(v, "semantic axis")
    return Scores(differential(f, n_x), f, extra={"axis": v})


def nas(W: np.ndarray, A: np.ndarray, B: np.ndarray, n_x: int) -> Scores:
    r"""Normalised association score (Caliskan et al. 2017's WEFAT statistic; sweater's ``nas``).

    .. math::

        f(w) = \frac{\operatorname{mean}_{a\in A}\cos(\vec w,\vec a) - \operatorname{mean}_{b\in B}\cos(\vec w,\vec b)}
                    {\operatorname{sd}_{x\in A\cup B}\cos(\vec w,\vec x)}

    with the sample SD (``ddof=1``, R's ``sd``), per target word: SC-WEAT's
    effect size. Positive: nearer A. A word whose cosines to every pole word
    are equal has no score (``nan``). The estimate is
    :math:`\operatorname{mean}_X f - \operatorname{mean}_Y f`.

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 1.0]]); B = np.array([[0.0, 1.0], [-1.0, 1.0]])
    >>> np.round(nas(W, A, B, 1).per_word, 4).tolist()
    [1.5805, -1.1754]
    """
    ca, cb = cosine_matrix(W, A), cosine_matrix(W, B)
    sd = np.std(np.hstack([ca, cb]), axis=1, ddof=1)
    diff = ca.mean(axis=1) - cb.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.nan)
    return Scores(differential(f, n_x), f)

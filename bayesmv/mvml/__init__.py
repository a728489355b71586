"""MVML: multi-view metric learning in vector-valued kernel spaces (Huusari, Kadri, Capponi).

Huusari, Kadri & Capponi (2018) (Algorithm 1, eqs. 6–18). The multi-view kernel is ``K = H A H`` (eq. 5) with
``H = blockdiag(K_1..K_V)`` and a learned block metric ``A``. With the change of variable
``g = A H c`` the problem becomes (7)/(13)

    min_{g, A, w}  ||y - (w' ⊗ I_n) U g||² + λ <g, A⁺ g> + η ||A||_F²      (A ≻ 0)

and MVML alternates a g-step (8/15), an optional w-step (10/17) and an A-step: a gradient
step (9/16) or, for the block-sparse variant (11)/(14), a proximal group-lasso step on the
view-pair blocks (12/18).

One engine serves both of the paper's versions, written in terms of per-view feature blocks
``U_v`` (``n x q``) and a metric ``Ã`` (``Vq x Vq``, view-major blocks):

* full path (Algorithm 1a), used when the Nyström level is ``p = n`` (``nystrom=1.0``):
  ``U_v = K_v`` (the Gram matrix itself) and ``Ã = A``, so (13) *is* (7);
* block-Nyström path (Algorithm 1b, ``p < n``): ``U_v = K_v[:, S] (K_v[S, S]⁺)^{1/2}`` with
  one shared landmark set ``S`` (``bayesmv.kernels.block_nystrom``) and ``Ã = U' A U``. Only
  ``n x p`` kernel columns are ever formed.

Numerics (float64 NumPy/SciPy throughout, LAPACK Cholesky and ``eigh``): MVML is a short host-side
loop of dense factorisations whose per-shape XLA compilation would cost more than the whole
fit (see the benchmark log), so it is not jitted; the kernels come
from ``bayesmv.kernels`` on NumPy arrays, which evaluates them eagerly. For the fixed and block-sparse
metrics the g-step is solved in
whichever of two equivalent forms is smaller — the dual ``c = (M Ã M' + λI)⁻¹ y``,
``g = Ã M' c`` (an ``n x n`` Cholesky) or the primal ``g = L h``, ``(λI + L' M'M L) h = L' M' y``
with ``Ã = L L'`` from ``eigh`` (an ``N x N`` Cholesky, ``N = Vq``); ``M = (w' ⊗ I_n) U``. Both
give ``Ã⁺ g = M' r / λ`` with the
residual ``r``, so the A-step (9/16) needs no inverse at all. No explicit inverse anywhere;
pseudo-inverses by ``eigh``. For the learned metric nothing is factorised per step: after ``k``
A-steps (9)/(16) ``Ã = α Ã0 + Z diag(β) Z'`` (one column ``z`` per step), so ``M Ã M' + λI`` is the
starting kernel ``α M Ã0 M' + λI`` plus a rank-``k`` term. One thin eigendecomposition
``M Ã0 M' = Q diag(s) Q'`` per weight vector (``eigh`` when ``n <= N``, else the SVD of its
``n x N`` factor) puts every trial step in that eigenbasis: a Woodbury solve for ``Q'c`` and the
objective ``λ c'y + η||Ã||²`` in ``O(r k²)``; ``z = M'c`` and ``g = Ãz`` are formed only for an
accepted step. The solver shares the decomposition across outputs (one-vs-rest) and across the
``(λ, η)`` candidates of ``MVMLClassifierCV``, and runs them all in one lockstep batch.

Note (paper §3.5): on the Nyström path the Frobenius regulariser acts on ``Ã``, not on ``A``,
so for ``metric="learn"``/``"sparse"`` a block-Nyström fit with ``p = n`` is a different (equally
valid) problem from the full path; for fixed metrics (``"cov"``, ``"identity"``) the two
coincide. ``nystrom=1.0`` therefore runs the exact full path (as the reference implementation).

Step size: the A-step starts from ``μ0`` (default as the reference implementation:
``0.5``, or ``0.45/η`` when ``η >= 1``; ``μ0 η < ½`` is enforced so ``(1 - 2μη) > 0`` and the
update keeps ``Ã`` symmetric positive definite) and halves ``μ`` until the objective (7)/(13)
— evaluated after the following exact g-step — does not increase. Hence the recorded
objective never increases.

Modules: :mod:`~bayesmv.mvml.estimators` (the classes), :mod:`~bayesmv.mvml.features` (the
feature blocks and decision values), :mod:`~bayesmv.mvml.solver` (Algorithm 1),
:mod:`~bayesmv.mvml.steps` (its steps as pure functions) and :mod:`~bayesmv.mvml.plotting`.
"""

from .estimators import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV
from .plotting import plot_metric
from .steps import (
    METRICS,
    a_step,
    default_step_size,
    g_step,
    group_norms,
    initial_metric,
    mvml_objective,
    prox_group_lasso,
    sparse_a_step,
    w_step,
)

__all__ = [
    "METRICS",
    "MVMLClassifier",
    "MVMLClassifierCV",
    "MVMLRegressor",
    "MVMLRegressorCV",
    "a_step",
    "default_step_size",
    "g_step",
    "group_norms",
    "initial_metric",
    "mvml_objective",
    "plot_metric",
    "prox_group_lasso",
    "sparse_a_step",
    "w_step",
]

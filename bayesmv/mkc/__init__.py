"""Multi-view kernel completion (MKC; Bhadra, Kaski & Rousu 2017).

Completes per-view kernel matrices whose rows/columns are missing for some samples
(NaN rows/columns, or an ``(n_views, n)`` boolean mask), with no view needing to be complete.

Variants (paper §4):

* ``"embd_ht"`` (eq. 24) – per-view reconstruction weights ``A^(m)`` (``K̂ = A_Iᵀ K_II A_I``,
  eq. 1) tied across views by a convex combination ``A^(m) ≈ Σ_l s_ml A^(l)`` (eq. 11–12);
* ``"embd_hm"`` (eq. 23) – one reconstruction matrix shared by every view (eq. 10);
* ``"app"`` (eq. 25) – per-view ``A^(m)``, between-view loss on kernel values (eq. 7–8);
* ``"sdp"`` (eq. 22) – the completed kernels themselves, PSD-constrained, between-view loss
  on kernel values;
* ``"rnd"`` – ``embd_ht`` with the basis fixed to a uniformly drawn subset (§6.1.3).

Solvers (§5, Algorithms 1–3): block-coordinate descent. The A-block (all views at once) takes
one proximal-gradient step with backtracking line search per outer iteration, the prox being
the row-wise group soft-threshold of the ℓ2,1 norm (eq. 26–27, 31–32); the SDP block takes a
projected-gradient step onto the PSD cone (eigh clip) with the same line search (eq. 29). Each
row of S is the simplex-constrained QP (28, 30, 33), solved exactly enough by accelerated
projected gradient with the exact sort-based Euclidean projection onto the simplex.

All arithmetic is float64 (quartic objectives in A; completion errors of 1e-4 % are reported).
The whole fit is one jitted ``lax.while_loop`` and is ``vmap``-able over ``(λ1, λ2)`` — the
benchmark tunes a whole λ grid in one call.

Deviations / choices (documented in the report):

* each view is divided by the mean of its diagonal over the samples seen in every view (all its
  observed samples if fewer than two are seen everywhere) before completion and multiplied
  back afterwards (makes one λ fit views with different kernel scales; §2.2 speaks of normalised
  kernels for the between-view combination);
* ``A`` is initialised by a joint ridge self-representation: each sample's feature maps in the
  views that observe it are regressed, with one weight vector shared by those views, on the
  samples seen in every view (itself left out, so the start is not the identity; ``rnd``: on its
  random basis). This is the authors' "non-diagonal self-representative" start made multi-view;
"""

from .baselines import knn_complete
from .estimators import MKC, complete_views, kernel_features, mkc_lambda_grid
from .solver import METHODS, project_simplex, prox_l21_rows, simplex_qp

__all__ = [
    "MKC",
    "METHODS",
    "complete_views",
    "kernel_features",
    "knn_complete",
    "mkc_lambda_grid",
    "project_simplex",
    "prox_l21_rows",
    "simplex_qp",
]

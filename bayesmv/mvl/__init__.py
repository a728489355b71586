"""MVL: vector-valued multi-view learning with multi-view manifold regularisation.

Minh, Bazzani & Murino (JMLR 2016), §3–7. Problem (9)::

    min_f  1/l sum_i V(y_i, C f(x_i)) + gamma_A ||f||_K^2 + <f, (gamma_B M_B + gamma_W M_W) f>

with the diagonal multi-view kernel ``G(x, t) = diag(k^1, ..., k^m)`` of §7.1 (eq. 93),
``K = G ⊗ R`` with ``R = I`` (the paper's experiments), the combination operator
``C = c^T ⊗ I`` (eq. 52), ``M_B = I ⊗ (M_m ⊗ I)`` (eq. 57, ``M_m = m I - 1 1^T``) and
``M_W = L ⊗ I`` (eq. 63, per-view graph Laplacians).

Notation used throughout: ``N = l + u`` training points (labelled first), ``m`` views, ``d``
outputs. Because ``G`` is diagonal, the coefficient vector ``a`` of Theorem 2 splits per view:
``f^v(x) = k^v(x, X) A[v]`` with ``A`` of shape ``(m, N, d)``. Vectors of length ``m N`` are
stacked *view-major* (block ``v`` holds the ``N`` samples of view ``v``); the paper's
sample-major ordering of eq. (68) is a permutation of it (the tests check eq. (13) literally).

Special case (tested): with ``gamma_B = gamma_W = 0`` the combined output ``C f = sum_v c_v f^v``
ranges over the RKHS of ``sum_v c_v^2 k^v`` with ``||C f||^2 = min sum_v ||f^v||^2`` over the
splits, so MVL-LS is kernel ridge regression with that kernel; for uniform ``c = 1/m`` it is the
average-kernel ridge with ``lam = m gamma_A``. Any gain over the average kernel comes from
``M_B``, ``M_W`` (eq. 57, 63) or a non-uniform ``c``.

Solvers
-------
* Least squares (Theorem 10, eq. 67-68, R = I): ``(H G + l gamma_A I) a = y_C`` with
  ``G = blockdiag(K^v)`` and the symmetric ``H = c c^T ⊗ J + l gamma_B M_m ⊗ I + l gamma_W
  blockdiag(L^v)``. The non-symmetric system is solved without any inverse through the push-through
  identity ``(H G + λ I)^{-1} = (I - H P (P H P + λ I)^{-1} P) / λ`` with ``P = G^{1/2}``
  (per-view ``eigh``): one Cholesky of the symmetric positive definite ``P H P + λ I``. A general
  symmetric output matrix ``R`` (eq. 67 ``B A R + l gamma_A A = Y_C``) is handled by the
  eigen-decomposition of ``R`` (one solve per eigenvalue). For large ``N`` the ``solver="cg"``
  path runs conjugate gradients in the ``G``-inner product (``H G + λ I`` is self-adjoint and
  positive there) using only kernel–vector products (``bayesmv.kernels.kernel_matvec``), never
  an ``N x N`` matrix.
* SVM (Theorems 6/7, 11-13, Corollary 8): ``a = -1/2 (M G + gamma_A I)^{-1} b`` (eq. 22, 77)
  with ``b`` built from the dual variables; the dual Gram is ``Q = 1/2 (J ⊗ c)^T T (J ⊗ c) ⊗ S^T S``
  with ``T = G (M G + gamma_A I)^{-1} = P (P M P + gamma_A I)^{-1} P`` (eq. 25, 78; the factor
  1/2 is fixed by the single-view special case eq. 28). The box-constrained QP (eq. 26/34/36)
  is solved exactly by projected Newton (Bertsekas 1982: Newton step with a Cholesky of the free
  block, scaled gradient on the binding variables, Armijo search along the projection arc),
  warm-started by a Mehrotra interior-point method (for the simplex dual its Newton systems use
  the structure ``S^T S = κ (I - 1 1^T/P)``: one small Cholesky per class + an ``l x l`` Woodbury
  term), instead of the paper's SMO (Appendix A.4); tests check it against L-BFGS-B and via
  strong duality (primal objective (14) = dual optimum).
* Combination operator (§6, eq. 84-92): alternating minimisation; the ``c``-step is the
  sphere-constrained least squares of §6.1 solved by the SVD and the secular equation (89) by
  bisection, covering Theorem 15, both cases of Theorem 16 and the degenerate "hard case".

Modules: :mod:`~bayesmv.mvl.graphs` (manifold regularisers), :mod:`~bayesmv.mvl.least_squares`,
:mod:`~bayesmv.mvl.svm`, :mod:`~bayesmv.mvl.combination` (the solvers),
:mod:`~bayesmv.mvl.selection` (``"auto"`` manifold weights), :mod:`~bayesmv.mvl.fitting` (the
steps of a fit) and :mod:`~bayesmv.mvl.estimators`.
"""

from .combination import sphere_lstsq
from .estimators import MVLClassifier, MVLClassifierCV, MVLRegressor, MVLRegressorCV
from .graphs import between_view_matrix, graph_laplacian, knn_graph, normalized_cut, view_laplacians
from .least_squares import mvl_ls_cg, mvl_ls_loo, mvl_ls_objective, mvl_ls_path, mvl_ls_solve, psd_sqrt
from .selection import choose_by_loo
from .svm import box_qp, mvl_svm_dual_gram, mvl_svm_solve, simplex_coding

__all__ = [
    "MVLClassifier",
    "MVLClassifierCV",
    "MVLRegressor",
    "MVLRegressorCV",
    "between_view_matrix",
    "box_qp",
    "choose_by_loo",
    "graph_laplacian",
    "knn_graph",
    "mvl_ls_cg",
    "mvl_ls_loo",
    "mvl_ls_objective",
    "mvl_ls_path",
    "mvl_ls_solve",
    "mvl_svm_dual_gram",
    "mvl_svm_solve",
    "normalized_cut",
    "psd_sqrt",
    "simplex_coding",
    "sphere_lstsq",
    "view_laplacians",
]

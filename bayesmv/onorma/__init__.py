"""ONORMA / MONORMA: online learning with (multiple) operator-valued kernels, and the batch
operator-valued kernel ridge regression they are compared with (Audiffren & Kadri 2013,
Audiffren and Kadri 2013).

The learned function is ``f_t = Σ_i K(x_i, ·) α_{i,t}`` (eq. 4) with ``α_{t,t} = -η_t ∇_z ℓ(z, y_t)``
at ``z = f_{t-1}(x_t)`` and the decay ``α_{i,t} = (1 - η_t λ) α_{i,t-1}`` (eq. 3, Algorithm 1);
truncation keeps the last ``s`` coefficients (a ring buffer of capacity ``s``). MONORMA
(Algorithm 2) shares the coefficients between kernels ``K^1..K^m``, predicts with
``f = Σ_j δ^j g^j`` and updates the kernel weights by eq. (5) with the ``O(d²)`` norm recursion (6).

Every operator-valued kernel of ``bayesmv.kernels`` is a sum of separable terms
``Σ_l w_l k_l(x, x') T_l`` (``SeparableKernel``, ``SumOfSeparableKernels``, ``nonseparable_kernel``,
``DiagonalMultiViewKernel`` with ``T_v = e_v e_vᵀ`` on view ``v``). The online pass is one compiled
``lax.scan`` over blocks of ``block_size`` stream steps: the scalar kernels between a block and
the coefficient buffer are evaluated once per block as matrix products (``k(X_B, X_buf) @ A @ T``);
the exact per-step recursion of Algorithm 1 then runs inside the block with the ``B x B``
in-block Gram. The result is the same as stepping through Algorithm 1 one sample at a time
(up to rounding). Everything runs in float64.

Modules: :mod:`~bayesmv.onorma.estimators` (ONORMA, MONORMA), :mod:`~bayesmv.onorma.online`
(the compiled pass and the steps around it), :mod:`~bayesmv.onorma.terms` (kernels as
separable terms) and :mod:`~bayesmv.onorma.ridge` (the batch ``OVKRidge``).
"""

from .estimators import MONORMA, ONORMA
from .online import online_pass, ovk_predict
from .ridge import OVKRidge
from .terms import kernel_terms

__all__ = ["MONORMA", "ONORMA", "OVKRidge", "kernel_terms", "online_pass", "ovk_predict"]

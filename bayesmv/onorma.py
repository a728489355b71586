"""ONORMA / MONORMA: online learning with (multiple) operator-valued kernels, and the batch
operator-valued kernel ridge regression they are compared with (Audiffren & Kadri 2013,
paper ``004_…``; DESIGN §8).

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
"""

from __future__ import annotations

import warnings
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.exceptions import NotFittedError

from .base import PersistenceMixin, encode_labels, one_vs_rest_targets, require_targets
from .datasets import (
    SEED_DEPRECATED,
    MultiViewArray,
    check_positive,
    check_random_seed,
    check_targets,
    check_views,
    is_view_list,
)
from .diagnostics import FitTrace
from .kernels import DiagonalMultiViewKernel, Kernel, SeparableKernel, SumOfSeparableKernels

__all__ = ["MONORMA", "ONORMA", "OVKRidge", "kernel_terms", "online_pass", "ovk_predict"]

_LOSSES = ("squared", "hinge", "ovr_hinge")
_SCHEDULES = ("invsqrt", "constant")


# ----------------------------------------------------------------------------------------------
# Kernel structure: every shared operator-valued kernel as a list of separable terms
# ----------------------------------------------------------------------------------------------


def kernel_terms(kernel):
    """Separable terms ``[(k_l, w_l T_l, view_l), ...]`` of an operator-valued kernel, its output
    dimension ``d`` and whether its inputs are multi-view (``view_l`` is ``None`` for single-view
    inputs, else the view index the scalar kernel acts on)."""
    if isinstance(kernel, SeparableKernel):
        return [(kernel.scalar_kernel, np.asarray(kernel.T, dtype=float), None)], kernel.output_dim, False
    if isinstance(kernel, SumOfSeparableKernels):
        terms = []
        for w, k in zip(kernel.weights, kernel.kernels):
            sub, _, mv = kernel_terms(k)
            if mv:
                raise TypeError("sums of multi-view kernels are not supported")
            terms += [(kf, w * T, None) for kf, T, _ in sub]
        return terms, kernel.output_dim, False
    if isinstance(kernel, DiagonalMultiViewKernel):
        m = kernel.output_dim
        if m == 0:
            raise ValueError("DiagonalMultiViewKernel needs one scalar kernel per view")
        terms = []
        for v, kv in enumerate(kernel.kernels):
            if not isinstance(kv, Kernel):
                kv = Kernel(kv) if callable(kv) else None
            if kv is None:
                raise TypeError("DiagonalMultiViewKernel.kernels must be scalar kernels (see get_kernel)")
            E = np.zeros((m, m))
            E[v, v] = 1.0
            terms.append((kv, E, v))
        return terms, m, True
    raise TypeError(
        f"kernel must be an operator-valued kernel from bayesmv.kernels (SeparableKernel, "
        f"SumOfSeparableKernels, nonseparable_kernel(...), DiagonalMultiViewKernel); got {type(kernel).__name__}"
    )


def _prepare_inputs(X, multiview, n_features=None, name="X", owner="the estimator"):
    """Validated float64 inputs as one 2-D array (views concatenated) plus per-view column ranges."""
    if not multiview and (isinstance(X, MultiViewArray) or is_view_list(X)):
        raise ValueError(f"{name} is a list of views but the kernel is single-view; pass one 2-D array")
    views = check_views(X, n_features=n_features, name=name, owner=owner)
    sizes = [V.shape[1] for V in views]
    edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    ranges = tuple((int(edges[v]), int(edges[v + 1])) for v in range(len(views)))
    return np.concatenate(views, axis=1) if len(views) > 1 else views[0], tuple(sizes), ranges


def _static_terms(terms, ranges, n_views):
    """Static description for jit: scalar kernels and column ranges (hashable)."""
    kfns, cols = [], []
    for kf, _, view in terms:
        if view is not None and view >= n_views:
            raise ValueError(f"the kernel needs view {view} but the input has {n_views} view(s)")
        kfns.append(kf)
        cols.append(None if view is None else ranges[view])
    return tuple(kfns), tuple(cols)


def _kern(kfn, col, X1, X2):
    if col is not None:
        X1, X2 = X1[:, col[0] : col[1]], X2[:, col[0] : col[1]]
    return kfn(X1, X2)


# ----------------------------------------------------------------------------------------------
# Pure JAX core
# ----------------------------------------------------------------------------------------------


def _loss_grad(loss, f, y):
    """``∇_z ℓ(z, y)`` at ``z = f``: squared ``½||z - y||²``; Crammer–Singer multi-class hinge
    ``max(0, 1 - z_y + max_{r≠y} z_r)`` (``y`` one-hot); one-vs-rest hinge ``Σ_c max(0, 1 - y_c z_c)``
    (``y`` in ±1)."""
    if loss == "squared":
        return f - y
    if loss == "hinge":
        other = jnp.where(y > 0, -jnp.inf, f)
        r = jnp.argmax(other)
        active = (f @ y - other[r]) < 1.0
        return jnp.where(active, jax.nn.one_hot(r, f.shape[0], dtype=f.dtype) - y, 0.0)
    # ovr_hinge
    return jnp.where(y * f < 1.0, -y, 0.0)


@partial(jax.jit, static_argnames=("kfns", "cols", "groups", "n_groups", "loss", "adapt", "trunc", "block"))
def online_pass(
    Xbuf,
    A,
    times,
    t0,
    delta,
    gamma,
    TW,
    lam,
    r,
    Xc,
    Yc,
    etas,
    valid,
    *,
    kfns,
    cols,
    groups,
    n_groups,
    loss,
    adapt,
    trunc,
    block,
):
    """One compiled pass of Algorithm 1 (``adapt=False``) or Algorithm 2 (``adapt=True``) over a chunk.

    State: input buffer ``Xbuf (cap, p)``, coefficients ``A (cap, d)`` (``α_{i,t0}``), the 1-based
    stream index stored in each slot ``times (cap,)`` (0 = empty), ``t0`` steps done, kernel
    weights ``delta (m,)`` and squared RKHS norms ``gamma (m,)`` of ``g^j`` (eq. 6). ``TW (L, d, d)``:
    the weighted output matrices ``w_l T_l``; term ``l`` belongs to kernel ``groups[l]``.
    The chunk ``Xc (n, p)``, ``Yc (n, d)``, ``etas (n,)``, ``valid (n,)`` has ``n`` a multiple of
    ``block``; padded steps have ``eta = 0`` and ``valid = False`` and change nothing.
    ``trunc``: ``None`` or the budget ``s`` (then ``cap == s`` and ``block <= s``): a ring buffer.
    Returns the new state and per-step ``f_{t-1}(x_t)``, ``δ_t`` and ``γ_t``.
    """
    cap, d = A.shape
    n = Xc.shape[0]
    nb = n // block
    L = len(kfns)
    Gm = jnp.asarray(np.eye(n_groups)[list(groups)], dtype=A.dtype)  # (L, m) term -> kernel
    ks = jnp.arange(block)
    page = cap if (trunc is not None or cap <= 512 or cap % 512) else 512
    n_pages = cap // page

    def block_step(carry, blk):
        Xbuf, A, times, t0, delta, gamma = carry
        Xb, Yb, eb, vb = blk
        # Old coefficients' contribution to g^j(x) at every step of the block (matrix products),
        # page by page over the filled part of the buffer only (slots fill from 0 upwards).
        n_fill = jnp.minimum(n_pages, (t0 + page - 1) // page)

        def page_step(pg, acc):
            Xp = jax.lax.dynamic_slice_in_dim(Xbuf, pg * page, page)
            Ap = jax.lax.dynamic_slice_in_dim(A, pg * page, page)
            if trunc is not None:  # alive at time t-1 = t0 + k: index i > t0 + k - s (Algorithm 1, step 3)
                tp = jax.lax.dynamic_slice_in_dim(times, pg * page, page)
                mask = tp[None, :] > (t0 + ks)[:, None] - trunc
            out = []
            for term in range(L):
                Ko = _kern(kfns[term], cols[term], Xb, Xp)
                if trunc is not None:
                    Ko = jnp.where(mask, Ko, 0.0)
                out.append(Ko @ Ap)
            return acc + jnp.stack(out)

        kA = jax.lax.fori_loop(0, n_fill, page_step, jnp.zeros((L, block, d), A.dtype))  # (L, B, d)
        gold = jnp.einsum("lbd,lde,lj->bje", kA, TW, Gm)  # (B, m, d)
        kin = [_kern(kfns[term], cols[term], Xb, Xb) for term in range(L)]
        kin = jnp.stack(kin)  # (L, B, B)
        kdiag = jnp.diagonal(kin, axis1=1, axis2=2)  # (L, B)

        def step(c, inp):
            Ablk, cdec, delta, gamma = c
            k, y, eta, v, go = inp
            vin = jnp.einsum("lb,bd,lde->le", kin[:, k, :], Ablk, TW)  # in-block part, per term
            g = cdec * go + Gm.T @ vin  # g^j_{t-1}(x_t), (m, d)
            f = delta @ g  # f_{t-1}(x_t)
            alpha = -eta * _loss_grad(loss, f, y)  # new coefficient α_{t,t}
            dec = 1.0 - eta * lam  # decay of the old coefficients
            Ablk = (Ablk * dec).at[k].set(alpha)
            # eq. (6): ||g_t||² = (1-ηλ)² ||g_{t-1}||² + <K(x_t,x_t) α, α> + 2 (1-ηλ) <g_{t-1}(x_t), α>
            quad = Gm.T @ (kdiag[:, k] * jnp.einsum("d,lde,e->l", alpha, TW, alpha))
            gamma_new = dec**2 * gamma + quad + 2.0 * dec * (g @ alpha)
            gamma = jnp.where(v, gamma_new, gamma)
            if adapt:  # Algorithm 2, step 2.2 / eq. (5)
                z = jnp.maximum(delta**2 * gamma, 0.0)
                den = jnp.sum(z ** (r / (r + 1.0))) ** (1.0 / r)
                ok = v & (den > 0)
                delta = jnp.where(ok, z ** (1.0 / (r + 1.0)) / jnp.where(den > 0, den, 1.0), delta)
            return (Ablk, cdec * dec, delta, gamma), (f, delta, gamma)

        init = (jnp.zeros((block, d), A.dtype), jnp.ones((), A.dtype), delta, gamma)
        (Ablk, cdec, delta, gamma), outs = jax.lax.scan(step, init, (ks, Yb, eb, vb, gold))
        idx = jnp.where(vb, (t0 + ks) % cap, cap)  # padded steps write nowhere
        A = (A * cdec).at[idx].set(Ablk, mode="drop")
        Xbuf = Xbuf.at[idx].set(Xb, mode="drop")
        times = times.at[idx].set(t0 + ks + 1, mode="drop")
        t0 = t0 + jnp.sum(vb)
        return (Xbuf, A, times, t0, delta, gamma), outs

    xs = (
        Xc.reshape(nb, block, -1),
        Yc.reshape(nb, block, d),
        etas.reshape(nb, block),
        valid.reshape(nb, block),
    )
    state, (F, D, Gam) = jax.lax.scan(block_step, (Xbuf, A, times, t0, delta, gamma), xs)
    return state, F.reshape(n, d), D.reshape(n, -1), Gam.reshape(n, -1)


@partial(jax.jit, static_argnames=("kfns", "cols", "groups", "n_groups"))
def ovk_predict(Xbuf, A, TW, delta, Xq, *, kfns, cols, groups, n_groups):
    """``f(x) = Σ_j δ^j Σ_{l ∈ j} w_l k_l(x, X_buf) A T_l`` for the rows of ``Xq``."""
    out = jnp.zeros((Xq.shape[0], A.shape[1]), A.dtype)
    for term in range(len(kfns)):
        out = out + delta[groups[term]] * ((_kern(kfns[term], cols[term], Xq, Xbuf) @ A) @ TW[term])
    return out


def _predict_rows(Xbuf, A, TW, delta, Xq, static, chunk=2048):
    """Row-blocked prediction (bounded memory; one compile per chunk size)."""
    n = Xq.shape[0]
    size = min(chunk, 1 << max(0, (n - 1).bit_length()))
    outs = []
    for s in range(0, n, size):
        Xb = Xq[s : s + size]
        m = Xb.shape[0]
        if m < size:
            Xb = np.concatenate([Xb, np.zeros((size - m, Xq.shape[1]))])
        outs.append(np.asarray(ovk_predict(Xbuf, A, TW, delta, jnp.asarray(Xb), **static))[:m])
    return np.concatenate(outs)


# ----------------------------------------------------------------------------------------------
# Estimators
# ----------------------------------------------------------------------------------------------


def _next_pow2(n):
    return 1 << max(0, int(n - 1).bit_length())


def _check_targets(Y, n, name="Y"):
    Y = check_targets(Y, name)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] != n:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n} samples")
    return Y


class _OnlineOVK(PersistenceMixin, MultiOutputMixin, BaseEstimator):
    """Shared machinery of ONORMA and MONORMA (one or several kernels sharing the coefficients)."""

    _adapt = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # a regressor or a classifier, as ``loss`` says
        return tags

    # -- parameters -----------------------------------------------------------------------------
    def _kernel_list(self, d):
        raise NotImplementedError

    def _check_params(self):
        check_positive("lam", self.lam, allow_zero=True)
        check_positive("eta0", self.eta0)
        if self.loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {self.loss!r}")
        if not (callable(self.schedule) or self.schedule in _SCHEDULES):
            raise ValueError(
                f"schedule must be one of {_SCHEDULES} or a callable t -> eta_t, got {self.schedule!r}"
            )
        if self.truncation is not None:
            check_positive("truncation", self.truncation, integer=True)
        check_positive("block_size", self.block_size, integer=True)

    def _etas(self, t_start, n):
        t = np.arange(t_start + 1, t_start + n + 1)
        if self.schedule == "invsqrt":
            eta = self.eta0 / np.sqrt(t)
        elif self.schedule == "constant":
            eta = np.full(n, float(self.eta0))
        else:
            eta = np.asarray(self.schedule(t), dtype=float)
            if eta.shape != (n,):
                raise ValueError(f"schedule(t) must return one rate per step (shape ({n},)), got {eta.shape}")
        if not np.all(np.isfinite(eta)) or np.any(eta <= 0):
            raise ValueError("the learning-rate schedule must give finite rates eta_t > 0")
        if np.any(eta * self.lam >= 1.0):
            raise ValueError(
                "eta_t * lam must be < 1 (Algorithm 1); "
                f"got max {float(np.max(eta * self.lam)):.3g} — lower eta0 or lam"
            )
        return eta

    # -- targets --------------------------------------------------------------------------------
    def _encode_targets(self, y, n, first, classes=None):
        if self.loss == "squared":
            Y = _check_targets(y, n)
            if not first and Y.shape[1] != self.n_outputs_:
                raise ValueError(f"Y has {Y.shape[1]} outputs but earlier chunks had {self.n_outputs_}")
            return Y
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(
                f"y must be 1-D labels of length {n} for loss={self.loss!r}, got shape {y.shape}"
            )
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("y contains NaN or inf")
        if first:
            if classes is not None:
                cls, _ = encode_labels(np.asarray(classes))
            else:
                cls, _ = encode_labels(y)
            self.classes_ = cls
        cls = self.classes_
        pos = np.searchsorted(cls, y)
        pos = np.clip(pos, 0, len(cls) - 1)
        if not np.all(cls[pos] == y):
            bad = y[cls[pos] != y][0]
            raise ValueError(
                f"y contains the label {bad!r} not in classes_ {list(cls)}; pass classes= on the first partial_fit"
            )
        if self.loss == "hinge":
            return np.eye(len(cls))[pos]
        return one_vs_rest_targets(pos, len(cls))

    # -- fitting --------------------------------------------------------------------------------
    def _init_state(self, X, Y):
        d = Y.shape[1]
        kernels = self._kernel_list(d)
        terms, groups, mv = [], [], None
        for j, K in enumerate(kernels):
            tj, dj, mvj = kernel_terms(K)
            if dj != d:
                raise ValueError(
                    f"kernel {j} has output dimension {dj} but the targets need {d} "
                    f"({'n_classes' if self.loss != 'squared' else 'Y columns'})"
                )
            if mv is not None and mvj != mv:
                raise ValueError("kernels must be all single-view or all multi-view")
            mv = mvj
            terms += tj
            groups += [j] * len(tj)
        self._multiview = mv
        self.n_outputs_ = d
        self.n_kernels_ = len(kernels)
        self._TW = np.stack([T for _, T, _ in terms])
        self._terms = terms
        self._groups = tuple(groups)
        p = X.shape[1]
        cap = int(self.truncation) if self.truncation is not None else 64
        self.X_buffer_ = np.zeros((cap, p))
        self.coef_ = np.zeros((cap, d))
        self.support_times_ = np.zeros(cap, dtype=np.int64)
        self.n_steps_ = 0
        self.delta_ = np.full(self.n_kernels_, 1.0 / self.n_kernels_) if self._adapt else np.ones(1)
        self.gamma_ = np.zeros(self.n_kernels_)
        self.online_predictions_ = np.zeros((0, d))
        self.errors_ = np.zeros(0)
        self.losses_ = np.zeros(0)
        if self._adapt:
            self.kernel_weights_ = np.zeros((0, self.n_kernels_))
        self.rkhs_norms_sq_ = np.zeros((0, self.n_kernels_))

    def _static(self):
        kfns, cols = _static_terms(self._terms, self._ranges, len(self.n_features_per_view_))
        return dict(kfns=kfns, cols=cols, groups=self._groups, n_groups=self.n_kernels_)

    def partial_fit(self, X, y, classes=None):
        """Consume one stream chunk (state carries over between calls)."""
        require_targets(self, y)
        first = not hasattr(self, "n_steps_")
        if first:
            self._check_params()
        mv = self._multiview if not first else self._input_multiview()
        fitted = None if first else self.n_features_per_view_
        Xa, sizes, ranges = _prepare_inputs(X, mv, fitted, owner=type(self).__name__)
        n = Xa.shape[0]
        Y = self._encode_targets(y, n, first, classes)
        if first:
            self._y_1d = self.loss == "squared" and np.ndim(y) == 1
            self.n_features_per_view_ = sizes
            self.n_features_in_ = sum(sizes)
            self._ranges = ranges
            self._init_state(Xa, Y)
        etas = self._etas(self.n_steps_, n)
        # capacity: fixed budget s, or the stream length rounded up to a power of two
        if self.truncation is None and self.n_steps_ + n > self.coef_.shape[0]:
            cap = _next_pow2(self.n_steps_ + n)
            grow = cap - self.coef_.shape[0]
            self.X_buffer_ = np.pad(self.X_buffer_, ((0, grow), (0, 0)))
            self.coef_ = np.pad(self.coef_, ((0, grow), (0, 0)))
            self.support_times_ = np.pad(self.support_times_, (0, grow))
        block = int(min(self.block_size, self.truncation or self.block_size))
        npad = -n % block
        valid = np.concatenate([np.ones(n, bool), np.zeros(npad, bool)])
        Xc = np.concatenate([Xa, np.zeros((npad, Xa.shape[1]))])
        Yc = np.concatenate([Y, np.zeros((npad, Y.shape[1]))])
        eta_c = np.concatenate([etas, np.zeros(npad)])
        r = float(getattr(self, "r", 1.0))
        state, F, D, Gam = online_pass(
            jnp.asarray(self.X_buffer_),
            jnp.asarray(self.coef_),
            jnp.asarray(self.support_times_),
            jnp.asarray(self.n_steps_, dtype=jnp.int64),
            jnp.asarray(self.delta_),
            jnp.asarray(self.gamma_),
            jnp.asarray(self._TW),
            float(self.lam),
            r,
            jnp.asarray(Xc),
            jnp.asarray(Yc),
            jnp.asarray(eta_c),
            jnp.asarray(valid),
            loss=self.loss,
            adapt=self._adapt,
            trunc=None if self.truncation is None else int(self.truncation),
            block=block,
            **self._static(),
        )
        F = np.asarray(F)[:n]
        bad = ~np.isfinite(F).all(axis=1)
        if bad.any() or not np.isfinite(np.asarray(state[1])).all():
            step = self.n_steps_ + int(np.argmax(bad)) + 1 if bad.any() else self.n_steps_ + n
            raise ValueError(
                f"{type(self).__name__} diverged (non-finite prediction at stream step {step}); "
                "lower eta0 or rescale the inputs/kernel so that eta_t * ||K(x, x)|| < 2"
            )
        if np.abs(F).max(initial=0.0) > 1e6 * max(1.0, np.abs(Y).max(initial=0.0)):
            warnings.warn(
                f"{type(self).__name__}: online predictions reached {np.abs(F).max():.3g}, over 1e6 times the "
                "targets — the steps are too large (eta_t * ||K(x, x)|| >= 2); lower eta0 or rescale the inputs",
                RuntimeWarning,
                stacklevel=2,
            )
        Xbuf, A, times, t_end, delta, gamma = (np.asarray(s) for s in state)
        self.X_buffer_, self.coef_, self.support_times_ = Xbuf, A, times
        self.n_steps_ = int(t_end)
        self.delta_, self.gamma_ = delta, gamma
        self.online_predictions_ = np.concatenate([self.online_predictions_, F])
        self.errors_ = np.concatenate([self.errors_, self._step_error(F, Y)])
        self.losses_ = np.concatenate([self.losses_, self._step_loss(F, Y)])
        if self._adapt:
            self.kernel_weights_ = np.concatenate([self.kernel_weights_, np.asarray(D)[:n]])
        self.rkhs_norms_sq_ = np.concatenate([self.rkhs_norms_sq_, np.asarray(Gam)[:n]])
        self._set_trace()
        return self

    def _input_multiview(self):
        for K in self._kernel_list(None):
            _, _, mv = kernel_terms(K)
            return mv
        return False

    def fit(self, X, y, classes=None):
        """Learn from the whole stream ``(X, y)`` in order (shuffled first if ``shuffle``)."""
        require_targets(self, y)
        for attr in ("n_steps_", "classes_"):
            if hasattr(self, attr):
                delattr(self, attr)
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        if isinstance(X, MultiViewArray):
            X = X.views
        if self.shuffle:
            views = check_views(X, name="X")  # one 2-D array is one view
            perm = np.random.default_rng(self.random_seed_).permutation(len(views[0]))
            X = [V[perm] for V in views] if is_view_list(X) else views[0][perm]
            y = np.asarray(y)[perm]
        return self.partial_fit(X, y, classes)

    def _step_error(self, F, Y):
        if self.loss == "squared":
            return np.sum((F - Y) ** 2, axis=1)
        return (self._labels_from_scores(F) != self._labels_from_scores(Y, targets=True)).astype(float)

    def _step_loss(self, F, Y):
        if self.loss == "squared":
            return 0.5 * np.sum((F - Y) ** 2, axis=1)
        if self.loss == "hinge":
            zy = np.sum(F * Y, axis=1)
            other = np.max(np.where(Y > 0, -np.inf, F), axis=1)
            return np.maximum(0.0, 1.0 - zy + other)
        return np.sum(np.maximum(0.0, 1.0 - Y * F), axis=1)

    def _labels_from_scores(self, F, targets=False):
        if F.shape[1] == 1:
            return (F[:, 0] > 0).astype(int)
        return np.argmax(F, axis=1)

    @property
    def cumulative_error_(self):
        """Running mean of the per-step error ``||f_{t-1}(x_t) - y_t||²`` (online MSE, §5); for
        classification losses the running mistake rate."""
        self._check_fitted()
        return np.cumsum(self.errors_) / np.arange(1, len(self.errors_) + 1)

    def _set_trace(self):
        steps = np.arange(1, len(self.losses_) + 1)
        prev_norm = np.concatenate([[0.0], (self.rkhs_norms_sq_ @ self._delta_for_norm())[:-1]])
        r_inst = self.losses_ + 0.5 * self.lam * prev_norm
        traces = {
            "objective": np.cumsum(r_inst) / steps,
            "loss": self.losses_,
            "cumulative_error": np.cumsum(self.errors_) / steps,
            "rkhs_norm_sq": self.rkhs_norms_sq_.sum(axis=1),
        }
        estimates = {"coef": self.coef_[self.support_times_ > 0]}
        if self._adapt:
            estimates["kernel_weights"] = self.delta_
            for j in range(self.n_kernels_):
                traces[f"kernel_weight_{j}"] = self.kernel_weights_[:, j]
        self.fit_trace_ = FitTrace(
            estimates=estimates, traces=traces, converged=None, method=type(self).__name__
        )

    def _delta_for_norm(self):
        # ONORMA: ||f||² = γ; MONORMA: the paper's objective penalises Σ_j ||g^j||² (kept simple)
        return np.ones(self.n_kernels_)

    def _check_fitted(self):
        if not hasattr(self, "n_steps_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' or 'partial_fit' first."
            )

    # -- prediction -----------------------------------------------------------------------------
    def decision_function(self, X):
        """``f_T(x)`` for the rows of ``X`` (``(n, d)``), ``f_T`` the function after the last step."""
        self._check_fitted()
        Xa, _, _ = _prepare_inputs(X, self._multiview, self.n_features_per_view_, owner=type(self).__name__)
        # the whole buffer (empty slots hold zero coefficients): its power-of-two size keeps compiles rare
        return _predict_rows(
            jnp.asarray(self.X_buffer_),
            jnp.asarray(self.coef_),
            jnp.asarray(self._TW),
            jnp.asarray(self.delta_),
            Xa,
            self._static(),
        )

    def predict(self, X):
        """Vector-valued predictions (``loss='squared'``) or class labels (hinge losses)."""
        F = self.decision_function(X)
        if self.loss == "squared":
            return F[:, 0] if getattr(self, "_y_1d", False) else F
        return self.classes_[self._labels_from_scores(F)]

    def score(self, X, y):
        """R² averaged over outputs (regression) or accuracy (classification)."""
        from sklearn.metrics import accuracy_score, r2_score

        pred = self.predict(X)
        if self.loss == "squared":
            return r2_score(np.asarray(y, dtype=float).reshape(pred.shape), pred)
        return accuracy_score(y, pred)


class ONORMA(_OnlineOVK):
    """Online learning with an operator-valued kernel (Algorithm 1, eqs. 1–4).

    Parameters
    ----------
    kernel : operator-valued kernel from ``bayesmv.kernels`` (``SeparableKernel``,
        ``SumOfSeparableKernels``, ``nonseparable_kernel(mu, d)``, ``DiagonalMultiViewKernel``);
        ``None``: a Gaussian kernel times the identity (independent outputs).
    lam : float, λ >= 0 (regulariser; decay ``1 - η_t λ``, needs ``η_t λ < 1``).
    eta0 : float, η in the schedule.
    schedule : ``"invsqrt"`` (η_t = η/√t, §5), ``"constant"`` or a callable mapping the 1-based
        step array ``t`` to rates.
    truncation : None or int ``s``: keep only the last ``s`` coefficients (ring buffer).
    loss : ``"squared"`` (½||z - y||², vector-valued regression), ``"hinge"`` (Crammer–Singer
        multi-class hinge, one output per class) or ``"ovr_hinge"`` (one-vs-rest hinge on ±1
        targets; one output for two classes).
    shuffle, random_state : ``fit`` permutes the stream with ``random_state`` (an int, a
        ``np.random.RandomState`` / ``Generator`` or ``None``; ``seed`` is its deprecated old
        name) when ``shuffle`` is True.
    block_size : steps per compiled block (performance only).

    Fitted: ``coef_`` / ``X_buffer_`` / ``support_times_`` (the coefficient ring buffer),
    ``online_predictions_`` (f_{t-1}(x_t)), ``errors_``, ``cumulative_error_`` (online MSE),
    ``rkhs_norms_sq_`` (||f_t||² by eq. 6, of the untruncated expansion), ``fit_trace_``.
    """

    def __init__(
        self,
        kernel=None,
        lam=0.01,
        eta0=1.0,
        schedule="invsqrt",
        truncation=None,
        loss="squared",
        shuffle=False,
        random_state=0,
        block_size=64,
        seed=SEED_DEPRECATED,
    ):
        self.kernel = kernel
        self.lam = lam
        self.eta0 = eta0
        self.schedule = schedule
        self.truncation = truncation
        self.loss = loss
        self.shuffle = shuffle
        self.random_state = random_state
        self.seed = seed
        self.block_size = block_size

    def _kernel_list(self, d):
        if self.kernel is None:
            return [SeparableKernel("rbf", np.eye(d if d is not None else 1))]
        return [self.kernel]


class MONORMA(_OnlineOVK):
    """Online multiple operator-valued kernel learning (Algorithm 2, eqs. 5–6).

    The coefficients α are shared by the kernels ``K^1..K^m``; ``f_t = Σ_j δ_t^j g_t^j`` with
    ``g_t^j = Σ_i K^j(x_i, ·) α_{i,t}``. ``γ_t^j = ||g_t^j||²`` follows the O(d²) recursion (6) and
    the weights follow eq. (5) with ``Σ_j (δ^j)^r = 1`` (δ_0 = 1/m). With ``truncation`` the
    recursion tracks the norm of the untruncated expansion, as in the paper.

    Parameters are those of ``ONORMA`` with ``kernels`` (a list of operator-valued kernels) and
    ``r > 0``. Fitted: as ``ONORMA`` plus ``delta_`` (final weights) and ``kernel_weights_``
    (``(n_steps, m)``: δ_t after each step).
    """

    _adapt = True

    def __init__(
        self,
        kernels=None,
        r=1.0,
        lam=0.01,
        eta0=1.0,
        schedule="invsqrt",
        truncation=None,
        loss="squared",
        shuffle=False,
        random_state=0,
        block_size=64,
        seed=SEED_DEPRECATED,
    ):
        self.kernels = kernels
        self.r = r
        self.lam = lam
        self.eta0 = eta0
        self.schedule = schedule
        self.truncation = truncation
        self.loss = loss
        self.shuffle = shuffle
        self.random_state = random_state
        self.seed = seed
        self.block_size = block_size

    def _check_params(self):
        super()._check_params()
        check_positive("r", self.r)
        if self.kernels is None or isinstance(self.kernels, (str, bytes)) or len(list(self.kernels)) == 0:
            raise ValueError("kernels must be a non-empty list of operator-valued kernels")

    def _kernel_list(self, d):
        if self.kernels is None:
            raise ValueError("kernels must be a non-empty list of operator-valued kernels")
        return list(self.kernels)


# ----------------------------------------------------------------------------------------------
# Batch counterpart: operator-valued kernel ridge regression
# ----------------------------------------------------------------------------------------------


def _joint_eigvecs(Ts, tol=1e-8):
    """An orthogonal ``V`` diagonalising every symmetric ``T`` in ``Ts`` (None if they do not commute)."""
    rng = np.random.default_rng(0)
    combo = sum(c * T for c, T in zip(rng.uniform(0.5, 1.5, len(Ts)), Ts))
    _, V = np.linalg.eigh(combo)
    for T in Ts:
        D = V.T @ T @ V
        off = D - np.diag(np.diag(D))
        if np.abs(off).max() > tol * max(1.0, np.abs(T).max()):
            return None
    return V


def ovk_ridge_solve(Ks, TW, Y, lams, solver="auto", dense_max=4000):
    """Dual coefficients ``C (len(lams), n, d)`` of ``(G + n λ I) vec(C) = vec(Y)``,
    ``G = Σ_l K_l ⊗ TW_l`` (sample-major), for every ``λ`` in ``lams``.

    Structure: one term → eigendecompositions of ``K`` and ``T`` (``C = U[(UᵀYV)/(s dᵀ + nλ)]Vᵀ``);
    several terms with commuting ``T_l`` → joint eigenbasis ``V``: output direction ``j`` is the
    ``n x n`` problem ``(Σ_l D_l[j] K_l + nλ I) z_j = (Y V)_j`` (directions with equal eigenvalues
    share one factorisation); otherwise dense Cholesky (``n d <= dense_max``) or CG.
    Returns ``(C, solver_used)``.
    """
    n, d = Y.shape
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    Ks = [np.asarray(K) for K in Ks]
    TW = np.asarray(TW)
    V = _joint_eigvecs(list(TW)) if solver in ("auto", "eigen", "cholesky") else None
    if solver in ("eigen", "cholesky") and V is None:
        raise ValueError(f"solver={solver!r} needs commuting output matrices T; use 'dense' or 'cg'")
    if V is not None:
        Dm = np.stack([np.diag(V.T @ T @ V) for T in TW], axis=1)  # (d, L): eigenvalues of w_l T_l
        scale = max(1e-300, np.abs(Dm).max())
        _, grp = np.unique(np.round(Dm / scale, 10), axis=0, return_inverse=True)
        grp = np.asarray(grp).ravel()
        groups = [np.flatnonzero(grp == g) for g in np.unique(grp)]
        YV = Y @ V
        Z = np.zeros((len(lams), n, d))
        # an eigendecomposition costs ~30 Choleskys on this class of CPU: pick the cheaper route
        single = len(Ks) == 1
        n_eigh = 1 if single else len(groups)
        use_eig = solver == "eigen" or (solver == "auto" and 30 * n_eigh < len(groups) * len(lams))
        if use_eig and single:  # K = U diag(s) Uᵀ: every (group, λ) is a diagonal solve
            s, U = np.linalg.eigh(Ks[0])
            Yt = U.T @ YV
            for i, lam in enumerate(lams):
                Z[i] = U @ (Yt / (np.outer(s, Dm[:, 0]) + n * lam))
        else:
            for cols in groups:
                M = sum(Dm[cols[0], term] * Ks[term] for term in range(len(Ks)))
                if use_eig:
                    s, U = np.linalg.eigh(M)
                    Yt = U.T @ YV[:, cols]
                    for i, lam in enumerate(lams):
                        Z[i][:, cols] = U @ (Yt / (s + n * lam)[:, None])
                else:
                    for i, lam in enumerate(lams):
                        try:
                            cf = sla.cho_factor(M + n * lam * np.eye(n), lower=True, check_finite=False)
                        except np.linalg.LinAlgError as exc:
                            raise ValueError(
                                "OVKRidge: kernel matrix not positive definite; increase lam"
                            ) from exc
                        Z[i][:, cols] = sla.cho_solve(cf, YV[:, cols], check_finite=False)
        if not np.isfinite(Z).all():
            raise ValueError("OVKRidge solve failed (non-finite coefficients); increase lam")
        return np.einsum("knd,ed->kne", Z, V), ("eigen" if use_eig else "cholesky") + f"-split({len(groups)})"
    G = (
        sum(np.kron(K, T) for K, T in zip(Ks, TW))
        if solver == "dense" or (solver == "auto" and n * d <= dense_max)
        else None
    )
    out = []
    if G is not None:
        for lam in lams:
            try:
                cf = sla.cho_factor(G + n * lam * np.eye(n * d), lower=True)
            except np.linalg.LinAlgError as exc:
                raise ValueError(
                    "OVKRidge dense solve failed (matrix not positive definite); increase lam"
                ) from exc
            out.append(sla.cho_solve(cf, Y.reshape(-1)).reshape(n, d))
        C = np.stack(out)
        if not np.isfinite(C).all():
            raise ValueError("OVKRidge dense solve failed (matrix not positive definite?); increase lam")
        return C, "dense"
    Kj, Tj = jnp.asarray(np.stack(Ks)), jnp.asarray(TW)
    for lam in lams:
        mv = lambda c, lam=lam: jnp.einsum("lij,jd,lde->ie", Kj, c, Tj) + n * lam * c  # noqa: E731
        c, _ = jax.scipy.sparse.linalg.cg(mv, jnp.asarray(Y), tol=1e-10, maxiter=10 * n)
        res = np.linalg.norm(np.asarray(mv(c)) - Y) / max(np.linalg.norm(Y), 1e-300)
        if not np.isfinite(res) or res > 1e-6:
            raise ValueError(f"OVKRidge CG did not converge (relative residual {res:.2g}); increase lam")
        out.append(np.asarray(c))
    return np.stack(out), "cg"


class OVKRidge(RegressorMixin, MultiOutputMixin, PersistenceMixin, BaseEstimator):
    """Batch regularised least squares with an operator-valued kernel (the paper's batch baseline).

    Minimises ``(1/n) Σ_i ½||f(x_i) - y_i||² + (λ/2)||f||²_H`` (the ``R_reg`` of §3), whose solution
    is ``f = Σ_i K(x_i, ·) c_i`` with ``(G + nλ I) vec(C) = vec(Y)``; solved with the kernel's
    structure (see ``ovk_ridge_solve``). ``lam`` may be a sequence: then ``cv``-fold cross-validation
    (MSE) picks ``lam_`` as in §5.

    Parameters: ``kernel`` (as ``ONORMA``; None: Gaussian ⊗ identity), ``lam``, ``cv``,
    ``solver`` (``"auto"``, ``"eigen"``, ``"cholesky"``, ``"dense"``, ``"cg"``), ``random_state``
    (CV folds; ``seed`` is its deprecated old name).
    Fitted: ``dual_coef_ (n, d)``, ``X_fit_``, ``lam_``, ``solver_``, ``cv_results_`` (when tuned).
    """

    def __init__(self, kernel=None, lam=0.01, cv=5, solver="auto", random_state=0, seed=SEED_DEPRECATED):
        self.kernel = kernel
        self.lam = lam
        self.cv = cv
        self.solver = solver
        self.random_state = random_state
        self.seed = seed

    def _terms(self, d):
        K = self.kernel if self.kernel is not None else SeparableKernel("rbf", np.eye(d))
        terms, dk, mv = kernel_terms(K)
        if dk != d:
            raise ValueError(f"kernel has output dimension {dk} but Y has {d} columns")
        return terms, mv

    def _grams(self, X1, X2, static):
        return [
            np.asarray(_kern(k, c, jnp.asarray(X1), jnp.asarray(X2)))
            for k, c in zip(static["kfns"], static["cols"])
        ]

    def fit(self, X, Y):
        """Solve the batch operator-valued kernel ridge problem on ``X`` and targets ``Y``; with several
        ``lam`` values, choose one by ``cv``-fold cross-validation first. Returns ``self``.
        """
        lams = np.atleast_1d(np.asarray(self.lam, dtype=float))
        if lams.ndim != 1 or lams.size == 0:
            raise ValueError(f"lam must be a number or a 1-D sequence of numbers, got {self.lam!r}")
        for lam in lams:
            check_positive("lam", float(lam))
        if self.solver not in ("auto", "eigen", "cholesky", "dense", "cg"):
            raise ValueError(
                f"solver must be 'auto', 'eigen', 'cholesky', 'dense' or 'cg', got {self.solver!r}"
            )
        require_targets(self, Y)
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        Y = np.asarray(Y)
        d_guess = Y.shape[1] if Y.ndim == 2 else 1
        terms, mv = self._terms(d_guess)
        Xa, sizes, ranges = _prepare_inputs(X, mv)
        Yc = _check_targets(Y, Xa.shape[0])
        self._y_1d = np.ndim(Y) == 1
        self.n_features_per_view_ = sizes
        self.n_features_in_ = sum(sizes)
        self._multiview = mv
        self._terms_ = terms
        self._ranges = ranges
        TW = np.stack([T for _, T, _ in terms])
        self._TW = TW
        kfns, cols = _static_terms(terms, ranges, len(sizes))
        static = dict(kfns=kfns, cols=cols, groups=(0,) * len(terms), n_groups=1)
        self._static_ = static
        n = Xa.shape[0]
        if lams.size > 1:
            check_positive("cv", self.cv, integer=True)
            if not 2 <= self.cv <= n:
                raise ValueError(f"cv must be between 2 and n_samples={n}, got {self.cv}")
            folds = np.array_split(np.random.default_rng(self.random_seed_).permutation(n), self.cv)
            mse = np.zeros(lams.size)
            for te in folds:
                tr = np.setdiff1d(np.arange(n), te)
                C, _ = ovk_ridge_solve(self._grams(Xa[tr], Xa[tr], static), TW, Yc[tr], lams, self.solver)
                Kte = self._grams(Xa[te], Xa[tr], static)
                for i in range(lams.size):
                    P = sum(K @ C[i] @ T for K, T in zip(Kte, TW))
                    mse[i] += np.sum((P - Yc[te]) ** 2) / n
            self.cv_results_ = {"lam": lams, "mean_squared_error": mse}
            self.lam_ = float(lams[int(np.argmin(mse))])
        else:
            self.lam_ = float(lams[0])
        C, used = ovk_ridge_solve(self._grams(Xa, Xa, static), TW, Yc, [self.lam_], self.solver)
        self.dual_coef_ = C[0]
        self.solver_ = used
        self.X_fit_ = Xa
        self.n_outputs_ = Yc.shape[1]
        return self

    def predict(self, X):
        """Vector-valued predictions for ``X`` (a 1-D array when ``Y`` was 1-D)."""
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError("This OVKRidge instance is not fitted yet; call 'fit' first.")
        Xa, _, _ = _prepare_inputs(X, self._multiview, self.n_features_per_view_, owner=type(self).__name__)
        F = _predict_rows(
            jnp.asarray(self.X_fit_),
            jnp.asarray(self.dual_coef_),
            jnp.asarray(self._TW),
            jnp.ones(1),
            Xa,
            self._static_,
        )
        return F[:, 0] if self._y_1d else F

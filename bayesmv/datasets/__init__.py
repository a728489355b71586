"""Multi-view data: the bundled mfeat set, validation, splits and the papers' generators."""

from ._generators import (
    MKC_TOY_GROUPS,
    MKC_TOY_KERNELS,
    make_latent_views,
    make_mkc_toy,
    make_multitask,
    make_mvml_toy,
    mkc_toy_kernel,
    mkc_toy_weights,
)
from ._mfeat import MFEAT_VIEWS, load_mfeat
from ._multiview_array import MultiViewArray
from ._split import MultiViewStandardScaler, drop_views, standardize_views, train_test_split_views
from ._validation import (
    SEED_DEPRECATED,
    check_label_vector,
    check_positive,
    check_random_seed,
    check_targets,
    check_views,
    coobserved_view_groups,
    is_view_list,
    observed_mask,
    reject_sparse,
)

__all__ = [
    "MFEAT_VIEWS",
    "MKC_TOY_GROUPS",
    "MKC_TOY_KERNELS",
    "MultiViewArray",
    "SEED_DEPRECATED",
    "MultiViewStandardScaler",
    "check_label_vector",
    "check_positive",
    "check_random_seed",
    "check_targets",
    "check_views",
    "coobserved_view_groups",
    "is_view_list",
    "drop_views",
    "load_mfeat",
    "make_latent_views",
    "make_mkc_toy",
    "make_multitask",
    "make_mvml_toy",
    "mkc_toy_kernel",
    "mkc_toy_weights",
    "observed_mask",
    "reject_sparse",
    "standardize_views",
    "train_test_split_views",
]

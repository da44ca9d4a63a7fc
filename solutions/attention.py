"""Scaled dot-product attention and its causal and cross forms."""
from __future__ import annotations

import math

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj

from ._backend import as_arrays, broadcast_shape, check_attention_shapes, numpy_namespace
from .masks import boolean_to_additive, causal_tile
from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    """softmax(Q K^T * scale + mask) V -> (output, weights).

    Q (..., n_q, d_k), K (..., n_k, d_k), V (..., n_k, d_v); leading batch axes
    broadcast. ``mask`` is additive (float, 0 keep / -inf hide) or boolean
    (True = keep) and must broadcast to the scores (..., n_q, n_k). ``scale``
    defaults to 1 / sqrt(d_k). A query whose keys are all masked gets zero
    weights and a zero output (no NaN, no warning).
    """
    xp, (Q, K, V) = as_arrays(Q, K, V, names=["Q", "K", "V"])
    check_attention_shapes(Q, K, V)
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    scores = xp.matmul(Q, xp.matrix_transpose(K)) * scale        # (..., n_q, n_k)
    if mask is not None:
        scores = scores + _additive_mask(xp, mask, scores)
    weights = softmax(scores, axis=-1)                            # rows sum to 1
    return xp.matmul(weights, V), weights                         # (..., n_q, d_v)


def _additive_mask(xp, mask, scores):
    numpy_mask = type(mask) is np.ndarray and xp is numpy_namespace()      # array_namespace(mask) is xp then
    if not numpy_mask and (not is_array_api_obj(mask) or array_namespace(mask) is not xp):
        mask = xp.asarray(mask)
    if broadcast_shape(tuple(mask.shape), tuple(scores.shape)) is None:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the "
            f"scores' shape {tuple(scores.shape)}"
        )
    if xp.isdtype(mask.dtype, "bool"):
        return boolean_to_additive(xp, mask, scores.dtype)
    if not xp.isdtype(mask.dtype, ("real floating", "integral")):
        raise ValueError(f"mask has dtype {mask.dtype}; pass a float (additive) or bool mask")
    return xp.astype(mask, scores.dtype)


def causal_attention(Q, K, V):
    """Attention where query i sees keys 0..i only (the mask is added before the softmax)."""
    xp, (Q, K, V) = as_arrays(Q, K, V, names=["Q", "K", "V"])
    check_attention_shapes(Q, K, V)
    mask = causal_tile(xp, 0, Q.shape[-2], 0, K.shape[-2], Q.dtype)     # (n_q, n_k)
    return scaled_dot_product_attention(Q, K, V, mask=mask)


def cross_attention(Q, K, V):
    """Decoder queries Q (n_tgt, d_k) attend to encoder K (n_src, d_k), V (n_src, d_v); no mask."""
    return scaled_dot_product_attention(Q, K, V)

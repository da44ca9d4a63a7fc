"""Masks, documented edge cases, errors and the chapter's numbers (DESIGN.md)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import solutions as S


def test_causal_mask_values():
    m = S.causal_mask(4)
    assert m.shape == (4, 4) and m.dtype == np.float64
    assert np.all(np.tril(m) == 0) and np.all(np.isneginf(m[np.triu_indices(4, 1)]))
    r = S.causal_mask(2, 4)
    assert r.shape == (2, 4)
    assert list(np.isneginf(r[0])) == [False, True, True, True]


def test_prefix_lm_mask():
    m = S.prefix_lm_mask(4, 2)
    assert np.all(m[:, :2] == 0)
    assert np.isneginf(m[2, 3]) and m[3, 3] == 0 and m[1, 1] == 0


def test_fully_masked_row_gives_zero_weights_no_warning():
    Q = K = V = np.ones((1, 3, 2))
    mask = S.padding_mask([0], 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = S.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(w == 0) and np.all(out == 0)
    assert np.all(S.softmax(np.full((2, 3), -np.inf)) == 0)


def test_softmax_jacobian_matches_finite_differences():
    x = np.random.default_rng(0).normal(size=5)
    p = S.softmax(x)
    J = S.softmax_jacobian(p)
    eps = 1e-6
    fd = np.stack([(S.softmax(x + eps * e) - S.softmax(x - eps * e)) / (2 * eps) for e in np.eye(5)], 1)
    np.testing.assert_allclose(J, fd, atol=1e-8)
    assert S.softmax_jacobian(np.stack([p, p])).shape == (2, 5, 5)


@pytest.mark.parametrize("args, words", [
    (((3, 4), (5, 6), (5, 2)), "K has d_k=6 but Q has d_k=4"),
    (((3, 4), (5, 4), (6, 2)), "V has n_k=6 rows but K has n_k=5"),
    (((4,), (5, 4), (5, 2)), "Q must be at least 2-D"),
])
def test_shape_errors_name_both_numbers(args, words):
    arrays = [np.zeros(s) for s in args]
    with pytest.raises(ValueError, match=words):
        S.scaled_dot_product_attention(*arrays)


def test_object_and_string_arrays_refused():
    good = np.zeros((2, 2))
    with pytest.raises(ValueError, match="dtype object"):
        S.scaled_dot_product_attention(np.array([[None, 1]], dtype=object), good, good)
    with pytest.raises(ValueError, match="dtype <U"):
        S.softmax(np.array(["a", "b"]))


def test_mask_that_does_not_broadcast():
    z = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        S.scaled_dot_product_attention(z, z, z, mask=np.zeros((4, 4)))


def test_lists_and_ints_are_accepted():
    out, w = S.scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1], [2]])
    assert w.dtype == np.float64 and out.shape == (1, 1)


def test_float32_stays_float32():
    x = np.ones((2, 3), dtype=np.float32)
    out, w = S.causal_attention(x, x, x)
    assert out.dtype == np.float32 and w.dtype == np.float32


# --- the chapter's numbers -------------------------------------------------------------

def test_ex1_peakedness():
    assert [round(v, 4) for v in S.peakedness(8)] == [0.9251, 0.5213]
    assert [round(v, 4) for v in S.peakedness(512)] == [1.0, 0.7216]


def test_variance_sweep():
    rows = S.variance_sweep((8, 64, 512, 4096))
    assert [round(r.raw_std, 1) for r in rows] == [2.8, 7.7, 23.4, 70.0]
    assert [round(r.theory_std, 1) for r in rows] == [2.8, 8.0, 22.6, 64.0]
    assert all(0.9 < r.scaled_std < 1.15 for r in rows)


def test_ex2_weight_matrix():
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(5, 8)), rng.normal(size=(5, 8))
    _, w = S.causal_attention(Q, K, K)
    expected = [[1], [.218, .782], [.571, .342, .087], [.032, .717, .192, .059],
                [.516, .063, .1, .127, .195]]
    for i, row in enumerate(expected):
        assert np.round(w[i, : i + 1], 3).tolist() == row
        assert np.all(w[i, i + 1:] == 0)


def test_ex3_table_and_crossover():
    table = [(n, round(a, 2), round(f, 2), round(r, 2)) for n, a, f, r in S.memory_table()]
    assert table == [(256, 0.0, 0.01, 0.02), (1024, 0.0, 0.03, 0.06), (4096, 0.03, 0.13, 0.25),
                     (16384, 0.54, 0.54, 1.0), (65536, 8.59, 2.15, 4.0)]
    assert S.crossover_length(4096) == 16384
    assert S.attention_memory_bytes(8192, 4) == 268_435_456
    assert S.attention_flops(10, 3) == 2 * (2 * 10 * 10 * 3)
    n = S.crossover_length(4096)
    assert S.attention_memory_bytes(n - 1) < S.ffn_memory_bytes(n - 1, 4096)


def test_ex4_shapes():
    rng = np.random.default_rng(0)
    out, w = S.cross_attention(rng.normal(size=(4, 8)), rng.normal(size=(6, 8)), rng.normal(size=(6, 8)))
    assert out.shape == (4, 8) and w.shape == (4, 6)
    assert np.all(w[0, 1:] > 0)          # no causal mask


def test_costs_refuse_bad_numbers():
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        S.attention_memory_bytes(-3)


def test_import_does_not_import_cupy():
    code = "import sys, solutions; print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

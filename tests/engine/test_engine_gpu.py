"""CuPy path: skipped unless CuPy and a CUDA GPU are present (scripts/gpu_check.py runs these)."""
import numpy as np
import pytest

import solutions as S

cp = pytest.importorskip("cupy")
try:
    HAVE_GPU = cp.cuda.runtime.getDeviceCount() > 0
except Exception:  # no driver, no device
    HAVE_GPU = False
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no CUDA GPU")]


@pytest.mark.parametrize("fn", [S.scaled_dot_product_attention, S.causal_attention, S.cross_attention])
def test_cupy_matches_numpy(fn):
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(6, 8)), rng.normal(size=(6, 8)), rng.normal(size=(6, 5))
    out, w = fn(cp.asarray(Q), cp.asarray(K), cp.asarray(V))
    assert isinstance(out, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(out), fn(Q, K, V)[0], atol=1e-10)


def test_cupy_blocked_float32():
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(1024, 64)).astype(np.float32) for _ in range(3))
    got = S.blocked_attention(cp.asarray(Q), cp.asarray(K), cp.asarray(V), causal=True, block=128)
    np.testing.assert_allclose(cp.asnumpy(got), S.causal_attention(Q, K, V)[0], atol=2e-6)

#!/usr/bin/env python3
"""Check the StableHLO text printed by the IR module with a real MLIR parser (jax's bundled bindings).

    TT_DUMP_DIR=/tmp/ttdump make ctest BUILD=build-x      # test_ir writes <name>.mlir files there
    python3 ctests/check_stablehlo.py /tmp/ttdump          # or: TT_DUMP_DIR=/tmp/ttdump python3 ctests/check_stablehlo.py

For every file: parse + verify; then compile on jax's CPU backend (skipped for custom_call); for files with a
reference below, run with seeded inputs and compare against numpy. Exits 0 and prints SKIP when jax is absent
(optional in CI). Needs jax (tested with 0.10): `python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax`.
"""
import glob
import os
import sys

try:
    import numpy as np
    import jax
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir
except Exception as e:  # pragma: no cover
    print(f"SKIP check_stablehlo: jax not available ({e})")
    sys.exit(0)

import ml_dtypes

jax.config.update("jax_enable_x64", True)  # i64/f64 parameters travel unchanged

ELEM = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "i64": np.int64,
        "i32": np.int32, "i16": np.int16, "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}


def rng_bits(seed, counter):
    """tt_ir_rng_bits in numpy uint64 (wrapping) arithmetic."""
    with np.errstate(over="ignore"):
        x = np.uint64(seed) ^ (counter.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def rng_uniform(seed, offset, shape, dtype):
    n = int(np.prod(shape))
    x = rng_bits(seed, np.uint64(offset) + np.arange(n, dtype=np.uint64))
    if dtype == np.float64:
        return ((x >> np.uint64(11)).astype(np.float64) * 2.0**-53).reshape(shape)
    return ((x >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)).astype(dtype).reshape(shape)


def ref_expansions(args):
    x, seed, off, bi = args[0], int(args[1]), int(args[2]), args[3]
    order = np.argsort(x, axis=1, kind="stable")
    return [
        np.argmax(x, axis=1), np.argmin(x, axis=0),
        np.cumsum(x, axis=1), np.flip(np.maximum.accumulate(np.flip(x, 0), axis=0), 0),
        np.take_along_axis(x, order, 1), order,
        np.flip(np.sort(x, axis=1), 1),  # descending: NaN first, like PyTorch
        np.min(x, axis=1),
        None,  # reduce_window: shape checked only
        rng_uniform(seed, off, (3, 5), np.float32), rng_uniform(seed, off, (7,), np.float64),
        rng_uniform(seed, off, (7,), ml_dtypes.bfloat16),
        np.argmax(bi), np.cumprod(bi),
    ]


def ref_header_example(args):
    return [(args[0] * 2).sum(0)]


REFERENCES = {"expansions": ref_expansions, "header_example": ref_header_example}


def make_input(ty, rs, k):
    shape = tuple(ty.shape)
    elem = ELEM[str(ty.element_type)]
    if shape == () and elem == np.int64:
        return np.array([12345, 7][k % 2], dtype=np.int64)
    if elem == np.bool_:
        return rs.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(elem, np.integer):
        return rs.integers(1, 5, size=shape).astype(elem)
    a = rs.permutation(np.prod(shape, dtype=np.int64)).reshape(shape).astype(np.float64) - 3.5
    if a.size > 3:
        a.flat[3] = np.nan  # exercises the NaN rules of arg_reduce and sort
    return a.astype(elem)


def check_file(path, ctx, backend):
    name = os.path.splitext(os.path.basename(path))[0]
    text = open(path).read()
    with ctx:
        m = ir.Module.parse(text)
        if not m.operation.verify():
            return "verify failed"
        if "stablehlo.custom_call" in text:
            return None
        devs = xc.DeviceList(tuple(backend.local_devices()[:1]))
        exe = compiler.backend_compile_and_load(backend, m, devs, xc.CompileOptions(), [])
        fn = m.body.operations[0]
        in_types = [ir.RankedTensorType(t) for t in ir.FunctionType(fn.attributes["function_type"].value).inputs]
    if name not in REFERENCES:
        return None
    rs = np.random.default_rng(0)
    args = [make_input(t, rs, k) for k, t in enumerate(in_types)]
    outs = [np.asarray(o) for o in exe.execute([jax.device_put(a, backend.local_devices()[0]) for a in args])]
    for k, (got, want) in enumerate(zip(outs, REFERENCES[name](args))):
        if want is None:
            continue
        want = np.asarray(want)
        if got.shape != want.shape:
            return f"output {k}: shape {got.shape} != {want.shape}"
        if np.issubdtype(got.dtype, np.integer) or got.dtype == np.bool_:
            ok = np.array_equal(got, want.astype(got.dtype))
        else:
            ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=0, equal_nan=True)
        if not ok:
            return f"output {k}: got {got!r}, want {want!r}"
    return None


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TT_DUMP_DIR")
    if not d:
        print(__doc__)
        return 2
    files = sorted(glob.glob(os.path.join(d, "*.mlir")))
    if not files:
        print(f"no .mlir files in {d}")
        return 1
    ctx = jmlir.make_ir_context()
    backend = xla_bridge.get_backend("cpu")
    failed = 0
    for f in files:
        try:
            err = check_file(f, ctx, backend)
        except Exception as e:
            err = str(e)[:3000]
        print(("ok   " if err is None else "FAIL ") + os.path.basename(f) + ("" if err is None else "\n  " + err))
        failed += err is not None
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""torchtpu.stablehlo(fn, *tpu_tensors): the StableHLO module of what fn does, and (when jax is around) a real
MLIR parser accepts it.

jax is optional: it is used in this process when importable, else through the interpreter named by
TORCHTPU_JAX_PYTHON (e.g. a venv with jax: `TORCHTPU_JAX_PYTHON=/tmp/jaxvenv/bin/python`); otherwise the parse
tests skip.
"""
import os
import re
import subprocess

import pytest
import torch
import torch.nn.functional as F
import torchtpu

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")

PARSE = r"""
import sys
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
text = sys.stdin.read()
with jmlir.make_ir_context():
    m = ir.Module.parse(text)
    ok = m.operation.verify()
print("VERIFIED" if ok else "NOT VERIFIED")
"""


def _jax_in_process():
    try:
        import jax  # noqa: F401
        from jaxlib.mlir import ir  # noqa: F401

        return True
    except Exception:  # noqa: BLE001
        return False


def parse_with_jax(text):
    """Parses and verifies text with jax's MLIR bindings; skips when jax is not available."""
    if _jax_in_process():
        from jax._src.interpreters import mlir as jmlir
        from jaxlib.mlir import ir

        with jmlir.make_ir_context():
            m = ir.Module.parse(text)
            assert m.operation.verify()
        return
    py = os.environ.get("TORCHTPU_JAX_PYTHON")
    if not py or not os.path.exists(py):
        pytest.skip("jax is not importable (set TORCHTPU_JAX_PYTHON to a python with jax to run this)")
    r = subprocess.run([py, "-c", PARSE], input=text, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:] + "\n--- module ---\n" + text
    assert "VERIFIED" in r.stdout and "NOT" not in r.stdout, text


def main_signature(text):
    m = re.search(r"func\.func public @main\((.*?)\)\s*->\s*(.*?)\s*\{", text, re.S)
    assert m, text
    args = re.findall(r"%\w+\s*:\s*(tensor<[^>]*>)", m.group(1))
    return args, m.group(2)


def t(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to("tpu")


# ---- the module's shape ---------------------------------------------------------------------------------------
def test_an_add_becomes_a_module_with_a_public_main_and_stablehlo_add():
    a, b = t(2, 3), t(2, 3, seed=1)
    text = torchtpu.stablehlo(lambda x, y: x + y, a, b)
    assert isinstance(text, str)
    assert "module" in text
    assert "func.func public @main" in text
    assert "stablehlo.add" in text
    args, _ = main_signature(text)
    assert args == ["tensor<2x3xf32>", "tensor<2x3xf32>"]
    assert "return" in text


@pytest.mark.parametrize("dtype,elem", [(torch.float32, "f32"), (torch.bfloat16, "bf16"), (torch.float16, "f16"),
                                        (torch.float64, "f64"), (torch.int32, "i32"), (torch.int64, "i64")], ids=str)
def test_argument_types_match_the_tensors(dtype, elem):
    a = t(4, 1, 5, dtype=dtype)
    b = t(5, dtype=dtype, seed=1)
    text = torchtpu.stablehlo(lambda x, y: x * y, a, b)
    args, ret = main_signature(text)
    assert args == [f"tensor<4x1x5x{elem}>", f"tensor<5x{elem}>"]
    assert f"tensor<4x1x5x{elem}>" in ret
    assert "stablehlo.multiply" in text


def test_a_matmul_becomes_dot_general():
    a, b = t(8, 16), t(16, 4, seed=1)
    text = torchtpu.stablehlo(lambda x, y: x @ y, a, b)
    assert "stablehlo.dot_general" in text
    args, ret = main_signature(text)
    assert args == ["tensor<8x16xf32>", "tensor<16x4xf32>"]
    assert "tensor<8x4xf32>" in ret


def test_a_sum_becomes_reduce():
    text = torchtpu.stablehlo(lambda x: x.sum(1), t(3, 7))
    assert "stablehlo.reduce" in text
    _, ret = main_signature(text)
    assert "tensor<3xf32>" in ret


def test_a_chain_of_ops_is_one_program():
    def fn(x, w, b):
        return F.relu(x @ w + b).sum(0)

    text = torchtpu.stablehlo(fn, t(5, 6), t(6, 3, seed=1), t(3, seed=2))
    for op in ("stablehlo.dot_general", "stablehlo.add", "stablehlo.maximum", "stablehlo.reduce"):
        assert op in text or (op == "stablehlo.maximum" and "stablehlo.select" in text), op
    assert text.count("func.func") == 1 or "@main" in text
    args, ret = main_signature(text)
    assert args == ["tensor<5x6xf32>", "tensor<6x3xf32>", "tensor<3xf32>"]
    assert "tensor<3xf32>" in ret


def test_several_outputs_are_returned_in_order():
    text = torchtpu.stablehlo(lambda x: (x.exp(), x.sum()), t(2, 2))
    _, ret = main_signature(text)
    assert ret.index("tensor<2x2xf32>") < ret.index("tensor<f32>")
    assert "stablehlo.exponential" in text


def test_a_tensor_read_twice_is_one_argument():
    a = t(3)
    text = torchtpu.stablehlo(lambda x: x * x + x, a)
    args, _ = main_signature(text)
    assert args == ["tensor<3xf32>"]


def test_tracing_still_computes_the_right_values():
    a, b = t(4, 4), t(4, 4, seed=1)
    out = {}

    def fn(x, y):
        out["r"] = (x @ y).tanh()
        return out["r"]

    torchtpu.stablehlo(fn, a, b)
    torch.testing.assert_close(out["r"].cpu(), (a.cpu() @ b.cpu()).tanh(), rtol=1e-5, atol=1e-5)


def test_an_error_inside_fn_aborts_the_trace_and_the_next_trace_works():
    def bad(x):
        x + 1
        raise KeyError("inside")

    with pytest.raises(KeyError):
        torchtpu.stablehlo(bad, t(2))
    text = torchtpu.stablehlo(lambda x: x - 1, t(2))
    assert "stablehlo.subtract" in text


# ---- a real parser --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "matmul", "sum", "mlp", "softmax", "bf16 mixed", "int compare"])
def test_the_module_parses_and_verifies_with_jax(name):
    fn, args = {
        "add": (lambda x, y: x + y, (t(2, 3), t(2, 3, seed=1))),
        "matmul": (lambda x, y: x @ y, (t(8, 16), t(16, 4, seed=1))),
        "sum": (lambda x: x.sum(1), (t(3, 7),)),
        "mlp": (lambda x, w, b: F.relu(x @ w + b).sum(0), (t(5, 6), t(6, 3, seed=1), t(3, seed=2))),
        "softmax": (lambda x: x.softmax(-1), (t(4, 9),)),
        "bf16 mixed": (lambda x, y: x.float() * y, (t(3, dtype=torch.bfloat16), t(3, seed=1))),
        "int compare": (lambda x, y: torch.where(x > y, x, y), (t(6, dtype=torch.int32), t(6, dtype=torch.int32, seed=1))),
    }[name]
    text = torchtpu.stablehlo(fn, *args)
    parse_with_jax(text)


# ---- backward() inside the traced function: autograd's device thread records into the same trace -------------
def test_a_forward_only_function_still_has_only_the_forward_ops():
    x, w = t(4, 8), t(8, 3, seed=1)
    text = torchtpu.stablehlo(lambda a, b: (a @ b).relu().sum(), x, w)
    args, _ = main_signature(text)
    assert args == ["tensor<4x8xf32>", "tensor<8x3xf32>"]
    assert text.count("stablehlo.dot_general") == 1


def test_backward_inside_the_function_is_recorded_not_taken_as_an_input():
    x = t(4, 8)
    w = t(8, 3, seed=1).requires_grad_()

    def step(a, b):
        loss = (a @ b).relu().sum()
        loss.backward()
        return b.grad

    text = torchtpu.stablehlo(step, x, w)
    args, ret = main_signature(text)
    # The gradient is computed in the program (from x and w), not passed in: the tensor arguments are x and w (host
    # scalars, like the seed gradient's 1.0, are 0-d arguments of every traced program), and the backward's matmul
    # (x^T @ grad) is there next to the forward's.
    assert [a for a in args if a != "tensor<f32>"] == ["tensor<4x8xf32>", "tensor<8x3xf32>"], text
    assert "tensor<8x3xf32>" in ret
    assert text.count("stablehlo.dot_general") >= 2, text
    parse_with_jax(text)
    # And the gradient the traced run produced is the right one.
    xc, wc = x.cpu(), w.detach().cpu().requires_grad_()
    (xc @ wc).relu().sum().backward()
    torch.testing.assert_close(w.grad.cpu(), wc.grad)


def test_a_trace_does_not_leak_into_later_backward_passes():
    x = t(3, 3).requires_grad_()
    torchtpu.stablehlo(lambda a: a * 2, t(3, 3))
    (x * 3).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), torch.full((3, 3), 3.0))
    with pytest.raises(RuntimeError, match="no trace is running"):
        torchtpu._C.trace_end([])

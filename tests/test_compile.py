"""torch.compile on tpu (torchtpu/_compile.py, csrc/runtime/graph.c): the "tpu" backend, the default backend's
routing, one program per graph through the eager lowerings, parity with eager mode (training with dropout, input
mutations, optimizer steps, dynamic shapes, graph breaks, precision) and what the log says about recompiles."""
import copy
import importlib.metadata
import os
import sys

import pytest
import torch
import torch.nn as nn

import torchtpu
from tests.conftest import DRIVER, ROOT, run_python

sys.path.insert(0, os.path.join(ROOT, "examples"))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def graphs():
    return torchtpu._compile.compile_stats()["graphs"]


def test_backend_is_registered_by_name_and_entry_point():
    eps = {e.name: e.value for e in importlib.metadata.entry_points(group="torch_dynamo_backends")}
    assert eps.get("tpu") == "torchtpu._compile:tpu_backend"
    assert "tpu" in torch._dynamo.list_backends()
    before = graphs()
    f = torch.compile(lambda x: x * 2 + 1, backend="tpu")
    x = torch.randn(5, device="tpu")
    assert torch.equal(f(x).cpu(), x.cpu() * 2 + 1)
    assert graphs() == before + 1


def test_default_backend_picks_tpu_for_tpu_graphs_and_leaves_cpu_to_inductor():
    def f(x, y):
        return (x @ y).relu() + 1

    a, b = torch.randn(8, 8), torch.randn(8, 8)
    before = graphs()
    cf = torch.compile(f)
    torch.testing.assert_close(cf(a.to("tpu"), b.to("tpu")).cpu(), f(a, b), rtol=1e-6, atol=1e-6)
    assert graphs() == before + 1
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(f)(a, b), f(a, b))  # CPU: Inductor, not ours
    assert graphs() == before + 1


def test_dynamo_device_interface_is_ours():
    from torch._dynamo.device_interface import get_interface_for_device

    di = get_interface_for_device("tpu")
    assert di.__module__ == "torchtpu._compile"
    assert di.is_dtype_supported(torch.float64)  # torch's own TpuInterface (for Google's package) says no
    assert di.device_count() == torch.tpu.device_count() and di.is_available()
    assert di.current_stream() == torch.tpu.current_stream()


@pytest.mark.parametrize("mode", ["fused", "strict", "debug"])
def test_a_graph_runs_as_one_program_compiled_once(mode):
    torchtpu.set_eager_mode(mode)

    def f(x):
        for _ in range(40):
            x = torch.sin(x) * 1.5 + 0.25
        return x.sum(0)

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(64, 32, device="tpu")
    want = f(x.cpu())
    torchtpu.reset_metrics()
    first = cf(x)
    m = torchtpu.metrics()
    assert m["fused_windows"] == 1 and m["compiles"] <= 1, m  # compiled, or found from an earlier test
    assert m["pending_dropped"] >= 100, "the graph's intermediates must never be allocated"
    torch.testing.assert_close(first.cpu(), want, rtol=1e-5, atol=1e-5)
    torchtpu.reset_metrics()
    for _ in range(3):
        out = cf(x)
    m = torchtpu.metrics()
    assert m["cuts"].get("graph", 0) >= 3 and m["fused_windows"] == 3, m
    assert m["compiles"] == 0, "a graph seen before must not compile again"
    assert m["ops"]["fused"] == 0, "a repeated graph launches its program without recording its ops"
    assert m["torch_compile"] == {"graphs": 0, "recompiles": 0, "replays": 3, "programs": 0, "padded_graphs": 0}
    torch.testing.assert_close(out.cpu(), want, rtol=1e-5, atol=1e-5)


def test_the_fused_size_cap_does_not_split_a_graph():
    code = """
import torch, torchtpu
def f(x):
    for _ in range(40):
        x = torch.sin(x) * 1.5 + 0.25
    return x
cf = torch.compile(f, backend="tpu")
x = torch.randn(8, device="tpu")
cf(x).cpu()
torchtpu.reset_metrics()
cf(x).cpu()
print(torchtpu.metrics()["fused_windows"])
"""
    # a cap of 2 ops: 32 within one line of code that chains its ops; the graph has 120
    r = run_python(code, env={"TORCHTPU_FUSION_MAX_OPS": "2"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "1"


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_a_training_step_replays_its_programs_and_matches_eager_step_for_step(dropout):
    from tiny_gpt import GPTConfig, TinyGPT

    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=dropout)
    torch.manual_seed(0)
    base = TinyGPT(cfg)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 64, (4, 16), generator=g), torch.randint(0, 64, (4, 16), generator=g)

    def run(compiled):
        torch.tpu.manual_seed(1)
        model = copy.deepcopy(base).to("tpu")
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        fwd = torch.compile(model, backend="tpu") if compiled else model
        losses = []
        for _ in range(4):
            _, loss = fwd(x.to("tpu"), y.to("tpu"))
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return losses, [p.detach().cpu() for p in model.parameters()]

    eager, eager_params = run(False)
    before, replays = graphs(), torchtpu._compile.compile_stats()["replays"]
    compiled, compiled_params = run(True)
    assert graphs() == before + 2  # forward and backward
    # steps 2 to 4 launch both programs again; with dropout the forward draws new counters each time
    assert torchtpu._compile.compile_stats()["replays"] == replays + 6
    if DRIVER == "host":
        assert compiled == eager  # same ops, same random numbers, same order: bit for bit
        for a, b in zip(compiled_params, eager_params):
            assert torch.equal(a, b)
    else:  # XLA fuses the eager windows and the graph differently: the last bits may differ
        torch.testing.assert_close(torch.tensor(compiled), torch.tensor(eager), rtol=1e-5, atol=0)
        for a, b in zip(compiled_params, eager_params):  # Adam moves a near-zero gradient's weight by ~lr
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-3)


def test_a_replayed_graph_writes_its_input_mutations():
    def f(x, y):
        x.add_(y)
        return x * 2

    cf = torch.compile(f, backend="tpu")
    x, y = torch.zeros(5, device="tpu"), torch.ones(5, device="tpu")
    replays = torchtpu._compile.compile_stats()["replays"]
    with torch.no_grad():
        for k in range(1, 5):
            version = x._version
            out = cf(x, y)
            assert torch.equal(out.cpu(), torch.full((5,), 2.0 * k)) and torch.equal(x.cpu(), torch.full((5,), k))
            assert x._version > version
    assert torchtpu._compile.compile_stats()["replays"] == replays + 3


def test_a_captured_graph_keeps_no_tensor_of_the_call_that_captured_it():
    cf = torch.compile(lambda x: (x * 2, x.sum()), backend="tpu")
    torch.tpu.synchronize()
    base = torch.tpu.memory_allocated()
    x = torch.randn(256, 256, device="tpu")
    a, b = cf(x)   # recorded and captured
    a2, b2 = cf(x)  # replayed
    assert torch.equal(a2.cpu(), a.cpu()) and torch.equal(b2.cpu(), b.cpu())
    del x, a, b, a2, b2
    torch.tpu.synchronize()
    assert torch.tpu.memory_allocated() == base


def test_an_input_laid_out_differently_is_recorded_again():
    cf = torch.compile(lambda v: v * 10, backend="tpu")
    a = torch.arange(8.0, device="tpu")
    b = a * 100
    # the same layout on another storage (replayed), then other storage offsets (Dynamo keeps the graph)
    for base, scale, start in ((a, 1, 1), (b, 100, 1), (a, 1, 2), (b, 100, 3), (a, 1, 3)):
        assert torch.equal(cf(base[start:start + 4]).cpu(), torch.arange(start, start + 4.0) * 10 * scale)


def test_dropout_draws_new_numbers_each_call_as_eager_does():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) + torch.rand_like(x)

    x = torch.ones(1000, device="tpu")
    torch.tpu.manual_seed(5)
    eager = [f(x).cpu() for _ in range(4)]
    cf = torch.compile(f, backend="tpu")
    torch.tpu.manual_seed(5)
    replays = torchtpu._compile.compile_stats()["replays"]
    compiled = [cf(x).cpu() for _ in range(4)]
    assert torchtpu._compile.compile_stats()["replays"] == replays + 3
    assert not torch.equal(compiled[1], compiled[2])
    for a, b in zip(compiled, eager):
        assert torch.equal(a, b)


def test_batchnorm_running_stats_are_updated_as_on_cpu():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
    mt = copy.deepcopy(m).to("tpu")
    cm = torch.compile(mt, backend="tpu")
    for _ in range(2):
        x = torch.randn(4, 3, 12, 12)
        want, got = m(x), cm(x.to("tpu"))
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mt[1].running_mean.cpu(), m[1].running_mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(mt[1].running_var.cpu(), m[1].running_var, rtol=1e-5, atol=1e-6)
    assert int(mt[1].num_batches_tracked) == 2


def test_compiled_optimizer_step_matches_cpu():
    torch.manual_seed(0)
    ps = [torch.randn(16, 8, requires_grad=True) for _ in range(3)]
    pt = [p.detach().to("tpu").requires_grad_() for p in ps]
    for p, q in zip(ps, pt):
        p.grad = torch.randn_like(p)
        q.grad = p.grad.to("tpu")
    opt, opt_t = torch.optim.AdamW(ps, lr=0.1), torch.optim.AdamW(pt, lr=0.1)
    step = torch.compile(opt_t.step, backend="tpu")
    for _ in range(3):
        opt.step()
        step()
    # traced, the step keeps the bias corrections as f32 tensors (eager rounds Python floats): a few f32 ulps apart
    for p, q in zip(ps, pt):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5)


def test_dynamic_shapes_compile_one_graph_for_many_sizes_and_replay_each_size():
    before, replays = graphs(), torchtpu._compile.compile_stats()["replays"]
    f = torch.compile(lambda x: (x * 2).sum(-1) + x.shape[1], backend="tpu", dynamic=True)
    for n in (4, 5, 7, 9, 4, 5, 7, 9):
        x = torch.randn(3, n, device="tpu")
        torch.testing.assert_close(f(x).cpu(), (x.cpu() * 2).sum(-1) + n)
    assert graphs() == before + 1
    assert torchtpu._compile.compile_stats()["replays"] == replays + 4  # each size's second call


def test_graph_breaks_run_eagerly_and_fullgraph_refuses_them():
    def f(x):
        y = x.sin()
        torch._dynamo.graph_break()
        return y.cos()

    x = torch.randn(10, device="tpu")
    before = graphs()
    torch.testing.assert_close(torch.compile(f, backend="tpu")(x).cpu(), x.cpu().sin().cos())
    assert graphs() == before + 2
    torch._dynamo.reset()  # else f's code compiled above is reused
    with pytest.raises(Exception, match="graph_break|Graph break|graph break"):
        torch.compile(f, backend="tpu", fullgraph=True)(x)


def test_precision_in_force_when_the_graph_runs_applies_to_its_matmuls():
    a, b = torch.randn(64, 64, device="tpu"), torch.randn(64, 64, device="tpu")
    f = torch.compile(lambda a, b: a @ b, backend="tpu")
    for p in (torch.tpu.Precision.DEFAULT, torch.tpu.Precision.HIGHEST):
        with torch.tpu.precision(p):
            want = (a @ b).cpu()
            got = f(a, b).cpu()
        assert torch.equal(got, want), p
    with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
        default = f(a, b).cpu()
    assert not torch.equal(default, (a.cpu() @ b.cpu())), "DEFAULT rounds products to bf16"


def test_a_precision_block_inside_a_compiled_function_is_part_of_the_graph():
    def f(a, b):
        x = a @ b  # the precision in force at the call: EXACT here
        with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
            y = x @ b
        return x, y, y @ a

    a, b = torch.randn(64, 64, device="tpu"), torch.randn(64, 64, device="tpu")
    x = (a @ b).cpu()
    with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
        y = (x.to("tpu") @ b).cpu()
    z = (y.to("tpu") @ a).cpu()
    cf = torch.compile(f, backend="tpu", fullgraph=True)  # no graph break
    for _ in range(3):  # recorded, then replayed
        gx, gy, gz = (t.cpu() for t in cf(a, b))
        if DRIVER == "host":
            assert torch.equal(gx, x) and torch.equal(gy, y) and torch.equal(gz, z)
        else:  # XLA may sum in another order inside the graph; a last-bit change can flip a bf16 rounding
            for g, want in ((gx, x), (gy, y), (gz, z)):  # values up to ~1e3
                torch.testing.assert_close(g, want, rtol=1e-5, atol=1e-3)
    assert not torch.equal(gy, x.to("tpu").cpu() @ b.cpu()), "the block's matmul rounds to bf16"
    assert torchtpu._C.get_thread_precision() == -1  # the block's override is gone


def test_a_graph_break_inside_a_precision_block():
    def f(a, b):
        with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
            y = a @ b
            torch._dynamo.graph_break()
            return y @ b

    a, b = torch.randn(64, 64, device="tpu"), torch.randn(64, 64, device="tpu")
    with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
        want = ((a @ b) @ b).cpu()
    cf = torch.compile(f, backend="tpu")
    for _ in range(3):
        assert torch.equal(cf(a, b).cpu(), want)
        assert torchtpu._C.get_thread_precision() == -1


def test_unknown_backend_option_is_refused():
    f = torch.compile(lambda x: x + 1, backend="tpu", options={"nmae": "x"})
    with pytest.raises(Exception, match=r"unknown option.*nmae.*valid"):
        f(torch.ones(2, device="tpu"))


def test_google_options_are_accepted_and_name_the_program(capfd, monkeypatch):
    monkeypatch.setenv("TORCHTPU_LOG", "compile")
    f = torch.compile(lambda x: x + 1, backend="tpu",
                      options={"name": "my_block", "async_compile": True, "num_dynamic_buckets": 2})
    assert torch.equal(f(torch.ones(2, device="tpu")).cpu(), torch.full((2,), 2.0))
    assert "my_block inference" in capfd.readouterr().err


def test_recompiles_are_explained_under_torchtpu_log_compile():
    code = """
import torch, torchtpu
def f(x):
    return (x.sin() * 2).sum(-1)
g = torch.compile(f, backend="tpu")
for n in (4, 4, 5):
    g(torch.randn(3, n, device="tpu")).cpu()
g(torch.randn(3, 5, device="tpu", dtype=torch.float64)).cpu()
"""
    r = run_python(code, env={"TORCHTPU_LOG": "compile"})
    assert r.returncode == 0, r.stderr
    err = r.stderr
    assert "recompiled because input 0: (3, 4) float32 -> (3, 5) float32" in err, err
    assert "recompiled because input 0: (3, 5) float32 -> (3, 5) float64" in err, err
    assert "compiled (new structure)" in err and "replayed" in err and "compiled (new dtype)" in err, err


def test_an_error_inside_a_compiled_graph_raises_at_the_sync_and_the_device_stays_usable():
    def f(x, i):
        return torch.index_select(x * 2, 0, i) + 1

    cf = torch.compile(f, backend="tpu")
    x = torch.arange(3.0, device="tpu")
    out = cf(x, torch.tensor([7], device="tpu"))
    with pytest.raises(IndexError, match=r"graph .* out of"):
        out.cpu()
    assert torch.equal(cf(x, torch.tensor([2], device="tpu")).cpu(), torch.tensor([5.0]))
    out = cf(x, torch.tensor([9], device="tpu"))  # replayed: the same error, naming the op and its line
    with pytest.raises(IndexError, match=r"aten::index_select \(recorded at .*test_compile\.py:\d+\), in graph .*"
                                         r"\(replayed\): index 9 is out of"):
        out.cpu()


def test_an_error_inside_a_compiled_graph_raises_at_the_call_in_debug_mode():
    torchtpu.set_eager_mode("debug")
    cf = torch.compile(lambda x, i: torch.index_select(x, 0, i), backend="tpu")
    with pytest.raises(IndexError):
        cf(torch.arange(3.0, device="tpu"), torch.tensor([9], device="tpu"))
    assert torch.equal(cf(torch.arange(3.0, device="tpu"), torch.tensor([1], device="tpu")).cpu(),
                       torch.tensor([1.0]))


def test_hf_generate_with_a_static_cache_compiles_and_matches_cpu():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 128, (1, 6))
    want = m.generate(ids, max_new_tokens=6, do_sample=False)
    before = graphs()
    got = m.to("tpu").generate(ids.to("tpu"), max_new_tokens=6, do_sample=False, cache_implementation="static")
    assert got.cpu().tolist() == want.tolist()
    assert graphs() > before, "generate(cache_implementation='static') compiles its decoding step"

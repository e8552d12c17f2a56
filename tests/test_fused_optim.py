"""Fused optimizer steps on the device: torch.optim.{Adam,AdamW,SGD}(fused=True) on tpu params match the unfused
optimizer on the CPU; the fused ops themselves match PyTorch's CPU fused kernels argument by argument (grad_scale,
found_inf, amsgrad, maximize, weight_decay, Tensor lr); nothing falls back to the CPU."""
import itertools

import pytest
import torch
import torchtpu

STEPS = 6
RTOL, ATOL = 1e-5, 1e-6  # float32: the device and CPU differ only in rounding order


def _shapes():
    return [(5, 3), (7,), (2, 3, 4)]


def _run(opt_cls, kwargs, device, fused, lr_tensor=False):
    """STEPS optimizer steps on seeded params and grads; returns the params and the optimizer state on the CPU."""
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=gen).to(device).requires_grad_() for s in _shapes()]
    kwargs = dict(kwargs)
    if lr_tensor:
        kwargs["lr"] = torch.tensor(kwargs["lr"])
    if fused:
        opt = opt_cls(params, fused=True, **kwargs)
    else:
        opt = opt_cls(params, foreach=False, **kwargs)
    for _ in range(STEPS):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen).to(device)
        opt.step()
    state = [{k: v.detach().cpu() for k, v in opt.state[p].items() if isinstance(v, torch.Tensor)} for p in params]
    return [p.detach().cpu() for p in params], state


def _assert_runs_match(got, want):
    (gp, gs), (wp, ws) = got, want
    for g, w in zip(gp, wp):
        torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)
    for g, w in zip(gs, ws):
        assert sorted(g) == sorted(w)
        for k in w:
            torch.testing.assert_close(g[k].to(w[k].dtype), w[k], rtol=RTOL, atol=ATOL, msg=lambda m: f"{k}: {m}")


ADAM_CASES = [dict(lr=0.01, amsgrad=a, maximize=m, weight_decay=wd)
              for a, m, wd in itertools.product([False, True], [False, True], [0.0, 0.1])]
SGD_CASES = [dict(lr=0.05, momentum=0.0, weight_decay=0.0),
             dict(lr=0.05, momentum=0.0, weight_decay=0.1, maximize=True),
             dict(lr=0.05, momentum=0.9),
             dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
             dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True, weight_decay=0.01)]


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW], ids=["Adam", "AdamW"])
@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=str)
def test_fused_adam_matches_cpu(opt_cls, kwargs):
    with torch.tpu.cpu_fallback_mode(False):
        got = _run(opt_cls, kwargs, "tpu", fused=True)
    _assert_runs_match(got, _run(opt_cls, kwargs, "cpu", fused=False))


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=str)
def test_fused_sgd_matches_cpu(kwargs):
    with torch.tpu.cpu_fallback_mode(False):
        got = _run(torch.optim.SGD, kwargs, "tpu", fused=True)
    _assert_runs_match(got, _run(torch.optim.SGD, kwargs, "cpu", fused=False))


ADAGRAD_CASES = [dict(lr=0.05), dict(lr=0.05, lr_decay=0.1, weight_decay=0.1),
                 dict(lr=0.05, lr_decay=0.01, maximize=True, initial_accumulator_value=0.2, eps=1e-6)]


@pytest.mark.parametrize("kwargs", ADAGRAD_CASES, ids=str)
def test_fused_adagrad_matches_cpu(kwargs):
    with torch.tpu.cpu_fallback_mode(False):
        got = _run(torch.optim.Adagrad, kwargs, "tpu", fused=True)
    _assert_runs_match(got, _run(torch.optim.Adagrad, kwargs, "cpu", fused=False))
    _assert_runs_match(got, _run(torch.optim.Adagrad, kwargs, "cpu", fused=True))  # and CPU's own fused kernel


@pytest.mark.parametrize("scale,found_inf", [(None, None), (8.0, 0.0), (8.0, 1.0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_fused_adagrad_op_matches_cpu_kernel(dtype, scale, found_inf):
    gen = torch.Generator().manual_seed(1)
    cpu = {"params": [torch.randn(s, generator=gen).to(dtype) for s in _shapes()]}
    cpu["grads"] = [torch.randn(p.shape, generator=gen).to(dtype) for p in cpu["params"]]
    cpu["state_sums"] = [torch.rand(p.shape, generator=gen).to(dtype) for p in cpu["params"]]
    cpu["state_steps"] = [torch.tensor(float(k + 2)) for k in range(len(cpu["params"]))]
    dev = {k: [t.to("tpu") for t in v] for k, v in cpu.items()}
    kw = dict(lr=0.03, lr_decay=0.05, weight_decay=0.02, eps=1e-8, maximize=False)
    extra = lambda d: dict(grad_scale=None if scale is None else torch.tensor(scale, device=d),
                           found_inf=None if found_inf is None else torch.tensor(found_inf, device=d))
    torch.ops.aten._fused_adagrad_(*cpu.values(), **kw, **extra("cpu"))
    with torch.tpu.cpu_fallback_mode(False):
        torch.ops.aten._fused_adagrad_(*dev.values(), **kw, **extra("tpu"))
    tol = dict(rtol=1.6e-2, atol=1e-5) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)
    for k in ("params", "grads", "state_sums"):
        for g, w in zip(dev[k], cpu[k]):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g.cpu(), w, **tol, msg=lambda m: f"{k}: {m}")


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD])
def test_fused_tensor_lr_matches_cpu(opt_cls):
    kwargs = dict(lr=0.02, weight_decay=0.1) if opt_cls is not torch.optim.SGD else dict(lr=0.02, momentum=0.9)
    with torch.tpu.cpu_fallback_mode(False):
        got = _run(opt_cls, kwargs, "tpu", fused=True, lr_tensor=True)
    _assert_runs_match(got, _run(opt_cls, kwargs, "cpu", fused=False, lr_tensor=True))


def test_fused_and_foreach_supported_on_tpu():
    from torch.optim.optimizer import _get_foreach_kernels_supported_devices, _get_fused_kernels_supported_devices
    assert "tpu" in _get_fused_kernels_supported_devices()
    assert "tpu" in _get_foreach_kernels_supported_devices()


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD])
def test_foreach_matches_cpu(opt_cls):
    kwargs = dict(lr=0.01, weight_decay=0.1)
    if opt_cls is torch.optim.SGD:
        kwargs["momentum"] = 0.9
    gen = torch.Generator().manual_seed(0)
    start = [torch.randn(s, generator=gen) for s in _shapes()]
    grads = [[torch.randn(s, generator=gen) for s in _shapes()] for _ in range(STEPS)]
    results = []
    for device, foreach in (("tpu", True), ("cpu", False)):
        params = [p.clone().to(device).requires_grad_() for p in start]
        opt = opt_cls(params, foreach=foreach, **kwargs)
        with torch.tpu.cpu_fallback_mode(device != "tpu"):
            for step_grads in grads:
                for p, g in zip(params, step_grads):
                    p.grad = g.to(device)
                opt.step()
        results.append([p.detach().cpu() for p in params])
    for g, w in zip(*results):
        torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


# ---- the ops themselves against PyTorch's CPU fused kernels ----

def _adam_state(amsgrad, dtype=torch.float32, steps=3.0):
    gen = torch.Generator().manual_seed(1)
    n = len(_shapes())
    t = {
        "params": [torch.randn(s, generator=gen).to(dtype) for s in _shapes()],
        "grads": [torch.randn(s, generator=gen).to(dtype) for s in _shapes()],
        "exp_avgs": [torch.randn(s, generator=gen).to(dtype) * 0.1 for s in _shapes()],
        "exp_avg_sqs": [torch.rand(s, generator=gen).to(dtype) * 0.1 for s in _shapes()],
        "max_exp_avg_sqs": [torch.rand(s, generator=gen).to(dtype) * 0.1 for s in _shapes()] if amsgrad else [],
        "state_steps": [torch.tensor(steps + i) for i in range(n)],
    }
    return t


def _to(state, device):
    return {k: [t.to(device) for t in v] for k, v in state.items()}


def _call_adam(op, state, **kw):
    op(state["params"], state["grads"], state["exp_avgs"], state["exp_avg_sqs"], state["max_exp_avg_sqs"],
       state["state_steps"], **kw)


def _assert_states_match(got, want, rtol=RTOL, atol=ATOL):
    for k in want:
        for g, w in zip(got[k], want[k]):
            torch.testing.assert_close(g.cpu(), w, rtol=rtol, atol=atol, msg=lambda m: f"{k}: {m}")


ADAM_OP_CASES = [dict(amsgrad=a, maximize=m, weight_decay=wd, scale=s, found_inf=f)
                 for a, m, wd, s, f in itertools.product([False, True], [False, True], [0.0, 0.05],
                                                         [None, 64.0], [None, 0.0, 1.0])]


@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_adamw_"])
@pytest.mark.parametrize("case", ADAM_OP_CASES, ids=str)
def test_fused_adam_op_matches_cpu_kernel(name, case):
    op = getattr(torch.ops.aten, name)
    amsgrad = case["amsgrad"]
    cpu = _adam_state(amsgrad)
    dev = _to(cpu, "tpu")
    before = {k: [t.clone() for t in v] for k, v in cpu.items()}
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=case["weight_decay"], eps=1e-8, amsgrad=amsgrad,
              maximize=case["maximize"])
    extra_cpu, extra_dev = {}, {}
    if case["scale"] is not None:
        extra_cpu["grad_scale"] = torch.tensor(case["scale"])
        extra_dev["grad_scale"] = extra_cpu["grad_scale"].to("tpu")
    if case["found_inf"] is not None:
        extra_cpu["found_inf"] = torch.tensor(case["found_inf"])
        extra_dev["found_inf"] = extra_cpu["found_inf"].to("tpu")
    _call_adam(op, cpu, **kw, **extra_cpu)
    with torch.tpu.cpu_fallback_mode(False):
        _call_adam(op, dev, **kw, **extra_dev)
    _assert_states_match(dev, cpu)
    if case["found_inf"] == 1.0:  # the step is skipped: nothing written, not even the unscaled grads
        _assert_states_match(dev, before, rtol=0, atol=0)
    else:
        with pytest.raises(AssertionError):
            _assert_states_match(dev, {"params": before["params"]}, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_adamw_"])
def test_fused_adam_device_lr_tensor(name):
    """The Tensor-lr overload with lr on the device (as torch.optim passes it for a device lr) equals the float-lr
    overload."""
    op = getattr(torch.ops.aten, name)
    kw = dict(beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=True, maximize=False)
    by_float = _to(_adam_state(True), "tpu")
    by_tensor = _to(_adam_state(True), "tpu")
    with torch.tpu.cpu_fallback_mode(False):
        _call_adam(op, by_float, lr=0.003, **kw)
        _call_adam(op.tensor_lr, by_tensor, lr=torch.tensor(0.003, device="tpu"), **kw)
    _assert_states_match(by_tensor, {k: [t.cpu() for t in v] for k, v in by_float.items()})


def test_fused_adam_bfloat16_matches_cpu_kernel():
    cpu = _adam_state(True, dtype=torch.bfloat16)
    dev = _to(cpu, "tpu")
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.05, eps=1e-8, amsgrad=True, maximize=True,
              grad_scale=torch.tensor(8.0))
    _call_adam(torch.ops.aten._fused_adamw_, cpu, **kw)
    kw["grad_scale"] = kw["grad_scale"].to("tpu")
    with torch.tpu.cpu_fallback_mode(False):
        _call_adam(torch.ops.aten._fused_adamw_, dev, **kw)
    for k in cpu:
        for g, w in zip(dev[k], cpu[k]):
            assert g.dtype == w.dtype
    _assert_states_match(dev, cpu, rtol=1.6e-2, atol=1e-5)  # one bfloat16 rounding step


SGD_OP_CASES = [dict(momentum=mo, first=fs, nesterov=ne, maximize=mx, weight_decay=wd, scale=s, found_inf=f)
                for mo, fs, ne, mx, wd, s, f in itertools.product([0.0, 0.9], [False, True], [False, True],
                                                                  [False, True], [0.0, 0.01], [None, 16.0],
                                                                  [None, 1.0])
                if not (mo == 0.0 and (fs or ne))]


@pytest.mark.parametrize("case", SGD_OP_CASES, ids=str)
def test_fused_sgd_op_matches_cpu_kernel(case):
    gen = torch.Generator().manual_seed(2)
    cpu = {"params": [torch.randn(s, generator=gen) for s in _shapes()],
           "grads": [torch.randn(s, generator=gen) for s in _shapes()],
           "bufs": [torch.randn(s, generator=gen) for s in _shapes()] if case["momentum"] else []}
    dev = _to(cpu, "tpu")
    before = {k: [t.clone() for t in v] for k, v in cpu.items()}
    kw = dict(weight_decay=case["weight_decay"], momentum=case["momentum"], lr=0.1, dampening=0.2,
              nesterov=case["nesterov"], maximize=case["maximize"], is_first_step=case["first"])
    extra_cpu = {}
    if case["scale"] is not None:
        extra_cpu["grad_scale"] = torch.tensor(case["scale"])
    if case["found_inf"] is not None:
        extra_cpu["found_inf"] = torch.tensor(case["found_inf"])
    extra_dev = {k: v.to("tpu") for k, v in extra_cpu.items()}
    torch.ops.aten._fused_sgd_(cpu["params"], cpu["grads"], cpu["bufs"], **kw, **extra_cpu)
    with torch.tpu.cpu_fallback_mode(False):
        torch.ops.aten._fused_sgd_.tensor_lr(dev["params"], dev["grads"], dev["bufs"],
                                             **dict(kw, lr=torch.tensor(0.1, device="tpu")), **extra_dev)
    _assert_states_match(dev, cpu)
    if case["found_inf"] == 1.0:
        _assert_states_match(dev, before, rtol=0, atol=0)


def test_fused_op_list_length_mismatch_raises():
    p = [torch.zeros(3, device="tpu")]
    with pytest.raises(RuntimeError):
        torch.ops.aten._fused_adamw_(p, p, p, p, [], [], lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0,
                                     eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError):
        torch.ops.aten._fused_sgd_(p, p, [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0,
                                   nesterov=False, maximize=False, is_first_step=True)


# ---- GradScaler-style skipping through the optimizer, and the Trainer-style step ----

def test_fused_adamw_found_inf_skips_step_through_optimizer():
    """torch.optim passes grad_scale/found_inf to fused steps (what GradScaler does); a step with found_inf set leaves
    the params untouched and the step counter unchanged; the next good step matches the CPU."""
    results = {}
    for device in ("tpu", "cpu"):
        gen = torch.Generator().manual_seed(3)
        params = [torch.randn(s, generator=gen).to(device).requires_grad_() for s in _shapes()]
        opt = torch.optim.AdamW(params, lr=0.01, weight_decay=0.1, fused=True)
        seen = []
        for found in (0.0, 1.0, 0.0):
            for p in params:
                p.grad = (torch.randn(p.shape, generator=gen) * 32.0).to(device)
            if found:
                for p in params:
                    p.grad.view(-1)[0] = float("inf")
            before = [p.detach().clone() for p in params]
            opt.grad_scale = torch.tensor(32.0, device=device)
            opt.found_inf = torch.tensor(found, device=device)
            with torch.tpu.cpu_fallback_mode(device != "tpu"):
                opt.step()
            if found:
                for b, p in zip(before, params):
                    assert torch.equal(b.cpu(), p.detach().cpu())
            seen.append([opt.state[p]["step"].item() for p in params])
        results[device] = ([p.detach().cpu() for p in params], seen)
    assert results["tpu"][1] == [[1.0] * 3, [1.0] * 3, [2.0] * 3]
    assert results["tpu"][1] == results["cpu"][1]
    for g, w in zip(results["tpu"][0], results["cpu"][0]):
        torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


def test_trainer_style_step_does_not_fall_back():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.0, fused=True)  # Trainer's default
    torchtpu.reset_metrics()
    for _ in range(2):
        loss = model(torch.randn(4, 8, device="tpu")).pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
    torch.tpu.synchronize()
    fallbacks = torchtpu.metrics()["fallbacks"]
    assert not [k for k in fallbacks if "_fused_" in k], fallbacks


# ---- GradScaler ----

def _scaler_run(device):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, fused=True)
    scaler = torch.amp.GradScaler(device, init_scale=1024.0, growth_interval=2)
    gen = torch.Generator().manual_seed(1)
    scales = []
    for i in range(6):
        loss = model(torch.randn(3, 4, generator=gen).to(device)).sum()
        scaler.scale(loss).backward()
        if i == 1:
            model.weight.grad.view(-1)[0] = float("inf")
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        scales.append(scaler.get_scale())
    return scales, opt.state[model.weight]["step"].item(), [p.detach().cpu() for p in model.parameters()]


def test_grad_scaler_with_fused_adamw_matches_cpu():
    """GradScaler("tpu") + fused AdamW: the inf step is skipped, the scale backs off and regrows as on the CPU, and
    neither the unscale/inf check nor the scale update falls back."""
    with torch.tpu.cpu_fallback_mode(False):
        scales, steps, params = _scaler_run("tpu")
    want_scales, want_steps, want_params = _scaler_run("cpu")
    assert scales == want_scales == [1024.0, 512.0, 512.0, 1024.0, 1024.0, 2048.0]
    assert steps == want_steps == 5.0
    for g, w in zip(params, want_params):
        torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("found,tracker,scale", [(0.0, 0, 8.0), (0.0, 2, 8.0), (1.0, 2, 8.0), (0.0, 2, 3e38),
                                                 (2.0, 1, 8.0)])
def test_amp_update_scale_matches_cpu_kernel(found, tracker, scale):
    cpu = [torch.tensor([scale]), torch.tensor([tracker], dtype=torch.int32), torch.tensor([found])]
    dev = [t.to("tpu") for t in cpu]
    want = torch._amp_update_scale_(*cpu, 2.0, 0.5, 3)
    with torch.tpu.cpu_fallback_mode(False):
        got = torch._amp_update_scale_(*dev, 2.0, 0.5, 3)
    assert got is dev[0]
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    torch.testing.assert_close(dev[1].cpu(), cpu[1], rtol=0, atol=0)


@pytest.mark.parametrize("bad", [None, float("inf"), float("nan")])
def test_amp_non_finite_check_and_unscale_matches_cpu_kernel(bad):
    gen = torch.Generator().manual_seed(4)
    cpu = [torch.randn(s, generator=gen) for s in _shapes()]
    if bad is not None:
        cpu[1][3] = bad
    dev = [t.to("tpu") for t in cpu]
    found_cpu, inv_cpu = torch.tensor([0.0]), torch.tensor([0.25])
    found_dev, inv_dev = found_cpu.to("tpu"), inv_cpu.to("tpu")
    torch._amp_foreach_non_finite_check_and_unscale_(cpu, found_cpu, inv_cpu)
    with torch.tpu.cpu_fallback_mode(False):
        torch._amp_foreach_non_finite_check_and_unscale_(dev, found_dev, inv_dev)
    assert found_dev.item() == found_cpu.item() == (0.0 if bad is None else 1.0)
    for g, w in zip(dev, cpu):
        torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)


def test_fused_sgd_bfloat16_is_float32_math_rounded():
    """Reduced precision: float32 math, results rounded on store (CUDA's opmath and the CPU kernel's scalar tail).
    Compared with the float32 CPU kernel rounded, not with the bfloat16 CPU kernel: in torch 2.13 its vectorized
    path reads the bfloat16 momentum buffer as float32 (FusedSGDKernel.cpp `fVec::loadu(momentum_buf_ptr + d)`)."""
    gen = torch.Generator().manual_seed(5)
    lists = [[torch.randn(64, generator=gen).bfloat16() for _ in range(3)] for _ in range(3)]
    dev = [[t.to("tpu") for t in lst] for lst in lists]
    ref = [[t.float() for t in lst] for lst in lists]
    kw = dict(weight_decay=0.01, momentum=0.9, lr=0.1, dampening=0.1, nesterov=True, maximize=True,
              is_first_step=False)
    torch._fused_sgd_(*ref, **kw, grad_scale=torch.tensor(3.0))
    with torch.tpu.cpu_fallback_mode(False):
        torch._fused_sgd_(*dev, **kw, grad_scale=torch.tensor(3.0, device="tpu"))
    for got_list, want_list in zip(dev, ref):
        for got, want in zip(got_list, want_list):
            assert got.dtype == torch.bfloat16
            torch.testing.assert_close(got.cpu(), want.bfloat16(), rtol=0, atol=0)

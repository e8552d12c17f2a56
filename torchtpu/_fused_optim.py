"""The fused optimizer steps (`_fused_adam_`, `_fused_adamw_`, `_fused_sgd_`, `_fused_adagrad_`, float- and Tensor-lr
overloads) on the device, as compositions of native device ops. Without them `torch.optim.*(fused=True)` and Hugging Face Trainer's
default `adamw_torch_fused` run on the CPU through the fallback, copying every parameter both ways each step.

Arithmetic follows PyTorch's CPU kernels (aten/src/ATen/native/cpu/Fused{Adam,SGD,Adagrad}Kernel.cpp): grads are divided by
`grad_scale` and the unscaled grads stored back; `maximize` negates the grad used, not the stored one; Adam adds
`weight_decay * param` to the grad, AdamW scales the param by `1 - lr * weight_decay`; reduced-precision tensors are
computed in float32 (the stored grads, moments and buffers are rounded, the math goes on with the float32 values).
`state_steps` are read, not incremented (torch.optim increments them). Where the CPU kernel
reads `found_inf` on the host and returns early, here every written tensor keeps its old value where
`found_inf == 1` (a device select): the same result without a host sync, as on CUDA.
GradScaler's `_amp_foreach_non_finite_check_and_unscale_` and `_amp_update_scale_` are here too, so an amp step
(scale, unscale + inf check, fused step, scale update) stays on the device."""
import torch

_lib = None


def _opmath(t):
    return torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else t.dtype


def _check_lists(op, n, **lists):
    for name, lst in lists.items():
        if len(lst) != n:
            raise RuntimeError(f"{op}: expected {name} to have {n} tensors (one per param), got {len(lst)}")


def _host_lr(lr):
    # A CPU lr tensor is read once on the host as the CPU kernel does (lr.item()); a device lr stays on the device.
    if isinstance(lr, torch.Tensor) and lr.device.type == "cpu":
        return lr.item()
    return lr


def _store(dst, new, skip):
    """dst <- new, or dst unchanged where the step is skipped (skip: a 0-dim device bool tensor or None)."""
    if skip is not None:
        new = torch.where(skip, dst, new.to(dst.dtype))
    dst.copy_(new)


def _skip_mask(found_inf):
    return None if found_inf is None else (found_inf == 1.0)


def _unscaled_grad(grad, grad_scale, skip, math_dtype):
    g = grad.to(math_dtype)
    if grad_scale is not None:
        g = g / grad_scale
        _store(grad, g, skip)
    return g


def _adam(op, adamw, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
          weight_decay, eps, amsgrad, maximize, grad_scale, found_inf):
    n = len(params)
    _check_lists(op, n, grads=grads, exp_avgs=exp_avgs, exp_avg_sqs=exp_avg_sqs, state_steps=state_steps)
    _check_lists(op, n if amsgrad else 0, max_exp_avg_sqs=max_exp_avg_sqs)
    lr = _host_lr(lr)
    skip = _skip_mask(found_inf)
    for i in range(n):
        param, exp_avg, exp_avg_sq = params[i], exp_avgs[i], exp_avg_sqs[i]
        dt = _opmath(param)
        # Bias corrections in double from the device step counter, as the CPU kernel computes them from step.item().
        step = state_steps[i].to(device=param.device, dtype=torch.float64)
        bias_correction1 = 1 - torch.pow(beta1, step)
        bias_correction2_sqrt = torch.sqrt(1 - torch.pow(beta2, step))
        step_size = lr / bias_correction1

        g = _unscaled_grad(grads[i], grad_scale, skip, dt)
        if maximize:
            g = -g
        p = param.to(dt)
        if weight_decay != 0:
            if adamw:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + p * weight_decay
        m = exp_avg.to(dt) * beta1 + g * (1 - beta1)
        v = exp_avg_sq.to(dt) * beta2 + g * g * (1 - beta2)
        if amsgrad:
            v_max = torch.maximum(max_exp_avg_sqs[i].to(dt), v)
            _store(max_exp_avg_sqs[i], v_max, skip)
            denom = torch.sqrt(v_max) / bias_correction2_sqrt + eps
        else:
            denom = torch.sqrt(v) / bias_correction2_sqrt + eps
        p = p - step_size * m / denom
        _store(exp_avg, m, skip)
        _store(exp_avg_sq, v, skip)
        _store(param, p, skip)


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    _adam("_fused_adam_", False, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
          beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf)


def _fused_adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                 weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    _adam("_fused_adamw_", True, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
          beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf)


def _fused_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
               is_first_step, grad_scale=None, found_inf=None):
    n = len(params)
    _check_lists("_fused_sgd_", n, grads=grads)
    if momentum != 0:
        _check_lists("_fused_sgd_", n, momentum_buffer_list=momentum_buffer_list)
    lr = _host_lr(lr)
    skip = _skip_mask(found_inf)
    for i in range(n):
        param = params[i]
        dt = _opmath(param)
        g = _unscaled_grad(grads[i], grad_scale, skip, dt)
        if maximize:
            g = -g
        p = param.to(dt)
        if weight_decay != 0:
            g = g + p * weight_decay
        if momentum != 0:
            buf = momentum_buffer_list[i]
            b = g if is_first_step else buf.to(dt) * momentum + g * (1 - dampening)
            _store(buf, b, skip)
            g = g + b * momentum if nesterov else b
        _store(param, p - g * lr, skip)


def _fused_adagrad(params, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize,
                   grad_scale=None, found_inf=None):
    n = len(params)
    _check_lists("_fused_adagrad_", n, grads=grads, state_sums=state_sums, state_steps=state_steps)
    lr = _host_lr(lr)
    skip = _skip_mask(found_inf)
    for i in range(n):
        param = params[i]
        dt = _opmath(param)
        # The CPU kernel rounds its float constants to a reduced-precision param's dtype before the float32 math.
        low = dt != param.dtype
        rnd = (lambda v: torch.tensor(v, dtype=param.dtype).item()) if low else (lambda v: v)
        g = _unscaled_grad(grads[i], grad_scale, skip, dt)
        if maximize:
            g = -g
        p = param.to(dt)
        if weight_decay != 0:
            g = g + p * rnd(weight_decay)
        s = state_sums[i].to(dt) + g * g
        _store(state_sums[i], s, skip)
        # clr = lr / (1 + (step - 1) * lr_decay) in float64, from the step tensor where it lives (no host sync)
        clr = lr / (1.0 + (state_steps[i].to(torch.float64) - 1.0) * lr_decay)
        clr = (clr.to(param.dtype) if low else clr).to(dt)
        _store(param, p - clr * g / (s.sqrt() + rnd(eps)), skip)


def register():
    global _lib
    _lib = torch.library.Library("aten", "IMPL")
    for name, fn in (("_fused_adam_", _fused_adam), ("_fused_adamw_", _fused_adamw), ("_fused_sgd_", _fused_sgd),
                     ("_fused_adagrad_", _fused_adagrad)):
        _lib.impl(name, fn, "PrivateUse1")
        _lib.impl(name + ".tensor_lr", fn, "PrivateUse1")
    register_amp()


# ---- GradScaler's two ops (torch.amp.GradScaler("tpu")), which feed grad_scale / found_inf to the steps above ----

def _amp_non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """Every grad is multiplied by inv_scale; found_inf is set to 1 if any grad holds an inf or NaN (never reset),
    as CUDA's kernel does."""
    for g in grads:
        if g.device != inv_scale.device or g.device != found_inf.device:
            raise RuntimeError("_amp_foreach_non_finite_check_and_unscale_: all tensors must be on the same device")
        non_finite = torch.logical_not(torch.isfinite(g).all())
        found_inf.copy_(torch.where(non_finite, torch.ones_like(found_inf), found_inf))
        g.copy_(g.to(torch.float32) * inv_scale)


def _amp_update_scale(scale, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval):
    """CUDA's amp_update_scale_cuda_kernel as device selects: back off and reset the tracker on found_inf; else
    count the success and grow the scale (if the grown scale is finite) every growth_interval successes."""
    found = found_inf != 0
    successful = growth_tracker + 1
    grow = torch.logical_and(torch.logical_not(found), successful == growth_interval)
    grown = scale * scale_growth_factor
    grown = torch.where(torch.isfinite(grown), grown, scale)
    new_scale = torch.where(found, scale * scale_backoff_factor, torch.where(grow, grown, scale))
    new_tracker = torch.where(torch.logical_or(found, grow), torch.zeros_like(growth_tracker), successful)
    scale.copy_(new_scale)
    growth_tracker.copy_(new_tracker)
    return scale


def register_amp():
    _lib.impl("_amp_foreach_non_finite_check_and_unscale_", _amp_non_finite_check_and_unscale, "PrivateUse1")
    _lib.impl("_amp_update_scale_", _amp_update_scale, "PrivateUse1")

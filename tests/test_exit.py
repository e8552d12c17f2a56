"""A process that ran backward passes on tpu exits cleanly, every time (autograd's device thread and the runtime's
workers must not be torn down under each other at interpreter exit)."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SCRIPT = r"""
import torch, torchtpu

class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2

m = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4)).to("tpu")
for p in m.parameters():
    p.register_hook(lambda g: g * 1)
x = torch.randn(16, 32, device="tpu")
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(Twice.apply(m(x)), torch.randint(0, 4, (16,), device="tpu")).backward()
    opt.step()
# exit right after the last backward, with its work possibly still queued
"""

RUNS = 32


def _run(_):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)


def test_processes_that_ran_backward_exit_cleanly_every_time():
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(_run, range(RUNS)))
    bad = [(r.returncode, r.stderr[-800:]) for r in results if r.returncode != 0 or "terminate called" in r.stderr]
    assert not bad, f"{len(bad)} of {RUNS} runs did not exit cleanly; first: {bad[0]}"

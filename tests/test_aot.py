"""torchtpu.aot_compile: the programs a training step runs, compiled by libtpu for real TPU topologies with no TPU
here, with XLA's memory statistics and cost analysis; a program too large for the chip's HBM is reported as such.

Every process that loads libtpu runs in a network namespace with only loopback (`unshare -n`) and with the
environment that tells libtpu it is on no cloud host: libtpu would otherwise ask a metadata server. So each test
runs its body in such a child process, and is skipped where that cannot be made (no unshare, not root, no libtpu).
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, default_pass_only

LIBTPU_ENV = {"TPU_SKIP_MDS_QUERY": "1", "TPU_ACCELERATOR_TYPE": "v5litepod-4", "TPU_WORKER_ID": "0",
              "TPU_WORKER_HOSTNAMES": "localhost", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "TF_CPP_MIN_LOG_LEVEL": "1"}


def _isolation_problem():
    if importlib.util.find_spec("libtpu") is None:
        return "libtpu is not installed (make deps installs it)"
    if not shutil.which("unshare"):
        return "no unshare(1) to run libtpu without a network"
    r = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return None if r.returncode == 0 else f"cannot make a network namespace: {r.stderr.decode().strip()}"


pytestmark = [default_pass_only,
              pytest.mark.skipif(_isolation_problem() is not None, reason=str(_isolation_problem()))]


def run_isolated(code, timeout=600):
    """Runs code in a fresh interpreter with no network (unshare -n) and libtpu's environment; returns its last
    stdout line as JSON."""
    env = dict(os.environ)
    env.pop("TORCHTPU_DRIVER", None)  # the step itself runs on the host driver
    env.update(LIBTPU_ENV)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run(["unshare", "-n", sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


STEP = """
import json, torch, torchtpu
from tests.models import Block
torch.manual_seed(0)
block = Block(64, 4).to("tpu")
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
x = torch.randn(4, 32, 64, device="tpu")

def step(x):
    loss = block(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

out = {}
for target in TARGETS:
    progs = torchtpu.aot_compile(step, x, target=target, mode=MODE)
    out[target] = [dict(fits=p.fits, exe=len(p.executable), arg=p.argument_bytes, temp=p.temp_bytes,
                        flops=p.cost.get("flops", 0), dev=p.device_bytes) for p in progs]
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", ["fused", "compiled"])
def test_a_transformer_blocks_training_step_compiles_for_tpu_targets(mode):
    targets = ["v5e:2x2", "v6e:1x1", "tpu7x:2x2x1"]
    out = run_isolated(STEP.replace("TARGETS", repr(targets)).replace("MODE", repr(mode)))
    for target in targets:
        progs = out[target]
        assert progs, f"no program captured for {target}"
        for p in progs:
            assert p["fits"] and p["exe"] > 1000 and p["dev"] >= 0
        # the step's matmuls are in there: forward, backward (a 4x32x64 block: >= 2 * 3 * 128 * 64 * 256 flops)
        assert sum(p["flops"] for p in progs) > 2 * 3 * 128 * 64 * 256, progs
        # the parameters (about 50 K floats) are arguments of some program
        assert max(p["arg"] for p in progs) > 4 * 49_000
    if mode == "compiled":  # one forward and one backward graph, plus the optimizer's own windows
        assert len(out[targets[0]]) >= 2


def test_a_program_too_large_for_the_chips_hbm_is_reported_as_not_fitting():
    # 3 x 16 GiB of f32 matrices: more than a v5e chip's 16 GiB of HBM, within a v5p chip's 95 GiB
    code = """
import json, torchtpu
from torchtpu._aot import compile_programs
n = 65536
t = f"tensor<{n}x{n}xf32>"
text = ('module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\\n'
        f'  func.func public @main(%a: {t}, %b: {t}) -> ({t}) {{\\n'
        f'    %0 = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<'
        f'lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}} : ({t}, {t}) -> {t}\\n'
        f'    "func.return"(%0) : ({t}) -> ()\\n  }}\\n}}\\n')
small, = compile_programs([text], "v5p:2x2x1")
big, = compile_programs([text], "v5e:2x2")
print(json.dumps([small.fits, small.device_bytes, big.fits, big.error]))
"""
    small_fits, small_bytes, big_fits, error = run_isolated(code)
    assert small_fits and small_bytes >= 3 * 2 ** 34
    assert not big_fits and "memory" in error.lower()


def test_an_unknown_topology_is_an_error_naming_it():
    code = """
import json, torchtpu
from torchtpu._aot import compile_programs
try:
    compile_programs(['module {}'], "v99:1x1")
    print(json.dumps("no error"))
except Exception as e:
    print(json.dumps(f"{type(e).__name__}: {e}"))
"""
    msg = run_isolated(code)
    assert "v99:1x1" in msg and "no error" not in msg

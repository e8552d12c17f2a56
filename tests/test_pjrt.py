"""The PJRT driver seen from Python, in child processes (TORCHTPU_DRIVER is read once, at start-up), so these can
run in any pass whatever driver the suite itself uses (CI runs them in its default pass alone): the same training
step on pjrt as on the host driver, the persistent cache serving a second process, the plugin named by
get_device_name, and clear errors for a missing plugin. (`TORCHTPU_DRIVER=pjrt make test` runs the whole suite on
the driver; ctests/test_pjrt.c drives it from C.)"""
import json

import pytest

from tests.conftest import default_pass_only, run_python

pytestmark = default_pass_only

TRAIN = """
import json, torch, torchtpu
from tests.models import TinyGPT, gpt_loss
torch.manual_seed(0)
model = TinyGPT().to("tpu")
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(0)
x = torch.randint(0, 50, (4, 16), generator=g).to("tpu")
y = torch.randint(0, 50, (4, 16), generator=g).to("tpu")
losses = []
for _ in range(3):
    loss = gpt_loss(model, x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item())
s = torch.tpu._get_cache_stats()
print(json.dumps({"name": torch.tpu.get_device_name(), "losses": losses, "compiles": s.num_compilations,
                  "disk_hits": s.num_disk_hits, "disk_writes": s.num_disk_writes, "disk_active": s.disk_active}))
"""


def _run(env, code=TRAIN):
    r = run_python(code, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["fused", "strict"])
def test_a_training_step_on_pjrt_matches_the_host_driver(mode, tmp_path):
    cache = {"TORCHTPU_CACHE_DIR": str(tmp_path), "TORCHTPU_EAGER_MODE": mode}
    host = _run({"TORCHTPU_DRIVER": "host", **cache})
    pjrt = _run({"TORCHTPU_DRIVER": "pjrt", **cache})
    assert host["name"] == "torchtpu host driver"
    assert pjrt["name"].startswith("torchtpu pjrt driver (pjrt xla_cpu_pjrt.so cpu")
    # exact f32 matmuls on both (the suite's precision); XLA sums in its own order
    for a, b in zip(pjrt["losses"], host["losses"]):
        assert a == pytest.approx(b, rel=1e-4)
    assert pjrt["losses"][2] < pjrt["losses"][0]  # it trains
    assert pjrt["disk_active"] and not host["disk_active"]


def test_a_second_process_loads_the_executables_from_the_persistent_cache(tmp_path):
    env = {"TORCHTPU_DRIVER": "pjrt", "TORCHTPU_CACHE_DIR": str(tmp_path)}
    first = _run(env)
    second = _run(env)
    assert first["disk_writes"] == first["compiles"] > 0 and first["disk_hits"] == 0
    assert second["disk_hits"] == first["disk_writes"] and second["disk_writes"] == 0
    assert second["losses"] == first["losses"]  # the same executables


def test_a_missing_plugin_is_a_clear_error():
    code = """
import torch, torchtpu
print(torch.tpu.is_available())
try:
    torch.ones(2, device="tpu")
except RuntimeError as e:
    print("error:", e)
"""
    r = run_python(code, env={"TORCHTPU_DRIVER": "pjrt", "TORCHTPU_PJRT_PLUGIN": "/nonexistent/plugin.so"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False"
    assert "cannot load the plugin '/nonexistent/plugin.so'" in lines[1]

"""The test harness itself: a test cannot pass while work it queued fails unseen."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LEAVES_A_FAILURE = textwrap.dedent('''
    import torch
    import torchtpu

    def test_queues_an_out_of_range_index_and_returns():
        torchtpu.set_eager_mode("strict")
        x = torch.arange(3.0, device="tpu")
        x[torch.tensor([5], device="tpu")]  # queued; fails on the worker after this body has returned

    def test_the_next_test_runs_with_the_mode_restored():
        assert torch.tpu.get_eager_mode() == MODE
        assert (torch.ones(2, device="tpu") + 1).tolist() == [2.0, 2.0]
''')


def test_a_queued_op_failing_after_the_test_body_fails_that_test_and_state_is_restored(tmp_path):
    code = "import torch, torchtpu; print(torch.tpu.get_eager_mode())"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k in ("TORCHTPU_EAGER_MODE", "TPU_LAUNCH_BLOCKING", "TORCH_TPU_LAUNCH_BLOCKING"):
        env.pop(k, None)
    mode = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip()
    (tmp_path / "test_leaves_a_failure.py").write_text(LEAVES_A_FAILURE.replace("MODE", repr(mode)))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                        "--rootdir", str(tmp_path), str(tmp_path / "test_leaves_a_failure.py")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "queued tpu work failed at the test's final synchronize: IndexError" in out, out
    # pytest counts the body as passed and the teardown as an error: the run fails, naming the test
    assert "ERROR at teardown of test_queues_an_out_of_range_index_and_returns" in out, out
    assert "2 passed, 1 error" in out, out  # the second test passed: mode restored, device usable

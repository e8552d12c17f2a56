#!/usr/bin/env python3
"""Run PyTorch's own device-generic tests against tpu and write a summary (docs/conformance.md).

    python3 tools/conformance.py                                  # the four files in ../shared/pytorch-tests/test
    python3 tools/conformance.py --tests-dir ~/pytorch/test --files test_view_ops.py -k "not slow"
    python3 tools/conformance.py --ci                             # CI's subset, gated by tools/conformance_baseline.txt

The test files are not edited: tools/conformance_plugin.py (a pytest plugin, see its docstring) imports torchtpu
first, bridges the version skew, declares the dtypes tpu refuses as unsupported for the device, and records each
test's start and outcome. Each file runs in child pytest processes of at most --chunk tests; when a child dies (a
crash) or goes silent for longer than the per-test timeout plus a grace period (a hang in native code), the test it
was running is recorded as crash / timeout and a new child carries on after it. Outcomes: pass, fail (the test's
assertion or exception), error (setup/teardown), skip (PyTorch's own skip decorators), xfail/xpass (PyTorch's own
expected failures), timeout, crash.

The CI gate (--ci) is a comparison with a recorded baseline, by test id: the run fails when any test crashes or
hangs, or when a test the baseline lists as passing does not pass now (a regression). New passes never fail it
(they are printed, to be recorded with --write-baseline). The baseline is the list of passing ids of the CI subset.
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")
DEFAULT_TESTS_DIR = os.path.join(os.path.dirname(ROOT), "shared", "pytorch-tests", "test")
DEFAULT_FILES = ("test_view_ops.py", "test_type_promotion.py", "test_shape_ops.py", "test_ops.py")
# CI: the three smaller files, whole (test_ops.py alone is far beyond CI's budget on 2 cores).
CI_FILES = ("test_view_ops.py", "test_type_promotion.py", "test_shape_ops.py")
CI_BASELINE = os.path.join(TOOLS, "conformance_baseline.txt")
GRACE_S = 60  # silence beyond the per-test timeout before a child is killed as hung
OUTCOMES = ("pass", "fail", "error", "skip", "xfail", "xpass", "timeout", "crash")
# xpass is not a failure of the device: a test PyTorch marks expectedFailure for every device (mostly CUDA's known
# differences from CPU, e.g. nan/inf handling in special functions) passed on tpu. Counted and listed apart.
FAILING = ("fail", "error", "timeout", "crash")
REFUSED_MARK = "does not support tensors of dtype"
# The same refusal seen through a Python operator: Tensor.__add__ etc. turn the TypeError into NotImplemented, so a
# tensor op with a Python complex scalar (a complex result) reads "unsupported operand type(s) for +: 'Tensor' and
# 'complex'".
REFUSED_COMPLEX_OPERAND = re.compile(r"unsupported operand type\(s\) for \S+: '(?:Tensor' and 'complex|complex' and 'Tensor)'")


def is_refused_dtype_failure(msg):
    msg = msg or ""
    return REFUSED_MARK in msg or REFUSED_COMPLEX_OPERAND.search(msg) is not None


def _read_new(path, pos):
    """New complete lines of path from byte pos: (records, new pos)."""
    try:
        with open(path, "rb") as f:
            f.seek(pos)
            data = f.read()
    except FileNotFoundError:
        return [], pos
    end = data.rfind(b"\n") + 1
    recs = []
    for line in data[:end].splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    return recs, pos + end


def run_file(args, path, work):
    """Runs one test file to completion over as many children as it takes; returns {id: record}, info."""
    name = os.path.basename(path)
    log = os.path.join(work, name + ".jsonl")
    done_path = os.path.join(work, name + ".done")
    results = {}
    info = {"collected": None, "not_instantiated": {}, "children": 0, "collect_error": ""}
    if args.resume and os.path.exists(log):
        recs, _ = _read_new(log, 0)
        for r in recs:
            if "id" in r:
                results[r["id"]] = r
    else:
        for p in (log, done_path):
            if os.path.exists(p):
                os.remove(p)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([TOOLS, ROOT, env.get("PYTHONPATH", "")])
    env["CONFORMANCE_LOG"] = log
    env["CONFORMANCE_TIMEOUT"] = str(args.timeout)
    env.setdefault("PYTORCH_TESTING_DEVICE_ONLY_FOR", "tpu")
    env.setdefault("PYTORCH_TEST_WITH_SLOW", "1")
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["CONFORMANCE_BYPASS_CUDA_ONLY"] = "1" if args.bypass_cuda_only else "0"
    for k in ("TORCHTPU_EAGER_MODE", "TPU_LAUNCH_BLOCKING", "TORCH_TPU_LAUNCH_BLOCKING", "TORCHTPU_CPU_FALLBACK"):
        env.pop(k, None)
    while True:
        with open(done_path, "w") as f:
            f.write("".join(i + "\n" for i in results))
        cmd = [sys.executable, "-m", "pytest", "-p", "conformance_plugin", "-p", "no:cacheprovider", "-q",
               "--rootdir", os.path.dirname(path), "--conformance-done", done_path,
               "--conformance-max", str(args.chunk), "-o", "console_output_style=classic", name]
        if args.k:
            cmd += ["-k", args.k]
        if args.every > 1:
            cmd += ["--conformance-every", str(args.every)]
        pos = os.path.getsize(log) if os.path.exists(log) else 0
        t_start = time.time()
        child = subprocess.Popen(cmd, cwd=os.path.dirname(path), env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 preexec_fn=(lambda: os.nice(args.nice)) if args.nice else None)
        info["children"] += 1
        out_tail = collections.deque(maxlen=60)
        os.set_blocking(child.stdout.fileno(), False)
        current, last_word, collected, ran, killed = None, time.time(), None, 0, None
        while True:
            try:
                chunk = child.stdout.read()
            except (BlockingIOError, TypeError):
                chunk = None
            if chunk:
                out_tail.extend(chunk.decode("utf-8", "replace").splitlines())
            recs, pos = _read_new(log, pos)
            for r in recs:
                last_word = time.time()
                if "collected" in r:
                    collected = r["collected"]
                    if info["collected"] is None:
                        info["collected"] = r["collected"] + len(results)
                        info["not_instantiated"] = r.get("not_instantiated", {})
                        info["every"] = r.get("every", 1)
                        info["opinfo_restricted"] = r.get("opinfo_restricted", {})
                elif "start" in r:
                    current = r["start"]
                elif "id" in r:
                    results[r["id"]] = r
                    current = None
                    ran += 1
            rc = child.poll()
            if rc is not None:
                break
            silent_for = time.time() - last_word
            limit = (args.timeout + GRACE_S) if current else max(args.timeout + GRACE_S, 900)  # collection is slow
            if silent_for > limit:
                killed = "timeout"
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                break
            time.sleep(0.5)
        rest, _ = _read_new(log, pos)
        for r in rest:
            if "id" in r:
                results[r["id"]] = r
                current = None
                ran += 1
            elif "start" in r:
                current = r["start"]
            elif "collected" in r:
                collected = r["collected"]
        rc = child.returncode
        tail = "\n".join(out_tail)
        if current is not None:  # died or hung in the middle of a test
            if killed:
                msg = f"no progress for {args.timeout + GRACE_S} s (hung in native code?); child killed"
                results[current] = {"id": current, "outcome": "timeout", "msg": msg, "s": time.time() - t_start}
            else:
                sig = -rc if rc is not None and rc < 0 else None
                why = f"signal {signal.Signals(sig).name}" if sig else f"exit status {rc}"
                results[current] = {"id": current, "outcome": "crash", "msg": f"process died ({why}): " +
                                    _crash_lines(tail), "s": time.time() - t_start}
            continue
        if collected is None:  # the child never collected: the file does not import, or pytest failed early
            info["collect_error"] = _crash_lines(tail, 40) or f"exit status {rc}"
            break
        if rc not in (0, 1, 2, 5):  # 2: stopped after a chunk; anything else after the last test is a crash at exit
            info.setdefault("exit_crashes", []).append(f"exit status {rc}: {_crash_lines(tail)}")
        if collected == 0 or ran >= collected:
            break
        if ran >= args.chunk:
            continue  # a full chunk: the rest in a new child
        info["collect_error"] = f"child stopped after {ran} of {collected} tests: {_crash_lines(tail)}"
        break
    return results, info


# ---- the same tests on CPU ----------------------------------------------------------------------------------------
_TPU_IN_CLASS = re.compile(r"(PRIVATEUSE1|TPU)$")
_TPU_IN_NAME = re.compile(r"_tpu(?=_|$)")


def cpu_twin(test_id):
    """test_ops.py::TestCommonPRIVATEUSE1::test_out_abs_tpu_float32 -> test_ops.py::TestCommonCPU::test_out_abs_cpu_float32."""
    parts = test_id.split("::")
    if len(parts) != 3:
        return None
    cls, name = _TPU_IN_CLASS.sub("CPU", parts[1]), _TPU_IN_NAME.sub("_cpu", parts[2])
    return None if cls == parts[1] or name == parts[2] else "::".join((parts[0], cls, name))


def check_on_cpu(args, path, work, results):
    """Runs the CPU instantiation of every tpu failure (not refused-dtype ones) and records its outcome as
    results[id]["cpu"]. A test that fails on PyTorch's own CPU backend as well, in this torch, says nothing about tpu
    (the test file and torch 2.13 disagree: an exception type changed, a dtype rule moved); such failures are
    counted apart. Results persist in <work>/<file>.cpu.jsonl, so --report-only sees them."""
    name = os.path.basename(path)
    log = os.path.join(work, name + ".cpu.jsonl")
    twins = {}
    for tid, r in results.items():
        if r["outcome"] in ("fail", "error") and not is_refused_dtype_failure(r.get("msg")):
            c = cpu_twin(tid)
            if c:
                twins[c] = tid
    if os.path.exists(log):
        os.remove(log)
    if not twins:
        return
    done = os.path.join(work, name + ".cpu.done")
    open(done, "w").close()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([TOOLS, ROOT, env.get("PYTHONPATH", "")])
    env.update(CONFORMANCE_LOG=log, CONFORMANCE_TIMEOUT=str(args.timeout), PYTORCH_TESTING_DEVICE_ONLY_FOR="cpu",
               PYTORCH_TEST_WITH_SLOW="1", TORCH_DEVICE_BACKEND_AUTOLOAD="0", CONFORMANCE_CPU_TWIN="1")
    ids = sorted(twins)
    for k in range(0, len(ids), 200):  # bounded command lines
        cmd = [sys.executable, "-m", "pytest", "-p", "conformance_plugin", "-p", "no:cacheprovider", "-q",
               "--rootdir", os.path.dirname(path), "--conformance-done", done] + ids[k:k + 200]
        subprocess.run(cmd, cwd=os.path.dirname(path), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=max(600, 10 * args.timeout), check=False)
    read_cpu_log(path, work, results)


def read_cpu_log(path, work, results):
    log = os.path.join(work, os.path.basename(path) + ".cpu.jsonl")
    recs, _ = _read_new(log, 0) if os.path.exists(log) else ([], 0)
    by_twin = {cpu_twin(tid): tid for tid in results}
    by_twin.pop(None, None)
    for r in recs:
        tid = by_twin.get(r.get("id")) if "outcome" in r else None
        if tid:
            results[tid]["cpu"] = r["outcome"]


def fails_on_cpu_too(r):
    """The CPU twin failed, or PyTorch marks it an expected failure on CPU (xfail)."""
    return r["outcome"] in ("fail", "error") and r.get("cpu") in ("fail", "error", "xfail")


def read_file_log(path, work):
    """The results a previous run left in work (--report-only): ({id: record}, info), without running anything."""
    name = os.path.basename(path)
    recs, _ = _read_new(os.path.join(work, name + ".jsonl"), 0)
    results, info = {}, {"collected": None, "not_instantiated": {}, "children": 0, "collect_error": ""}
    started = None
    for r in recs:
        if "collected" in r and info["collected"] is None:
            info["collected"], info["not_instantiated"] = r["collected"], r.get("not_instantiated", {})
            info["every"] = r.get("every", 1)
            info["opinfo_restricted"] = r.get("opinfo_restricted", {})
        elif "id" in r:
            results[r["id"]] = r
            started = None
        elif "start" in r:
            started = r["start"]
    if started is not None:
        info["running"] = started
    read_cpu_log(path, work, results)
    return results, info


def _crash_lines(tail, n=12):
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    keep = [ln for ln in lines if re.search(r"Error|error|Fatal|terminate|Abort|Segmentation|signal|SUMMARY", ln)]
    return " | ".join((keep or lines)[-n:])[:1500]


# ---- summary -------------------------------------------------------------------------------------------------------
def _class_of(test_id):
    parts = test_id.split("::")
    return parts[1] if len(parts) > 2 else parts[0]


_NORMALIZE = [
    (re.compile(r"tensor\([^()]*\)"), "tensor(…)"),
    (re.compile(r"\b(torch|numpy)\.(float|int|uint|bfloat|complex|bool)\w*"), r"\1.<dtype>"),
    (re.compile(r"\b(Float|Int|UInt|BFloat|Complex)\d*(Half|Float|Double)?\b"), "<Dtype>"),
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?(?!\w)"), "N"),
]


def message_key(msg):
    """A failure message with numbers, addresses and dtypes taken out, so the same failure groups together."""
    first = ""
    for line in (msg or "").splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "^")):
            first = line
            break
    for rx, rep in _NORMALIZE:
        first = rx.sub(rep, first)
    return first[:220]


def summarize(per_file, infos):
    lines = []
    totals = collections.Counter()
    file_rows, class_rows = [], []
    groups = collections.defaultdict(list)
    refused_fail = cpu_too = 0
    for fname, results in per_file.items():
        c = collections.Counter(r["outcome"] for r in results.values())
        totals.update(c)
        file_rows.append((fname, c, len(results)))
        by_class = collections.defaultdict(collections.Counter)
        for tid, r in results.items():
            by_class[_class_of(tid)][r["outcome"]] += 1
            if r["outcome"] in FAILING + ("xpass",):
                if r["outcome"] != "xpass" and is_refused_dtype_failure(r.get("msg")):
                    refused_fail += 1
                elif fails_on_cpu_too(r):
                    cpu_too += 1
                outcome = r["outcome"] + (" (CPU too)" if fails_on_cpu_too(r) else "")
                groups[(outcome, message_key(r.get("msg")))].append(tid)
        for cls, cc in sorted(by_class.items()):
            class_rows.append((fname, cls, cc))
    return totals, file_rows, class_rows, groups, refused_fail, cpu_too


def _row(counter):
    return " | ".join(str(counter.get(o, 0)) for o in OUTCOMES)


def write_markdown(args, per_file, infos, seconds, out):
    totals, file_rows, class_rows, groups, refused_fail, cpu_too = summarize(per_file, infos)
    ran = sum(totals.values())
    failing = sum(totals.get(o, 0) for o in FAILING)
    not_dtype = ran - totals.get("skip", 0) - totals.get("xfail", 0) - refused_fail
    rate = 100.0 * (failing - refused_fail) / not_dtype if not_dtype else 0.0
    rate_tpu = 100.0 * (failing - refused_fail - cpu_too) / not_dtype if not_dtype else 0.0
    cmd = "python3 tools/conformance.py " + " ".join(args.argv)
    L = ["# PyTorch's own test suite on tpu (generated)", "",
         f"Generated by `{cmd.strip()}` on {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC "
         f"({seconds / 60:.0f} min). Do not edit by hand.", "",
         f"Test files: `{args.tests_dir}` (unmodified PyTorch tests; see ../shared/pytorch-tests/README.md), run "
         "by `make conformance` through tools/conformance_plugin.py: only the tpu is instantiated "
         "(PYTORCH_TESTING_DEVICE_ONLY_FOR=tpu), slow tests included (PYTORCH_TEST_WITH_SLOW=1), "
         "PrivateUse1TestBase.bypass_device_restrictions on for restrictions naming accelerators in general "
         "(test_compare_cpu runs; @onlyCPU tests skip, and @onlyCUDA ones " +
         ("run: --bypass-cuda-only" if args.bypass_cuda_only else "skip as PyTorch skips them off CUDA") + "), "
         f"per-test timeout {args.timeout} s, each file in child processes so a crash costs one test.", "",
         "Dtypes the device refuses at allocation (TypeError \"tpu does not support tensors of dtype ...\") are "
         "declared unsupported for tpu the way PyTorch declares a device's dtypes (OpInfo.dtypesIf[\"tpu\"], the "
         "device base's @dtypes list), so those (test, dtype) pairs are not instantiated; they are counted below. "
         "Tests that make such a tensor inside a test of a supported dtype still run and fail; those failures are "
         "counted apart (\"refused-dtype failures\").", "",
         "## Totals", "",
         f"- tests run: **{ran}** — " + ", ".join(f"{o} {totals.get(o, 0)}" for o in OUTCOMES),
         f"- failing (fail + error + timeout + crash): {failing}, of which refused-dtype failures: "
         f"{refused_fail}",
         f"- xpass (expectedFailure in PyTorch's OpInfos, passes on tpu; not counted as failing): "
         f"{totals.get('xpass', 0)}",
         f"- failure rate among tests not skipped and not about a refused dtype: **{rate:.1f}%** "
         f"({failing - refused_fail} of {not_dtype})",
         f"- of those, failing on PyTorch's CPU backend as well (the same test's CPU instantiation, run right after, "
         f"fails or is marked expectedFailure for CPU): {cpu_too}; failures that are tpu's own: **{rate_tpu:.1f}%** "
         f"({failing - refused_fail - cpu_too} of {not_dtype})", ""]
    L += ["## Per file", "", "| file | collected | " + " | ".join(OUTCOMES) + " | not instantiated (refused dtype) |",
          "|---|---|" + "---|" * len(OUTCOMES) + "---|"]
    for fname, c, n in file_rows:
        inf = infos.get(fname, {})
        ni = sum(inf.get("not_instantiated", {}).values())
        col = inf.get("collected")
        note = f" (collection failed: {inf['collect_error'][:200]})" if inf.get("collect_error") else ""
        incomplete = " (incomplete)" if col is not None and n < col else ""
        if inf.get("every", 1) > 1:
            incomplete += f" (every {inf['every']}th test: a systematic sample)"
        L.append(f"| {fname}{note}{incomplete} | {col if col is not None else '-'} | {_row(c)} | {ni} |")
    L += ["", "## Per class", "", "| file | class | " + " | ".join(OUTCOMES) + " |",
          "|---|---|" + "---|" * len(OUTCOMES)]
    for fname, cls, cc in class_rows:
        L.append(f"| {fname} | {cls} | {_row(cc)} |")
    L += ["", f"## Top failure groups (of {len(groups)})", "",
          "Messages with numbers, addresses and dtypes normalized; one example id per group.", "",
          "| # | outcome | count | message | example |", "|---|---|---|---|---|"]
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    for i, ((outcome, key), ids) in enumerate(ranked[:args.top], 1):
        esc = key.replace("|", "\\|")
        L.append(f"| {i} | {outcome} | {len(ids)} | `{esc}` | `{ids[0]}` |")
    crashes = [(f, tid, r) for f, res in per_file.items() for tid, r in res.items() if r["outcome"] in ("crash",
                                                                                                          "timeout")]
    if crashes:
        L += ["", "## Crashes and timeouts", ""]
        for f, tid, r in crashes:
            L.append(f"- `{tid}` ({r['outcome']}): {(r.get('msg') or '')[:300]}")
    ni_total = collections.Counter()
    for inf in infos.values():
        ni_total.update(inf.get("not_instantiated", {}))
    restricted = next((inf["opinfo_restricted"] for inf in infos.values() if inf.get("opinfo_restricted")), {})
    if ni_total or restricted:
        L += ["", "## Not instantiated: dtypes tpu refuses", "",
              "(@dtypes test, dtype) pairs: " + (", ".join(f"{d}: {n}" for d, n in ni_total.most_common()) or "none"),
              "", "OpInfos whose tpu dtype list lost the dtype (each drops every @ops test of that op and dtype): " +
              (", ".join(f"{d}: {n}" for d, n in collections.Counter(restricted).most_common()) or "none")]
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")


# ---- CI gate -------------------------------------------------------------------------------------------------------
def gate(per_file, baseline_path):
    problems, new_passes = [], []
    passed = {tid for res in per_file.values() for tid, r in res.items() if r["outcome"] == "pass"}
    for res in per_file.values():
        for tid, r in res.items():
            if r["outcome"] in ("crash", "timeout"):
                problems.append(f"{r['outcome']}: {tid}: {(r.get('msg') or '')[:300]}")
    base = set()
    if os.path.exists(baseline_path):
        with open(baseline_path) as f:
            base = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    else:
        problems.append(f"no baseline at {baseline_path} (record one with --write-baseline)")
    seen = {tid for res in per_file.values() for tid in res}
    for tid in sorted(base - passed):
        r = next((res[tid] for res in per_file.values() if tid in res), None)
        if r is None:
            problems.append(f"regression: {tid} passed in the baseline and did not run now")
        else:
            problems.append(f"regression: {tid} passed in the baseline, now {r['outcome']}: "
                            f"{message_key(r.get('msg'))[:200]}")
    new_passes = sorted(passed - base)
    return problems, new_passes, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tests-dir", default=DEFAULT_TESTS_DIR)
    ap.add_argument("--files", default=None, help="comma list (default: the four device-generic files)")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per test")
    ap.add_argument("--chunk", type=int, default=2000, help="tests per child process")
    ap.add_argument("--every", type=int, default=1,
                    help="run every n-th test of each file only (a systematic sample; the summary says so)")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--out", default=None, help="markdown summary (default docs/conformance.md; --ci: none)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "conformance"), help="per-file logs")
    ap.add_argument("--resume", action="store_true", help="keep the results already in --work")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--ci", action="store_true", help="CI's subset, gated by the baseline")
    ap.add_argument("--bypass-cuda-only", action="store_true",
                    help="run @onlyCUDA tests as well (PyTorch skips them on other devices)")
    ap.add_argument("--no-cpu-check", action="store_true",
                    help="do not run the CPU instantiation of each failure (to tell failures that are tpu's own)")
    ap.add_argument("--baseline", default=CI_BASELINE)
    ap.add_argument("--write-baseline", action="store_true", help="record this run's passing ids as the baseline")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: summarize (and gate) the results already in --work, even of a run still going")
    args = ap.parse_args()
    args.argv = sys.argv[1:]
    args.tests_dir = os.path.realpath(args.tests_dir)  # ids must not depend on a symlinked path
    files = args.files.split(",") if args.files else list(CI_FILES if args.ci else DEFAULT_FILES)
    if args.out is None and not args.ci:
        args.out = os.path.join(ROOT, "docs", "conformance.md")
    if not os.path.isdir(args.tests_dir):
        sys.exit(f"conformance: no tests directory {args.tests_dir} (give one with TESTS_DIR=... / --tests-dir)")
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    per_file, infos = {}, {}
    for fname in files:
        path = os.path.join(args.tests_dir, fname)
        if not os.path.exists(path):
            print(f"conformance: {path} missing, skipped", file=sys.stderr)
            continue
        t = time.time()
        if args.report_only:
            per_file[fname], infos[fname] = read_file_log(path, args.work)
            if infos[fname]["collected"] is None:
                del per_file[fname], infos[fname]
                continue
        else:
            per_file[fname], infos[fname] = run_file(args, path, args.work)
            if not args.ci and not args.no_cpu_check:
                check_on_cpu(args, path, args.work, per_file[fname])
        c = collections.Counter(r["outcome"] for r in per_file[fname].values())
        print(f"{fname}: " + ", ".join(f"{o} {c.get(o, 0)}" for o in OUTCOMES) +
              f" ({time.time() - t:.0f} s, {infos[fname]['children']} processes)" +
              (f" COLLECTION FAILED: {infos[fname]['collect_error'][:300]}" if infos[fname]["collect_error"] else ""),
              flush=True)
        if args.out:  # a partial summary after each file, so a long run is readable while it goes
            write_markdown(args, per_file, infos, time.time() - t0, args.out)
    print(f"total {time.time() - t0:.0f} s")
    if args.write_baseline:
        passed = sorted(tid for res in per_file.values() for tid, r in res.items() if r["outcome"] == "pass")
        with open(args.baseline, "w") as f:
            f.write("# tests that pass on tpu: tools/conformance.py --ci fails if one of them stops passing.\n"
                    f"# recorded by `python3 tools/conformance.py {' '.join(args.argv)}`\n")
            f.write("".join(p + "\n" for p in passed))
        print(f"baseline: {len(passed)} passing ids written to {args.baseline}")
    if args.ci:
        collect_failed = [f for f, inf in infos.items() if inf["collect_error"]]
        problems, new_passes, _ = gate(per_file, args.baseline)
        problems += [f"collection failed: {f}: {infos[f]['collect_error'][:300]}" for f in collect_failed]
        if new_passes:
            print(f"{len(new_passes)} tests pass that the baseline does not list (record them with "
                  "--write-baseline), e.g. " + ", ".join(new_passes[:5]))
        if problems:
            print(f"conformance gate: FAILED ({len(problems)} problems)")
            for p in problems[:200]:
                print("  " + p)
            sys.exit(1)
        print("conformance gate: passed (no crash, no timeout, no baseline test regressed)")


if __name__ == "__main__":
    main()

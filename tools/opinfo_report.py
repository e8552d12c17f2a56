#!/usr/bin/env python3
"""Run the OpInfo conformance checks (tests/opinfo_harness.py) over all of op_db and write docs/opinfo.md.

    python3 tools/opinfo_report.py                      # float32, every OpInfo entry
    python3 tools/opinfo_report.py --dtypes float32,bfloat16,int64,bool --ops add,sum

Cases run in a child process so a crash (segfault) costs one case, not the run: the parent records it as "crash"
and restarts the child after it (so cases the pytest known-failures list skips as crashes do run here). A case
that fails for a missing lowering is run again with the CPU fallback on, to tell "fallback-only" (right numbers
through the fallback) from cases that fail either way, and to list every aten op it falls back on
(torchtpu.metrics()["fallbacks"]). --variants method,inplace also checks x.op(...) and x.clone().op_(...).
"""
import argparse
import collections
import json
import os
import select
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

STATUS_LABEL = {
    "pass": "native pass",
    "close": "native close (f32 1e-3, bf16 5e-2)",
    "wrong": "wrong",
    "error": "error",
    "not_native": "not native",
    "fallback_only": "fallback-only",
    "timeout": "timeout",
    "crash": "crash",
    "no_samples": "no samples",
    "known_crash": "known crash (not run)",
}
HANG_GRACE_S = 120  # no word from the child for the case timeout plus this: kill it and record a hang


# ---- child: run cases, one JSON line per case on stdout --------------------------------------------------------------
def worker(args):
    import opinfo_harness as h

    cs = h.cases(tuple(args.dtypes.split(",")), args.ops.split(",") if args.ops else None)
    out = sys.stdout
    for i in range(args.start, len(cs)):
        c = cs[i]
        rec = {"i": i, "id": c.id, "name": c.name, "op": c.op.name, "variant": c.op.variant_test_name,
               "dtype": c.dtype_name}
        out.write(json.dumps({"start": i, "id": c.id}) + "\n")
        out.flush()
        variants = tuple(v for v in args.variants.split(",") if v)
        r = h.run_case(c, timeout=args.timeout, variants=variants)
        rec.update(status=r.status, detail=r.detail, missing=r.missing, all_missing=[r.missing] if r.missing else [],
                   seconds=round(r.seconds, 3), sample=r.failing_sample, n_run=r.n_run,
                   shape_only=c.op.name in h.NONDETERMINISTIC or c.name in h.NONDETERMINISTIC)
        if r.status == "not_native" and not args.no_fallback_check:
            rf = h.run_case(c, timeout=args.timeout, fallback=True, variants=variants)
            fb = sorted(rf.extra.get("fallbacks", ()))
            rec["all_missing"] = sorted(set(rec["all_missing"]) | set(fb))
            rec["declined"] = [m for m in rec["all_missing"] if m.startswith("aten::") and h.has_lowering(m)]
            rec["fallback_status"] = rf.status
            rec["fallback_detail"] = rf.detail
            if rf.status in ("pass", "close"):
                rec["status"] = "fallback_only"
        out.write(json.dumps(rec) + "\n")
        out.flush()


# ---- parent: drive children, survive crashes ------------------------------------------------------------------------
def run_all(args):
    results = {}
    start = 0
    log_path = args.log
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--start", str(start), "--dtypes", args.dtypes,
               "--timeout", str(args.timeout)]
        if args.ops:
            cmd += ["--ops", args.ops]
        if args.no_fallback_check:
            cmd.append("--no-fallback-check")
        if args.variants:
            cmd += ["--variants", args.variants]
        with open(log_path, "ab") as log:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, cwd=ROOT)
        cur = None
        buf = b""
        last = time.time()
        hung = False
        while True:
            r, _, _ = select.select([p.stdout], [], [], 5.0)
            if r:
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    break
                last = time.time()
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if "start" in rec:
                        cur = rec
                    else:
                        results[rec["i"]] = rec
                        cur = None
                        if args.verbose:
                            print(f"{rec['id']:50s} {rec['status']:14s} {rec.get('missing', '')}", flush=True)
            elif time.time() - last > args.timeout + HANG_GRACE_S:
                hung = True
                p.kill()
        p.wait()
        if cur is None:
            break
        # The child died (or hung) inside case `cur`: record it, go on after it.
        import opinfo_harness as h
        cs = h.cases(tuple(args.dtypes.split(",")), args.ops.split(",") if args.ops else None)
        c = cs[cur["start"]]
        detail = (f"hang (no progress for {args.timeout + HANG_GRACE_S} s)" if hung
                  else f"process died with exit code {p.returncode}")
        results[cur["start"]] = {"i": cur["start"], "id": c.id, "name": c.name, "op": c.op.name,
                                 "variant": c.op.variant_test_name, "dtype": c.dtype_name, "status": "crash",
                                 "detail": detail, "missing": "", "all_missing": [], "seconds": 0.0}
        print(f"CRASH {c.id}: {detail}", flush=True)
        start = cur["start"] + 1
    return [results[k] for k in sorted(results)]


def reproducer(rec):
    return (f"cd {ROOT} && python3 -c \"import sys; sys.path.insert(0,'tests'); import opinfo_harness as h; "
            f"print([h.run_case(c, timeout=0) for c in h.cases(('{rec['dtype']}',), ['{rec['name']}']) "
            f"if c.name=='{rec['name']}'])\"")


def summarize(recs, dtypes):
    s = {}
    by_dtype = collections.defaultdict(collections.Counter)
    for r in recs:
        by_dtype[r["dtype"]][r["status"]] += 1
    s["by_dtype"] = by_dtype
    f32 = [r for r in recs if r["dtype"] == "float32"]
    s["f32_pass"] = sum(r["status"] == "pass" for r in f32)
    s["f32_pass_close"] = sum(r["status"] in ("pass", "close") for r in f32)
    s["f32_total"] = len(f32)
    base = f32 if f32 else recs
    blocks = collections.Counter()
    sole = collections.Counter()
    first = collections.Counter()
    for r in base:
        if r["status"] not in ("not_native", "fallback_only"):
            continue
        ms = set(r.get("all_missing") or []) | ({r["missing"]} if r.get("missing") else set())
        for m in ms:
            blocks[m] += 1
        if len(ms) == 1:
            sole[next(iter(ms))] += 1
        if r.get("missing"):
            first[r["missing"]] += 1
    s["missing"] = sorted(blocks, key=lambda m: (-blocks[m], -sole[m], m))
    every = collections.Counter()  # over every dtype's cases
    for r in recs:
        if r["status"] in ("not_native", "fallback_only"):
            for m in set(r.get("all_missing") or []) | ({r["missing"]} if r.get("missing") else set()):
                every[m] += 1
    s["missing_all_dtypes"] = every
    s["declined"] = {m for r in base for m in r.get("declined", ())}
    s["blocks"], s["sole"], s["first"] = blocks, sole, first
    s["wrong"] = [r for r in recs if r["status"] in ("wrong", "close")
                  or (r["status"] == "not_native" and r.get("fallback_status") == "wrong")]
    s["errors"] = [r for r in recs if r["status"] in ("error", "timeout", "crash")]
    return s


def _cell(x, n=160):
    x = (x or "").replace("|", "\\|").replace("\n", " ")
    return x if len(x) <= n else x[:n] + "…"


def h_max_numel():
    import opinfo_harness as h
    return f"2^{h.MAX_SAMPLE_NUMEL.bit_length() - 1}"


def write_markdown(path, recs, s, dtypes, elapsed):
    L = []
    L.append("# OpInfo conformance (generated)\n\n")
    L.append(f"Generated by `python3 tools/opinfo_report.py --dtypes {dtypes}` on {time.strftime('%Y-%m-%d %H:%M')} "
             f"({elapsed:.0f} s). Do not edit by hand.\n\n")
    L.append("Each OpInfo entry of `torch.testing._internal.common_methods_invocations.op_db` runs every sample "
             f"(up to {h_max_numel()} elements each) through its function, method and in-place variants "
             "(tests/opinfo_harness.py) on the tpu with the CPU fallback off, against the CPU. "
             "When both raise, the case passes only with the CPU's exception type and PyTorch's message. "
             "Only \"no lowering\" at dispatch and a dtype the tpu refuses at allocation count as not native; any "
             "other exception while running (a driver's UNSUPPORTED, a rank limit) is an error. "
             "Statuses: **native pass** (float32: assert_close default tolerance, bf16: 1.6e-2, ints/bool: exact); "
             "**native close** (within float32 1e-3 or bfloat16 5e-2 only); **wrong** (numbers differ); "
             "**error** (an exception the CPU "
             "does not raise); **not native** (an aten op has no lowering, and the case fails with the fallback on "
             "too); **fallback-only** (right numbers only with the CPU fallback on); **crash**/**timeout**. Random and "
             "uninitialized-memory ops compare shape and dtype only (marked \"shape only\"), except samples whose randomness "
             "is off (dropout with p=0 or training=False, rrelu outside training, multi_head_attention_forward without "
             "dropout), which are compared by value. `dtype:X` and "
             "`layout:sparse` in the missing list are dtypes and layouts the tpu lacks, not aten ops. A bfloat16 result "
             "passes when it matches the CPU's bf16 kernel or the float32 computation rounded once to bf16 (several CPU "
             "bf16 kernels accumulate in bf16). Index outputs of sort/topk/kthvalue/median/mode are checked by the "
             "values they point at (ties).\n\n")
    L.append("## Summary\n\n")
    L.append(f"- float32 OpInfo entries passing natively: **{s['f32_pass']}** of {s['f32_total']} "
             f"({s['f32_pass_close']} counting 'close'); the bar is 200.\n")
    for dt, cnt in s["by_dtype"].items():
        L.append(f"- {dt}: " + ", ".join(f"{STATUS_LABEL.get(k, k)} {v}" for k, v in cnt.most_common()) + "\n")
    L.append("\n## Missing aten ops, by OpInfo entries they block (float32)\n\n")
    L.append("\"declined\": a lowering of that op exists but returned unsupported for these arguments (or the shim "
             "did not match this overload to it).\n\n")
    L.append("| rank | aten op | entries blocked | only missing op | first missing op |\n|---|---|---|---|---|\n")
    for i, m in enumerate(s["missing"], 1):
        d = " (declined)" if m in s["declined"] else ""
        L.append(f"| {i} | `{m}`{d} | {s['blocks'][m]} | {s['sole'][m]} | {s['first'][m]} |\n")
    L.append("\n## Wrong numbers\n\n")
    if not s["wrong"]:
        L.append("None.\n")
    for r in s["wrong"]:
        L.append(f"- `{r['id']}` ({STATUS_LABEL.get(r['status'], r['status'])}"
                 f"{', via fallback' if r['status'] == 'not_native' else ''}): "
                 f"{_cell(r.get('detail') if r['status'] != 'not_native' else r.get('fallback_detail'), 300)}\n")
    L.append("\n## Errors, crashes, timeouts\n\n")
    if not s["errors"]:
        L.append("None.\n")
    for r in s["errors"]:
        L.append(f"- `{r['id']}` ({r['status']}): {_cell(r.get('detail'), 300)}\n")
    L.append("\n## All cases\n\n")
    L.append("| op | variant | dtype | status | first failing aten op or message |\n|---|---|---|---|---|\n")
    for r in recs:
        msg = r.get("missing") or r.get("detail") or ("shape only" if r.get("shape_only") else "")
        if r["status"] in ("not_native", "fallback_only") and r.get("all_missing"):
            msg = ", ".join(r["all_missing"])
        L.append(f"| {r['op']} | {r['variant'] or ''} | {r['dtype']} | {STATUS_LABEL.get(r['status'], r['status'])} "
                 f"| {_cell(msg)} |\n")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.writelines(L)


def status_text(recs, s, top=60):
    L = [f"opinfo status {time.strftime('%Y-%m-%d %H:%M:%S')}: float32 native pass {s['f32_pass']} / "
         f"{s['f32_total']} ({s['f32_pass_close']} with 'close')\n"]
    for dt, cnt in s["by_dtype"].items():
        L.append(f"  {dt}: " + ", ".join(f"{k} {v}" for k, v in cnt.most_common()) + "\n")
    L.append("\nmissing aten ops (float32 OpInfo entries blocked / entries where it is the only missing op):\n")
    for m in s["missing"][:top]:
        d = "  (a lowering exists: declined these arguments)" if m in s["declined"] else ""
        L.append(f"  {s['blocks'][m]:4d} {s['sole'][m]:4d}  {m}{d}\n")
    if len(s["by_dtype"]) > 1:
        L.append("\nmissing aten ops over every dtype checked (cases blocked), top 40:\n  ")
        L.append(", ".join(f"{m} {n}" for m, n in s["missing_all_dtypes"].most_common(40)) + "\n")
    L.append("\nwrong numbers (status, case, detail; reproducer below each):\n")
    for r in s["wrong"]:
        d = r.get("detail") if r["status"] != "not_native" else "via fallback: " + (r.get("fallback_detail") or "")
        L.append(f"  {r['status']:10s} {r['id']}: {_cell(d, 250)}\n    {reproducer(r)}\n")
    L.append("\nerrors / crashes / timeouts:\n")
    for r in s["errors"]:
        L.append(f"  {r['status']:10s} {r['id']}: {_cell(r.get('detail'), 250)}\n    {reproducer(r)}\n")
    return "".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--ops", default="", help="comma list of OpInfo names (name or name.variant)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "opinfo.md"))
    ap.add_argument("--status", default="/tmp/opinfo_status.txt")
    ap.add_argument("--json", default="/tmp/opinfo_results.json", help="raw results")
    ap.add_argument("--log", default="/tmp/opinfo_worker.log", help="child stderr")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per case (a hang guard, not a budget)")
    ap.add_argument("--from-json", default=None, help="write the table from this results JSON; run nothing")
    ap.add_argument("--merge", default=None,
                    help="results JSON of an earlier full run: the cases run now (--ops) replace theirs, and the "
                         "table is written from the merged set")
    ap.add_argument("--no-fallback-check", action="store_true")
    ap.add_argument("--variants", default="method,inplace",
                    help="call variants checked besides the function (default method,inplace; '' for none)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    t0 = time.time()
    if args.from_json:  # run nothing: the table from an earlier run's results (time: the sum of its cases')
        with open(args.from_json) as f:
            recs = json.load(f)
        elapsed = sum(r.get("seconds", 0.0) for r in recs)
    else:
        open(args.log, "wb").close()
        recs = run_all(args)
        elapsed = time.time() - t0
    if args.merge:
        with open(args.merge) as f:
            old = json.load(f)
        new = {r["id"]: r for r in recs}
        recs = [new.pop(r["id"], r) for r in old] + list(new.values())
        args.ops = ""  # the table covers the merged set
    s = summarize(recs, args.dtypes)
    if args.json and not args.from_json:
        with open(args.json, "w") as f:
            json.dump(recs, f)
    if args.out:
        write_markdown(args.out, recs, s, args.dtypes, elapsed)
    text = status_text(recs, s)
    if args.status:
        with open(args.status, "w") as f:
            f.write(text)
    print(text[:6000])
    print(f"({len(recs)} cases in {elapsed:.0f} s; table in {args.out})")


if __name__ == "__main__":
    sys.exit(main())

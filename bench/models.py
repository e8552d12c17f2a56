"""Whole models on tpu in strict and fused eager mode and torch.compile'd, next to PyTorch CPU eager and Inductor,
measured in one run: the all-MiniLM-L6-v2 forward (no grad) and a small GPT's training step (forward, backward,
AdamW; the model compiled, the optimizer eager), with matmuls in exact f32 on both sides, and the peak memory of the
training step.

    HF_HUB_OFFLINE=1 python3 bench/models.py [--repeats R] [--steps N] [--skip-minilm] [--no-pjrt]

Times are medians over R repeats after warm-up runs (compiles excluded); a tpu run ends with a read of its
result (the embeddings' .cpu(), the loss's .item()), as a training loop does. Ratios > 1 mean tpu is faster.
Peak memory: tpu from the device allocator (torch.tpu.max_memory_allocated over one step, parameters, gradients
and optimizer state included); PyTorch CPU eager keeps no allocator statistics, so for it the step runs with a
counting allocator wrapped around PyTorch's CPU allocator (torchtpu._C.cpu_memory_track), added to the bytes of
the storages alive before the step (parameters, buffers, gradients, optimizer state, the batch): tensor bytes on
both sides. Run on a quiet machine; the load average is printed.

The PyTorch CPU column and the tpu columns run in separate child processes (as in bench/fusion.py): PyTorch's
OpenMP workers spin-wait on both cores for a while after every CPU op and, in one process, take the cores from the
tpu columns' threads. Each model gets its own processes too: the CPU GPT step measured 23 ms alone and 27-35 ms
after the MiniLM runs in the same process. The tpu columns are measured again in a process on the PJRT driver
(TORCHTPU_DRIVER=pjrt, OpenXLA's CPU plugin): the same programs compiled by XLA instead of the host driver.
"""
import argparse
import copy
import json
import os
import sys

if "pjrt" in sys.argv:  # a child measuring the tpu columns on the PJRT driver (chosen before torchtpu loads)
    os.environ["TORCHTPU_DRIVER"] = "pjrt"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

import torchtpu  # noqa: E402
from timing import median_ms, run_groups  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

MiB = 1 << 20


def gpt_case(args):
    from tiny_gpt import GPTConfig, TinyGPT

    cfg = GPTConfig(vocab_size=512, block_size=64, n_layer=4, n_head=4, n_embd=128)
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, cfg.vocab_size, (8, cfg.block_size), generator=g)
    tgt = torch.randint(0, cfg.vocab_size, (8, cfg.block_size), generator=g)
    torch.manual_seed(0)
    base = TinyGPT(cfg)

    def make(dev, compiled=False):
        model = copy.deepcopy(base).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = idx.to(dev), tgt.to(dev)
        fwd = torch.compile(model) if compiled else model  # Inductor on cpu, the tpu backend on tpu

        def step():
            _, loss = fwd(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
            return loss.item()
        step()  # creates the optimizer state and the gradients: what every later step starts from
        return model, opt, step

    shape = f"{cfg.n_layer}L d{cfg.n_embd} 8x{cfg.block_size}"
    if args.group == "cpu":
        model, opt, step = make("cpu", compiled=True)
        inductor_ms = median_ms(step, args.repeats, warmup=2)
        model, opt, step = make("cpu")
        cpu_ms = median_ms(step, args.repeats, warmup=2)
        # CPU eager's peak, counted as the tpu allocator counts: the storages alive before the step (parameters,
        # gradients, optimizer state, buffers, the batch) plus the most that the step's own allocations held at once
        held = [*model.parameters(), *model.buffers(), idx, tgt]  # .to("cpu") of a CPU tensor is the tensor
        held += [p.grad for p in model.parameters() if p.grad is not None]
        held += [t for st in opt.state.values() for t in st.values() if torch.is_tensor(t)]
        resident = sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in held}.values())
        torchtpu._C.cpu_memory_track(True)
        try:
            step()
        finally:
            torchtpu._C.cpu_memory_track(False)
        return {"shape": shape, "cpu": cpu_ms, "inductor": inductor_ms,
                "peak cpu": resident + torchtpu._C.cpu_memory_peak()}
    out = {"shape": shape}
    for mode in ("strict", "fused", "compiled"):
        torchtpu.set_eager_mode("fused" if mode == "compiled" else mode)
        model, opt, step = make("tpu", compiled=mode == "compiled")
        out[mode] = median_ms(step, args.repeats, warmup=2)
        torch.tpu.synchronize()
        torch.tpu.reset_peak_memory_stats()
        torchtpu.reset_metrics()
        step()
        out["peak " + mode] = torch.tpu.max_memory_allocated()
        out["cuts " + mode] = torchtpu.metrics()["cuts"]
        del model, opt, step
    return out


def minilm_case(args):
    from demo import SENTENCES, embed, model_dir
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    d = model_dir()
    tok = AutoTokenizer.from_pretrained(d)
    cpu_model = AutoModel.from_pretrained(d).eval()
    with torch.no_grad():
        enc = dict(tok(SENTENCES, padding=True, return_tensors="pt"))
        out = {"shape": "x".join(str(s) for s in enc["input_ids"].shape)}
        if args.group == "cpu":
            compiled = torch.compile(copy.deepcopy(cpu_model))
            out["inductor"] = median_ms(lambda: embed(compiled, enc), args.repeats, warmup=2)
            out["cpu"] = median_ms(lambda: embed(cpu_model, enc), args.repeats, warmup=2)
            return out
        tpu_model = copy.deepcopy(cpu_model).to("tpu")
        enc_tpu = {k: v.to("tpu") for k, v in enc.items()}
        for mode in ("strict", "fused", "compiled"):
            torchtpu.set_eager_mode("fused" if mode == "compiled" else mode)
            m = torch.compile(tpu_model) if mode == "compiled" else tpu_model
            out[mode] = median_ms(lambda: embed(m, enc_tpu).cpu(), args.repeats, warmup=2)
    return out


CASES = {"minilm forward": minilm_case, "gpt train step": gpt_case}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--no-pjrt", action="store_true", help="skip the PJRT driver's columns")
    ap.add_argument("--group", choices=["cpu", "tpu", "pjrt"], help=argparse.SUPPRESS)  # a child process's share
    ap.add_argument("--case", choices=list(CASES), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore", message="torchtpu: operator")
    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    torchtpu.set_precision("exact")  # plain f32 matmuls, as PyTorch CPU's
    if args.group == "pjrt":  # the tpu columns, on the PJRT driver (XLA's CPU plugin), as "pjrt <column>"
        args.group = "tpu"
        out = CASES[args.case](args)
        print(json.dumps({args.case: {f"pjrt {k}": v for k, v in out.items() if k in ("strict", "fused", "compiled")}}))
        return 0
    if args.group:
        print(json.dumps({args.case: CASES[args.case](args)}))
        return 0
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    print(f"median of {args.repeats} warm runs, milliseconds; matmuls in exact f32 on both sides; CPU and tpu "
          "columns in separate processes; compiled: torch.compile(model), Inductor on cpu, the tpu backend on tpu "
          "(compiles excluded)\n")
    res = {}
    for case in CASES:  # one process per case and column: a MiniLM run first slowed the CPU GPT step by up to 50%
        if case == "minilm forward" and args.skip_minilm:
            continue
        groups = ("cpu", "tpu") if args.no_pjrt else ("cpu", "tpu", "pjrt")
        for row, cols in run_groups(os.path.abspath(__file__), groups,
                                    ["--repeats", str(args.repeats), "--threads", str(torch.get_num_threads()),
                                     "--case", case]).items():
            res.setdefault(row, {}).update(cols)
    hdr = (f"{'model':<16} {'shape':>14} {'cpu':>7} {'strict':>7} {'fused':>7} | {'fused/strict':>12} "
           f"{'strict/cpu':>10} {'fused/cpu':>9} | {'inductor':>8} {'compiled':>8} {'comp/ind':>8} {'comp/fused':>10}")
    print(hdr)
    print("-" * len(hdr))
    for name, r in res.items():
        print(f"{name:<16} {r['shape']:>14} {r['cpu']:7.1f} {r['strict']:7.1f} {r['fused']:7.1f} | "
              f"{r['strict'] / r['fused']:11.2f}x {r['cpu'] / r['strict']:9.2f}x {r['cpu'] / r['fused']:8.2f}x | "
              f"{r['inductor']:8.1f} {r['compiled']:8.1f} {r['inductor'] / r['compiled']:7.2f}x "
              f"{r['fused'] / r['compiled']:9.2f}x")
    if not args.no_pjrt:
        print(f"\nthe same tpu columns on the PJRT driver (XLA's CPU plugin; TPU precision written out as bf16 passes"
              f" where the matmul is not exact f32), next to the host driver's:")
        hdr = (f"{'model':<16} {'cpu':>7} | {'host strict':>11} {'fused':>7} {'compiled':>8} | {'pjrt strict':>11} "
               f"{'fused':>7} {'compiled':>8} | {'pjrt fused/cpu':>14} {'pjrt/host fused':>15}")
        print(hdr)
        print("-" * len(hdr))
        for name, r in res.items():
            print(f"{name:<16} {r['cpu']:7.1f} | {r['strict']:11.1f} {r['fused']:7.1f} {r['compiled']:8.1f} | "
                  f"{r['pjrt strict']:11.1f} {r['pjrt fused']:7.1f} {r['pjrt compiled']:8.1f} | "
                  f"{r['cpu'] / r['pjrt fused']:13.2f}x {r['fused'] / r['pjrt fused']:14.2f}x")
    g = res["gpt train step"]
    pc, ps, pf = g["peak cpu"], g["peak strict"], g["peak fused"]
    print(f"\ngpt train step peak memory: cpu eager {pc / MiB:.1f} MiB, strict {ps / MiB:.1f} MiB, fused "
          f"{pf / MiB:.1f} MiB (fused/strict {pf / ps:.2f}x, fused/cpu {pf / pc:.2f}x)")
    print(f"gpt train step peak memory compiled: {g['peak compiled'] / MiB:.1f} MiB")
    print(f"gpt train step cuts in fused mode (one step): {g['cuts fused']}; compiled: {g['cuts compiled']}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Whole models on tpu in strict and fused eager mode next to PyTorch CPU eager, measured in one run: the
all-MiniLM-L6-v2 forward (no grad) and a small GPT's training step (forward, backward, AdamW), with matmuls in
exact f32 on both sides, and the peak memory of the training step.

    HF_HUB_OFFLINE=1 python3 bench/models.py [--repeats R] [--steps N] [--skip-minilm]

Times are medians over R repeats after warm-up runs (compiles excluded); a tpu run ends with a read of its
result (the embeddings' .cpu(), the loss's .item()), as a training loop does. Ratios > 1 mean tpu is faster.
Peak memory: tpu from the device allocator (torch.tpu.max_memory_allocated over one step, parameters, gradients
and optimizer state included); PyTorch CPU eager keeps no allocator statistics, so for it the step runs with a
counting allocator wrapped around PyTorch's CPU allocator (torchtpu._C.cpu_memory_track), added to the bytes of
the storages alive before the step (parameters, buffers, gradients, optimizer state, the batch): tensor bytes on
both sides. Run on a quiet machine; the load average is printed.
"""
import argparse
import copy
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

import torchtpu  # noqa: E402
from timing import median_ms  # noqa: E402

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

    def make(dev):
        model = copy.deepcopy(base).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = idx.to(dev), tgt.to(dev)

        def step():
            _, loss = model(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
            return loss.item()
        step()  # creates the optimizer state and the gradients: what every later step starts from
        return model, opt, step

    rows = []
    model, opt, step = make("cpu")
    cpu_ms = median_ms(step, args.repeats, warmup=2)
    res, peaks, cuts = {}, {}, {}
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
    peaks["cpu"] = resident + torchtpu._C.cpu_memory_peak()
    for mode in ("strict", "fused"):
        torchtpu.set_eager_mode(mode)
        model, opt, step = make("tpu")
        res[mode] = median_ms(step, args.repeats, warmup=2)
        torch.tpu.synchronize()
        torch.tpu.reset_peak_memory_stats()
        torchtpu.reset_metrics()
        step()
        peaks[mode] = torch.tpu.max_memory_allocated()
        cuts[mode] = torchtpu.metrics()["cuts"]
        del model, opt, step
    rows.append(("gpt train step", f"{cfg.n_layer}L d{cfg.n_embd} 8x{cfg.block_size}", cpu_ms, res))
    return rows, peaks, cuts["fused"]


def minilm_case(args):
    from demo import SENTENCES, embed, model_dir
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    d = model_dir()
    tok = AutoTokenizer.from_pretrained(d)
    cpu_model = AutoModel.from_pretrained(d).eval()
    tpu_model = copy.deepcopy(cpu_model).to("tpu")
    rows = []
    with torch.no_grad():
        enc = dict(tok(SENTENCES, padding=True, return_tensors="pt"))
        enc_tpu = {k: v.to("tpu") for k, v in enc.items()}
        cpu_ms = median_ms(lambda: embed(cpu_model, enc), args.repeats, warmup=2)
        res = {}
        for mode in ("strict", "fused"):
            torchtpu.set_eager_mode(mode)
            res[mode] = median_ms(lambda: embed(tpu_model, enc_tpu).cpu(), args.repeats, warmup=2)
        shape = "x".join(str(s) for s in enc["input_ids"].shape)
        rows.append(("minilm forward", shape, cpu_ms, res))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    ap.add_argument("--skip-minilm", action="store_true")
    args = ap.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore", message="torchtpu: operator")
    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    torchtpu._C.set_precision(3)  # exact f32 matmuls, as PyTorch CPU's
    old = torchtpu.get_eager_mode()
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    print(f"median of {args.repeats} warm runs, milliseconds; matmuls in exact f32 on both sides\n")
    hdr = (f"{'model':<16} {'shape':>14} {'cpu':>8} {'strict':>8} {'fused':>8} | {'fused/strict':>12} "
           f"{'strict/cpu':>10} {'fused/cpu':>9}")
    print(hdr)
    print("-" * len(hdr))
    rows = [] if args.skip_minilm else minilm_case(args)
    gpt_rows, peaks, gpt_cuts = gpt_case(args)
    for name, shape, cpu_ms, res in rows + gpt_rows:
        print(f"{name:<16} {shape:>14} {cpu_ms:8.1f} {res['strict']:8.1f} {res['fused']:8.1f} | "
              f"{res['strict'] / res['fused']:11.2f}x {cpu_ms / res['strict']:9.2f}x {cpu_ms / res['fused']:8.2f}x")
    print(f"\ngpt train step peak memory: cpu eager {peaks['cpu'] / MiB:.1f} MiB, strict {peaks['strict'] / MiB:.1f} "
          f"MiB, fused {peaks['fused'] / MiB:.1f} MiB (fused/strict {peaks['fused'] / peaks['strict']:.2f}x, "
          f"fused/cpu {peaks['fused'] / peaks['cpu']:.2f}x)")
    print(f"gpt train step cuts in fused mode (one step): {gpt_cuts}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    torchtpu.set_eager_mode(old)
    return 0


if __name__ == "__main__":
    sys.exit(main())

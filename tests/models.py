"""Small models shared by the training tests (and usable by demos): an MLP, a CNN and a tiny GPT.

`TinyGPT` comes from examples/tiny_gpt.py when the demo provides it, else from the definition below. Plain torch,
no torchtpu import: the same model runs on any device.
"""
import importlib.util
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, sizes=(32, 64, 64, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


class SmallCNN(nn.Module):
    """conv 1->4 3x3, relu, max_pool 2, conv 4->8 3x3, relu, adaptive avg pool 2x2, flatten, linear -> 10."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.head = nn.Linear(8 * 2 * 2, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 2)
        return self.head(x.flatten(1))


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class _TinyGPT(nn.Module):
    """A 2-layer decoder-only transformer with learned positions and a head tied to the token embedding."""

    def __init__(self, vocab=50, dim=32, heads=2, layers=2, seq=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.tie_weights()

    def tie_weights(self):
        """Ties the head to the token embedding (again: Module.to() to a PrivateUse1 device unties them, as on XLA,
        because PyTorch swaps in new Parameters when the tensor types are not shallow-copy compatible)."""
        self.head.weight = self.tok.weight

    def forward(self, idx, targets=None):
        s = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(s, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _load_example_gpt():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "tiny_gpt.py")
    if not os.path.exists(path):
        return None
    try:
        spec = importlib.util.spec_from_file_location("_examples_tiny_gpt", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return getattr(mod, "TinyGPT", None)
    except Exception:  # noqa: BLE001  (a half-written example must not break the tests)
        return None


TinyGPT = _TinyGPT


def gpt_loss(model, idx, targets):
    """The next-token loss, whichever TinyGPT is in use (ours returns (logits, loss); others may return logits)."""
    out = model(idx, targets) if model.__class__ is _TinyGPT else model(idx)
    if isinstance(out, tuple):
        return out[1]
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1))


def example_tiny_gpt():
    """The demo's TinyGPT class when examples/tiny_gpt.py provides one, else None."""
    return _load_example_gpt()

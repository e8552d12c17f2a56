"""Bounded dynamic shapes for torch.compile on tpu: one program per bucket instead of one per size.

    torch._dynamo.mark_dynamic(input_ids, 1, min=1, max=512)
    model = torch.compile(model)     # lengths 1..512 run in programs for 1, 2, 4, ..., 256, 512

A size Dynamo made symbolic with an upper bound (`mark_dynamic(..., max=)`) is padded, at each call, to its bucket
(powers of two up to the bound; `options={"bucket_size": k}` for multiples of k, `{"num_dynamic_buckets": n}` for n
equal steps). The ATen graph runs at the bucket's size, so the runtime finds one program per bucket; the real size
is a runtime input (a 0-d int64 tensor), and the graph is rewritten so that results stay exact: every op that
combines elements along a padded dim (sums, softmax, matmul contractions, layer-norm weight gradients, losses,
embedding gradients) first masks the padding to the op's identity, `mean` divides by the real count, and indices
read from padding are made safe (0, or the loss's ignore_index). Elementwise ops, views and reshapes need nothing:
padding is only ever read by masked ops. Outputs are cut back to the real size (a view where the padded dim is a
dim of its own). Tensors the forward saves for the backward stay padded between the two graphs.

A graph with an op whose result the padding could change and that has no rule here (sort along the padded dim,
scatter into it, convolution over it, a negative index from its end, a size used as a number, ...) is not padded:
it runs one program per size as before, and `TORCHTPU_LOG=compile` says which op. Random ops draw numbers for the
padded shape, so dropout inside a padded graph differs from an unpadded run's (it stays a correct dropout).

A padded dim of a tensor is described by `Pad(sym, inner, off, outer)`: its size is outer * (sym + off) * inner,
laid out row-major, so index i is real iff (i // inner) % (P + off) < real + off, where P is the bucket (the graph
gets P and the real size as inputs). A dim of its own is inner = outer = 1; a reshape that merges [B, T] into [B*T]
gives outer = B (a size expression: B may be dynamic too; inner is a number).
"""
import math
import operator
import os
from typing import NamedTuple

import sympy
import torch

from . import _C

aten = torch.ops.aten


class Pad(NamedTuple):
    sym: object
    inner: int
    off: int
    outer: object  # int or a size expression without sym


class Unsupported(Exception):
    """The graph cannot be padded (the message says why); it runs one program per size."""


def buckets_for(lower, upper, options):
    """The bucket sizes for a symbol in [lower, upper]: ascending, the last one is `upper`."""
    upper = int(upper)
    if options.get("bucket_size") is not None:
        k = int(options["bucket_size"])
        if k < 1:
            raise ValueError(f"bucket_size must be >= 1, got {k}")
        edges = list(range(k, upper, k))
    elif options.get("num_dynamic_buckets") is not None:
        n = int(options["num_dynamic_buckets"])
        if n < 1:
            raise ValueError(f"num_dynamic_buckets must be >= 1, got {n}")
        edges = [math.ceil(upper * i / n) for i in range(1, n)]
    else:
        edges = [1 << i for i in range(max(upper, 1).bit_length())]
    return sorted({e for e in edges if e >= lower and e < upper} | {upper})


def _expr(v):
    return v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v)


def _val(n):
    return n.meta.get("val") if isinstance(n, torch.fx.Node) else None


def _shape(n):
    v = _val(n)
    return [_expr(d) for d in v.shape] if isinstance(v, torch.Tensor) else None


def _is_sym(v):
    return isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool))


# Ops that combine elements along dims: which args to mask, along which of their dims, with what.
# Each rule takes (node, descs of the node's tensor args by position) and returns [(arg position, dims, fill)];
# dims None = every padded dim of that arg. Fill "ignore" = the loss's ignore_index; "-inf"/"+inf" per dtype.
def _dims(d, ndim):
    if d is None or (isinstance(d, (list, tuple)) and len(d) == 0):
        return list(range(ndim))
    return [x % max(ndim, 1) for x in (d if isinstance(d, (list, tuple)) else [d])]


def _reduce(fill):
    def rule(node, nd):
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        if isinstance(dim, torch.fx.Node):  # max.other, min.other: elementwise
            return []
        if node.target in (aten.sum.default, aten.mean.default, aten.amax.default, aten.amin.default):
            dim = None
        return [(0, _dims(dim, nd[0]), fill)]
    return rule


def _nll(node, nd):
    return [(0, None, 0), (1, None, "ignore")]


def _nll_backward(node, nd):
    return [(1, None, 0), (2, None, "ignore")]


COMBINE = {
    aten.sum: _reduce(0), aten.mean: _reduce(0), aten.prod: _reduce(1), aten.any: _reduce(0), aten.all: _reduce(1),
    aten.amax: _reduce("-inf"), aten.amin: _reduce("+inf"), aten.argmax: _reduce("-inf"),
    aten.argmin: _reduce("+inf"), aten.max: _reduce("-inf"), aten.min: _reduce("+inf"),
    aten.logsumexp: _reduce("-inf"), aten.linalg_vector_norm: lambda n, nd: [(0, _dims(n.args[2] if len(
        n.args) > 2 else n.kwargs.get("dim"), nd[0]), 0)],
    aten._softmax: lambda n, nd: [(0, _dims(n.args[1], nd[0]), "-inf")],
    aten._safe_softmax: lambda n, nd: [(0, _dims(n.args[1], nd[0]), "-inf")],
    aten._log_softmax: lambda n, nd: [(0, _dims(n.args[1], nd[0]), "-inf")],
    aten._softmax_backward_data: lambda n, nd: [(0, _dims(n.args[2], nd[0]), 0), (1, _dims(n.args[2], nd[1]), 0)],
    aten._log_softmax_backward_data: lambda n, nd: [(0, _dims(n.args[2], nd[0]), 0)],
    aten.mm: lambda n, nd: [(0, [1], 0), (1, [0], 0)],
    aten.addmm: lambda n, nd: [(1, [1], 0), (2, [0], 0)],
    aten.bmm: lambda n, nd: [(0, [2], 0), (1, [1], 0)],
    aten.baddbmm: lambda n, nd: [(1, [2], 0), (2, [1], 0)],
    aten.native_layer_norm_backward: lambda n, nd: [
        (i, list(range(nd[0] - len(n.args[2]))), 0) for i in (0, 1, 3, 4)],
    aten.embedding: lambda n, nd: [(1, None, 0)],
    aten.embedding_dense_backward: lambda n, nd: [(0, list(range(nd[1])), 0), (1, None, 0)],
    aten.nll_loss_forward: _nll, aten.nll_loss2d_forward: _nll,
    aten.nll_loss_backward: _nll_backward, aten.nll_loss2d_backward: _nll_backward,
    aten.gather: lambda n, nd: [(2, None, 0)],
    aten.index_select: lambda n, nd: [(2, None, 0)],
}
# Integer division reads its divisor's padding: padding of 0 would raise; made 1.
_DIVIDE = {aten.div, aten.floor_divide, aten.remainder, aten.fmod}

# Ops with no combining whose outputs keep their inputs' dims (by size) or make new dims of their own size.
SAFE = {
    aten.clone, aten.contiguous, aten.alias, aten.detach, aten._to_copy, aten.lift_fresh_copy, aten.copy,
    aten.permute, aten.transpose, aten.t, aten.unsqueeze, aten.squeeze, aten.expand, aten.split,
    aten.split_with_sizes, aten.unbind, aten.cat, aten.stack, aten.slice, aten.select, aten.native_layer_norm,
    aten.native_dropout, aten.native_dropout_backward, aten.rand_like, aten.randn_like, aten.bernoulli,
    aten.arange, aten.full, aten.zeros, aten.ones, aten.empty, aten.new_ones, aten.new_zeros, aten.new_empty,
    aten.new_full, aten.full_like, aten.zeros_like, aten.ones_like, aten.empty_like, aten.scalar_tensor,
    aten.sym_size, aten.index, aten.fill, aten.empty_strided, aten.new_empty_strided, aten._unsafe_index,
}
# Gradients of slicing: zeros with the gradient written into a part along a dim, which must not be padded.
SLICE_BACKWARD = {aten.slice_backward, aten.select_backward}
SAFE |= SLICE_BACKWARD
# Prefix ops: along a dim of its own, the real part reads only the real part before it.
CUMULATIVE = {aten.cumsum, aten.cumprod, aten.logcumsumexp, aten.cummax, aten.cummin}
SAFE |= CUMULATIVE
RESHAPE = {aten.view, aten._unsafe_view, aten.reshape, aten.view_copy}
# Ops that pick or move along a dim by position: fine on any other dim.
_ALONG = {aten.cat: 1, aten.split: 2, aten.split_with_sizes: 2, aten.unbind: 1, aten.native_layer_norm: None}


class _Analysis:
    """Propagates padded-dim descriptors through an ATen graph and collects the masks the graph needs."""

    def __init__(self, gm, bounded, probe, known):
        self.gm, self.bounded, self.probe, self.known = gm, bounded, probe, known
        self.desc = {}      # node -> tuple of Pad|None per dim (tensor), or list of those (tuple outputs)
        self.sym_nodes = set()  # nodes whose value is a size involving a bounded symbol
        self.masks = []     # (node, arg position, dims, fill)
        self.means = []     # mean nodes to rewrite as masked sum / real count
        self.out_masks = []  # (node, dim, Pad, fill): the node's result masked (padding that must hold a value)

    def fail(self, node, why):
        raise Unsupported(f"{node.format_node() if hasattr(node, 'format_node') else node}: {why}")

    # descriptors from a size expression alone
    def derived(self, expr):
        syms = expr.free_symbols & self.bounded
        if not syms:
            return None
        if len(syms) > 1:
            return False
        s, = syms
        c = sympy.expand(expr - s)
        if c.is_Integer:
            return Pad(s, 1, int(c), 1)
        return False

    def check(self, pad, expr):
        """pad describes a dim of size expr."""
        return pad is not None and sympy.expand(pad.outer * pad.inner * (pad.sym + pad.off) - expr) == 0

    def tensor_inputs(self, node):
        out = []
        for i, a in enumerate(node.args):
            items = a if isinstance(a, (list, tuple)) else [a]
            for b in items:
                if isinstance(b, torch.fx.Node) and isinstance(_val(b), torch.Tensor):
                    out.append((i, b))
        return out

    def padded(self, n):
        d = self.desc.get(n)
        return d is not None and not isinstance(d, list) and any(p is not None for p in d)

    def placeholder(self, node):
        v = _val(node)
        if _is_sym(v):
            if v.node.expr.free_symbols & self.bounded:
                self.sym_nodes.add(node)
            return
        shape = _shape(node)
        if shape is None:
            return
        saved = self.known.get(node.name)
        out = []
        for i, e in enumerate(shape):
            d = self.derived(e)
            if d is False:
                d = saved[i] if saved is not None and self.check(saved[i], e) else False
            if d is False:
                self.fail(node, f"input dim {i} of size {e} is not one padded size")
            out.append(d)
        self.desc[node] = tuple(out)

    def outputs_for(self, node, sources):
        """Descriptors of node's output tensors: a dim takes the descriptor of an input dim of the same size (all
        such inputs must agree), else one derived from its size."""
        v = _val(node)
        vals = v if isinstance(v, (list, tuple)) else [v]
        res = []
        for t in vals:
            if not isinstance(t, torch.Tensor):
                res.append(None)
                continue
            dims = []
            for e in (_expr(x) for x in t.shape):
                if not (e.free_symbols & self.bounded):
                    dims.append(None)
                    continue
                cands = {p for src in sources for p, se in zip(self.desc[src], _shape(src)) if
                         p is not None and sympy.expand(se - e) == 0}
                if len(cands) > 1:
                    self.fail(node, f"inputs disagree on how a dim of size {e} is padded")
                d = next(iter(cands)) if cands else self.derived(e)
                if d is False or d is None:
                    self.fail(node, f"an output dim of size {e} has no padding rule")
                dims.append(d)
            res.append(tuple(dims))
        return res if isinstance(v, (list, tuple)) else res[0]

    def reshape(self, node, src):
        """view/reshape: group input and output dims by equal products (at probe sizes); the padded factor of a
        group must fall inside one output dim."""
        in_e, out_e, in_d = _shape(src), _shape(node), self.desc[src]
        ev = lambda e: int(e.subs(self.probe))  # noqa: E731
        ins = [(i, ev(e)) for i, e in enumerate(in_e) if ev(e) != 1]
        outs = [(j, ev(e)) for j, e in enumerate(out_e) if ev(e) != 1]
        res = [None] * len(out_e)
        a = b = 0
        while a < len(ins) or b < len(outs):
            if a == len(ins) or b == len(outs):
                self.fail(node, "reshape sizes do not match")
            gi, gj, pi, po = [ins[a]], [outs[b]], ins[a][1], outs[b][1]
            a, b = a + 1, b + 1
            while pi != po:
                if pi < po:
                    if a == len(ins):
                        self.fail(node, "reshape sizes do not match")
                    gi.append(ins[a]); pi *= ins[a][1]; a += 1  # noqa: E702
                else:
                    if b == len(outs):
                        self.fail(node, "reshape sizes do not match")
                    gj.append(outs[b]); po *= outs[b][1]; b += 1  # noqa: E702
            pads = [(k, i) for k, (i, _) in enumerate(gi) if in_d[i] is not None]
            if not pads:
                continue
            if len(pads) > 1:
                self.fail(node, "a reshape merges two padded dims")
            k, i = pads[0]
            pad = in_d[i]
            right = gi[k + 1:]
            if any(not in_e[x].is_number for x, _ in right):
                self.fail(node, "a reshape merges a padded dim with a dynamic one")
            flat = pad.inner * math.prod(n for _, n in right)  # the padded factor's flat stride in the group
            period = ev(pad.sym + pad.off)
            stride = 1
            for j, n in reversed(gj):
                if stride <= flat and flat % stride == 0 and flat * period <= stride * n:
                    inner = flat // stride
                    outer = sympy.simplify(out_e[j] / (inner * (pad.sym + pad.off)))
                    if pad.sym in outer.free_symbols or not outer.is_integer and not outer.free_symbols:
                        self.fail(node, "a reshape splits a padded dim")
                    cand = Pad(pad.sym, inner, pad.off, int(outer) if outer.is_Integer else outer)
                    if not self.check(cand, out_e[j]):
                        self.fail(node, "a reshape splits a padded dim")
                    res[j] = cand
                    break
                stride *= n
            else:
                self.fail(node, "a reshape splits a padded dim")
        for j, e in enumerate(out_e):
            if (res[j] is None) != (not (e.free_symbols & self.bounded)):
                self.fail(node, f"reshape output dim {j} of size {e}")
        return tuple(res)

    def check_sym_values(self, node):
        """A size of a padded dim may set sizes (it is the bucket's there) but not be used as a number."""
        if not isinstance(node.target, torch._ops.OpOverload):
            return
        for arg, a in zip(node.target._schema.arguments, list(node.args) + [None] * 99):
            if arg.name in node.kwargs:
                a = node.kwargs[arg.name]
            items = a if isinstance(a, (list, tuple)) else [a]
            if not any(isinstance(x, torch.fx.Node) and x in self.sym_nodes for x in items):
                continue
            t = str(arg.type)  # sizes are int / int[] (SymInt in the schema's text); numbers are "number", float
            if "int" in t.lower().replace("point", "") and "number" not in t or node.target.overloadpacket is aten.arange:
                continue
            self.fail(node, f"a padded size is used as a number (argument {arg.name})")

    def call(self, node):
        t = node.target
        if t is operator.getitem:
            src, i = node.args
            d = self.desc.get(src)
            if isinstance(d, list):
                self.desc[node] = d[i]
            return
        if not isinstance(t, torch._ops.OpOverload):
            # Python arithmetic on sizes (sym nodes) or a function we do not know.
            syms = [a for a in node.args if isinstance(a, torch.fx.Node) and a in self.sym_nodes]
            if syms or (_is_sym(_val(node)) and _val(node).node.expr.free_symbols & self.bounded):
                self.sym_nodes.add(node)
            elif any(self.padded(a) for a in node.args if isinstance(a, torch.fx.Node)):
                self.fail(node, "a Python function on a padded tensor")
            return
        self.check_sym_values(node)
        v = _val(node)
        if _is_sym(v):
            if v.node.expr.free_symbols & self.bounded:
                self.sym_nodes.add(node)
            return
        srcs = [b for _, b in self.tensor_inputs(node)]
        outs = v if isinstance(v, (list, tuple)) else [v]
        out_padded = any(isinstance(o, torch.Tensor) and any(_expr(x).free_symbols & self.bounded for x in o.shape)
                         for o in outs)
        if not out_padded and not any(self.padded(s) for s in srcs):
            self.desc[node] = self.outputs_for(node, srcs)
            return
        pk = t.overloadpacket
        if pk in RESHAPE:
            self.desc[node] = self.reshape(node, node.args[0])
            return
        if pk in COMBINE:
            if pk in (aten.embedding_dense_backward,) and (len(node.args) > 4 and node.args[4]):
                self.fail(node, "scale_grad_by_freq counts padding")
            nd = {i: len(_val(a).shape) for i, a in enumerate(node.args)
                  if isinstance(a, torch.fx.Node) and isinstance(_val(a), torch.Tensor)}
            for pos, dims, fill in COMBINE[pk](node, nd):
                a = node.args[pos] if pos < len(node.args) else None
                if not isinstance(a, torch.fx.Node) or not self.padded(a):
                    continue
                d = self.desc[a]
                dims = [x for x in (range(len(d)) if dims is None else dims) if d[x] is not None]
                if dims:
                    self.masks.append((node, pos, dims, fill))
            if pk is aten.mean and any(m[0] is node for m in self.masks):
                x = node.args[0]
                dims = _dims(node.args[1] if len(node.args) > 1 and t is not aten.mean.default else None,
                             len(self.desc[x]))
                if any(self.desc[x][i] is None and not _shape(x)[i].is_number for i in dims):
                    self.fail(node, "a mean over a padded dim and a dynamic one")
                self.means.append((node, dims, self.desc[x], _shape(x)))
            if pk in (aten.gather, aten.index_select):
                self.plain_dim(node, node.args[0], node.args[1])
        elif pk is aten.constant_pad_nd:
            self.pad_nd(node)
        elif pk in _DIVIDE and len(node.args) > 1 and isinstance(node.args[1], torch.fx.Node) and \
                self.padded(node.args[1]) and not _val(node.args[1]).dtype.is_floating_point:
            self.masks.append((node, 1, [i for i, p in enumerate(self.desc[node.args[1]]) if p is not None], 1))
        elif pk in SAFE or torch.Tag.pointwise in t.tags:
            self.safe(node, pk)
        else:
            self.fail(node, "no padding rule for this op on a padded dim")
        self.desc[node] = self.outputs_for(node, srcs)

    def pad_nd(self, node):
        """constant_pad_nd along a padded dim: padding before it shifts the real part (nothing to do); padding
        after it must follow the real part, where the bucket's padding is: the result is masked from there on."""
        x, pads = node.args[0], node.args[1]
        value = node.args[2] if len(node.args) > 2 else 0
        d_in = self.desc[x]
        for i in range(len(pads) // 2):
            d = len(d_in) - 1 - i
            p = d_in[d]
            if p is None:
                continue
            left, right = pads[2 * i], pads[2 * i + 1]
            if not isinstance(left, int) or not isinstance(right, int) or p[1::2] != (1, 1):
                self.fail(node, "padding a merged padded dim or by a dynamic amount")
            if right > 0:
                self.out_masks.append((node, d, Pad(p.sym, 1, p.off + left, 1), value))

    def plain_dim(self, node, src, dim):
        d = self.desc.get(src)
        if d is not None and d[dim % len(d)] is not None and d[dim % len(d)][1::2] != (1, 1):
            self.fail(node, "indexing along a merged padded dim")

    def safe(self, node, pk):
        src = node.args[0] if node.args else None
        d = self.desc.get(src) if isinstance(src, torch.fx.Node) else None
        if pk in _ALONG and d is not None and not isinstance(d, list):
            if pk is aten.native_layer_norm:
                if any(p is not None for p in d[len(d) - len(node.args[1]):]):
                    self.fail(node, "layer norm over a padded dim")
                return
            dim = node.args[_ALONG[pk]] if len(node.args) > _ALONG[pk] else node.kwargs.get("dim", 0)
            if pk is aten.cat:
                dd = [self.desc.get(x) for x in src]
                if any(x is not None and x[dim % len(x)] is not None for x in dd):
                    self.fail(node, "cat along a padded dim")
            elif d[dim % len(d)] is not None:
                self.fail(node, f"{pk.__name__} along a padded dim")
        if pk in SLICE_BACKWARD:
            dim = node.args[2] % len(node.args[1])
            if _expr(_val(node).shape[dim]).free_symbols & self.bounded:
                self.fail(node, f"{pk.__name__} along a padded dim")
        if pk in CUMULATIVE and d is not None:
            self.plain_dim(node, src, node.args[1])
        if pk in (aten.slice, aten.select) and d is not None:
            dim = node.args[1] if len(node.args) > 1 else 0
            p = d[dim % len(d)]
            if p is None:
                return
            start = node.args[2] if len(node.args) > 2 else (0 if pk is aten.slice else None)
            if pk is aten.slice:
                step = node.args[4] if len(node.args) > 4 else 1
                if start is None:
                    start = 0
                if not isinstance(start, int) or start < 0 or step != 1:
                    self.fail(node, "a slice of a padded dim that counts from its end")
                if p[1::2] != (1, 1):
                    self.fail(node, "a slice of a merged padded dim")
            elif not isinstance(start, int) or start < 0:
                self.fail(node, "an index into a padded dim that counts from its end")
        if pk is aten.index:
            for i, x in enumerate(node.args[1]):
                if x is not None:
                    self.plain_dim(node, src, i)
                    if self.padded(x):
                        self.masks.append((node, ("index", i), [j for j, q in enumerate(self.desc[x])
                                                                if q is not None], 0))

    def run(self):
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node)
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.outputs = []
                for a in node.args[0]:
                    if isinstance(a, torch.fx.Node) and isinstance(_val(a), torch.Tensor):
                        self.outputs.append(("tensor", self.desc.get(a)))
                    elif isinstance(a, torch.fx.Node) and _is_sym(_val(a)):
                        self.outputs.append(("size", _val(a).node.expr))
                    else:
                        self.outputs.append((None, None))
            elif node.op != "get_attr":
                self.fail(node, f"{node.op} node")
        for node in self.gm.graph.nodes:  # copies into padded inputs (input mutations) cannot be cut back
            if node.op == "call_function" and getattr(node.target, "overloadpacket", None) is aten.copy_ and \
                    self.padded(node.args[0]):
                self.fail(node, "a mutation of a padded input")
        return self


def _fill(fill, node, arg):
    dtype = _val(arg).dtype
    if fill == "ignore":
        return node.args[4] if node.target.overloadpacket in (aten.nll_loss_forward, aten.nll_loss2d_forward) \
            else node.args[5]
    if fill in ("-inf", "+inf"):
        sign = -1 if fill == "-inf" else 1
        if dtype == torch.bool:
            return sign > 0
        if dtype.is_floating_point:
            return sign * math.inf
        info = torch.iinfo(dtype)
        return info.max if sign > 0 else info.min
    return bool(fill) if dtype == torch.bool else fill


_real_tensors = {}  # (device, size) -> 0-d int64 tensor; never written, shared by every plan


class Plan:
    """A graph rewritten to run at bucket sizes, and how to pad its arguments and cut back its results."""

    def __init__(self, gm, a, bounds, options, device, saved_from, link):
        """a: the graph's analysis (None: the graph is not padded, only its saved inputs are cut back)."""
        self.gm, self.device = gm, torch.device("tpu", device)
        self.syms = sorted(bounds, key=str)
        self.edges = {s: buckets_for(lo, hi, options) for s, (lo, hi) in bounds.items()}
        self.saved_from, self.link = saved_from, link
        phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
        saved_names = set(link.get("saved", {})) if link.get("padded_saved") else set()
        self.args = []   # per argument: ("size", expr) | ("tensor", descs, exprs, saved) | None
        self.solvers = []  # (arg index, dim or None, expr): where each symbol's real value is read
        for i, n in enumerate(phs):
            v = _val(n)
            if _is_sym(v):
                self.args.append(("size", v.node.expr))
                self.solvers.append((i, None, v.node.expr))
            elif isinstance(v, torch.Tensor):
                shape = _shape(n)
                saved = n.name in saved_names
                descs = a.desc.get(n) if a is not None else link["saved"][n.name] if saved else None
                self.args.append(("tensor", descs, shape, saved))
                if not saved:
                    self.solvers += [(i, d, e) for d, e in enumerate(shape) if len(e.free_symbols) == 1]
            else:
                self.args.append(None)
        self.outputs = a.outputs if a is not None else []
        self.memo = {}
        self.linear = []  # solvers as integer lines: size = a * sym + b
        for i, d, e in self.solvers:
            sym, = e.free_symbols
            a_, b_ = sympy.expand(e).coeff(sym), sympy.expand(e - sympy.expand(e).coeff(sym) * sym)
            if a_.is_Integer and b_.is_Integer and a_ != 0:
                self.linear.append((i, d, sym, int(a_), int(b_)))
        if a is not None:
            self.rewrite(a, phs)

    # the graph rewrite (done once)
    def rewrite(self, a, phs):
        g = self.gm.graph
        last = phs[-1]
        self.real, self.bucket_sizes, self.bad, self.done, self.tail = {}, {}, {}, {}, {}
        for s in self.syms:
            with g.inserting_after(last):
                last = self.real[s] = g.placeholder(f"_tt_real_{s}")
        for s in self.syms:
            with g.inserting_after(last):
                last = self.bucket_sizes[s] = g.placeholder(f"_tt_bucket_{s}")
        self.order = {n: i for i, n in enumerate(g.nodes)}
        import os
        skip = os.environ.get("TT_SKIP", "").split(",")
        for node, pos, dims, fill in a.masks:
            if node.target.overloadpacket.__name__ in skip or f"{node.target.overloadpacket.__name__}{pos}" in skip:
                continue
            arg = node.args[1][pos[1]] if isinstance(pos, tuple) else node.args[pos]
            x = self.masked(g, a, arg, dims, _fill(fill, node, arg))
            if isinstance(pos, tuple):
                idx = list(node.args[1])
                idx[pos[1]] = x
                node.update_arg(1, idx)
            else:
                node.update_arg(pos, x)
        for node, d, p, fill in a.out_masks:
            dtype = _val(node).dtype
            fill = bool(fill) if dtype == torch.bool else fill if dtype.is_floating_point else int(fill)
            with g.inserting_before(node.next):
                y = g.call_function(aten.where.ScalarSelf, (self.padding(g, node, len(a.desc[node]), d, p), fill,
                                                            node))
            node.replace_all_uses_with(y, delete_user_cb=lambda u, y=y: u is not y and u.target is not
                                       aten.sym_size.int)
        for node, dims, descs, shape in a.means:
            node.target = aten.sum.default if node.target is aten.mean.default else aten.sum.dim_IntList
            with g.inserting_before(node.next):
                static, count = 1, None
                for d in dims:
                    p = descs[d]
                    if p is None:
                        static *= int(shape[d])
                        continue
                    t = self.real[p.sym]
                    if p.off:
                        t = g.call_function(aten.add.Scalar, (t, p.off))
                    if not isinstance(p.outer, int):
                        raise Unsupported("a mean over a padded dim merged with a dynamic one")
                    static *= p.outer * p.inner
                    count = t if count is None else g.call_function(aten.mul.Tensor, (count, t))
                if static != 1:
                    count = g.call_function(aten.mul.Scalar, (count, static))
                mean = g.call_function(aten.div.Tensor, (node, count))
            node.replace_all_uses_with(mean, delete_user_cb=lambda u: u is not mean and u is not count)
        g.lint()
        self.gm.recompile()

    def masked(self, g, a, x, dims, fill):
        """x with its padding along dims set to fill. The mask is applied where x's data is laid out in order: on
        the tensor a transpose or permute reads (a transposed masked read is several times slower), once per
        tensor, dims and fill, right after the tensor is made; the views are applied again on top."""
        views = []
        while x.op == "call_function" and x.target in (aten.t.default, aten.transpose.int, aten.permute.default) \
                and x.args[0] in a.desc:
            nd = len(a.desc[x])
            if x.target is aten.permute.default:
                perm = [p % nd for p in x.args[1]]
            else:
                i, j = (0, 1) if x.target is aten.t.default else (x.args[1] % nd, x.args[2] % nd)
                perm = list(range(nd))
                if nd >= 2:
                    perm[i], perm[j] = perm[j], perm[i]
            dims = [perm[d] for d in dims]
            views.append(x)
            x = x.args[0]
        key = (x, tuple(sorted(dims)), fill)
        y = self.done.get(key)
        if y is None:
            at = x if x.op != "placeholder" else self.bucket_sizes[self.syms[-1]]
            here = self.order[at]
            with g.inserting_before(self.tail.get(at, at).next):  # after what was put after `at` already
                y = x
                for d in sorted(dims):
                    p, nd = a.desc[x][d], len(a.desc[x])
                    bad, pos = self.bad.get((p, nd, d), (None, None))
                    if bad is None or pos > here:
                        bad = self.padding(g, x, nd, d, p)
                        self.bad[(p, nd, d)] = (bad, here)
                    y = g.call_function(aten.where.ScalarSelf, (bad, fill, y))
            self.done[key] = self.tail[at] = y
        for v in reversed(views):
            with g.inserting_before(v):
                y = g.call_function(v.target, (y,) + tuple(v.args[1:]))
        return y

    def padding(self, g, x, nd, d, p):
        n = g.call_function(aten.sym_size.int, (x, d))
        idx = g.call_function(aten.arange.default, (n,), {"dtype": torch.int64, "device": self.device})
        if p.inner > 1:
            idx = g.call_function(aten.div.Scalar_mode, (idx, p.inner), {"rounding_mode": "floor"})
        if p.outer != 1:
            period = self.bucket_sizes[p.sym]
            if p.off:
                period = g.call_function(operator.add, (period, p.off))
            idx = g.call_function(aten.remainder.Scalar, (idx, period))
        lim = self.real[p.sym]
        if p.off:
            lim = g.call_function(aten.add.Scalar, (lim, p.off))
        bad = g.call_function(aten.ge.Tensor, (idx, lim))
        return g.call_function(aten.view.default, (bad, [1] * d + [-1] + [1] * (nd - d - 1)))

    # per call: sympy only on the first call with each set of sizes (memo), plain integer math otherwise
    def solve(self, args):
        real = {}
        for i, d, sym, a, b in self.linear:
            if sym not in real:
                v = args[i] if d is None else args[i].shape[d]
                if (int(v) - b) % a == 0:
                    real[sym] = (int(v) - b) // a
        key = tuple(sorted((str(k), v) for k, v in real.items()))
        sizes = self.memo.get(key)
        if sizes is None:
            missing = [s for s in self.syms if s not in real]
            if missing:
                raise RuntimeError(f"torchtpu: bounded dynamic sizes {missing} cannot be read from the graph's inputs")
            padded = {**real, **{s: self.bucket(s, real[s]) for s in self.syms}}
            ev = lambda e, env: int(e) if e.is_number else int(e.subs(env))  # noqa: E731
            args_at = [None if spec is None else ev(spec[1], padded) if spec[0] == "size" else
                       [ev(e, padded) for e in spec[2]] for spec in self.args]
            outs_at = [ev(info, real) if kind == "size" else None for kind, info in self.outputs]
            sizes = self.memo[key] = (real, padded, args_at, outs_at)
        return sizes

    def real_tensor(self, v):
        """The 0-d tensor holding a real size, made once per value (a host write waits for the device)."""
        t = _real_tensors.get((self.device, v))
        if t is None:
            t = _real_tensors[(self.device, v)] = torch.tensor(v, dtype=torch.int64).to(self.device)
        return t

    def bucket(self, s, v):
        return next((e for e in self.edges[s] if e >= v), v)

    def pad(self, t, descs, shape, real, padded):
        if list(t.shape) == shape:
            return t  # a saved tensor: the forward left it padded
        dims = [d for d, p in enumerate(descs) if p is not None and real[p.sym] != padded[p.sym]]
        if len(dims) == 1 and t.is_contiguous() and t.numel():
            # one padded dim: rows copied into a zeroed bucket-sized tensor by the runtime, with no program
            d = dims[0]
            p = descs[d]
            r, q = real[p.sym] + p.off, padded[p.sym] + p.off
            inner = p.inner * math.prod(t.shape[d + 1:])
            out = torch.zeros(shape, dtype=t.dtype, device=t.device)
            _C.copy_rows(out, t, math.prod(t.shape[:d + 1]) // r // p.inner, r * inner, q * inner, r * inner)
            return out
        for d, p in enumerate(descs):
            if p is None or real[p.sym] == padded[p.sym]:
                continue
            r, q = real[p.sym] + p.off, padded[p.sym] + p.off
            u = t.unflatten(d, (-1, r, p.inner))
            spec = [0, 0] * (u.dim() - d - 2) + [0, q - r]
            t = torch.constant_pad_nd(u, spec, 0).flatten(d, d + 2)
        return t

    def cut(self, t, descs, real, padded):
        """The real part of a padded result: contiguous as the unpadded graph's would be (copied by rows, no
        program) when there is one padded dim, else views (and a copy where a reshape needs one)."""
        dims = [d for d, p in enumerate(descs) if p is not None and real[p.sym] != padded[p.sym]]
        if len(dims) == 1 and t.is_contiguous() and t.numel():
            d = dims[0]
            p = descs[d]
            r, q = real[p.sym] + p.off, padded[p.sym] + p.off
            inner = p.inner * math.prod(t.shape[d + 1:])
            shape = list(t.shape)
            shape[d] = shape[d] // q * r
            out = torch.empty(shape, dtype=t.dtype, device=t.device)
            _C.copy_rows(out, t, math.prod(t.shape[:d + 1]) // q // p.inner, r * inner, r * inner, q * inner)
            return out
        for d, p in enumerate(descs):
            if p is None or real[p.sym] == padded[p.sym]:
                continue
            if p.outer == 1 and p.inner == 1:  # a dim of its own: a view
                t = t.narrow(d, 0, real[p.sym] + p.off)
            else:
                t = t.unflatten(d, (-1, padded[p.sym] + p.off, p.inner)).narrow(
                    d + 1, 0, real[p.sym] + p.off).flatten(d, d + 2)
        return t

    def wrap(self, inner):
        """The runner for the rewritten graph: pads the arguments, appends the real sizes, cuts the results."""
        def run(args):
            real, padded, args_at, outs_at = self.solve(args)
            new = []
            for a, spec, at in zip(args, self.args, args_at):
                if spec is not None and spec[0] == "size":
                    a = at
                elif spec is not None and spec[1] is not None and any(p is not None for p in spec[1]):
                    a = self.pad(a, spec[1], at, real, padded)
                new.append(a)
            new += [self.real_tensor(real[s]) for s in self.syms] + [padded[s] for s in self.syms]
            out = inner(new)
            return self.finish(out, real, padded, outs_at)

        run._boxed_call = True
        return run

    def finish(self, out, real, padded, outs_at):
        res = list(out)
        for k, (kind, info) in enumerate(self.outputs):
            if kind == "size":
                res[k] = outs_at[k]
            elif kind == "tensor" and info is not None and k < self.saved_from:
                res[k] = self.cut(res[k], info, real, padded)
        return res if isinstance(out, list) else type(out)(res)

    def wrap_unpadded(self, inner):
        """The runner of a graph that is not padded but receives tensors a padded forward saved: cuts them back."""
        def run(args):
            real, padded, args_at, _ = self.solve(args)
            new = list(args)
            for i, spec in enumerate(self.args):
                if spec is not None and spec[0] == "tensor" and spec[3] and list(args[i].shape) == args_at[i]:
                    new[i] = self.cut(args[i], spec[1], real, padded)
            return inner(new)

        run._boxed_call = True
        return run


def bounded_symbols(gm):
    """Symbols of the graph's input sizes that Dynamo bounded (mark_dynamic(..., max=)): {symbol: (lower, upper)}."""
    out = {}
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = _val(n)
        sizes = [v] if _is_sym(v) else list(v.shape) if isinstance(v, torch.Tensor) else []
        for x in sizes:
            if not isinstance(x, torch.SymInt):
                continue
            env = x.node.shape_env
            for s in x.node.expr.free_symbols:
                r = env.var_to_range.get(s)
                if r is not None and r.upper.is_Integer and int(r.upper) < 2 ** 31:
                    out[s] = (max(int(r.lower), 1), int(r.upper))
    return out


def plan(gm, kind, options, device, link):
    """A Plan that runs gm at bucket sizes, or None with a reason (Unsupported) when gm stays per size.

    link is shared by a Dynamo graph's forward and backward: the forward records how the tensors it saves are
    padded; the backward is padded only if the forward was. TORCHTPU_BUCKETS=0 turns padding off (one program
    per size: on the host driver a compile takes milliseconds and the masks cost time on every call)."""
    bounds = bounded_symbols(gm)
    if not bounds:
        return None, None
    if os.environ.get("TORCHTPU_BUCKETS", "1") == "0":
        return None, "TORCHTPU_BUCKETS=0"
    saved_from = len(list(gm.graph.nodes)[-1].args[0])
    meta = getattr(torch._guards.TracingContext.try_get(), "fw_metadata", None)
    if kind == "forward":
        if meta is None:
            return None, "no aot_autograd metadata for the forward"
        saved_from = len(getattr(meta, "tokens", {}) or {}) + meta.num_forward
    known = link.get("saved", {}) if kind == "backward" else {}
    if kind == "backward" and not link.get("padded_saved"):
        return None, "its forward is not padded"
    try:
        a = _Analysis(gm, set(bounds), _probe(gm, bounds), known).run()
        if meta is not None and kind != "backward":
            first = len(getattr(meta, "tokens", {}) or {}) + meta.num_mutated_inp_runtime_indices
            for k, info in enumerate(meta.output_info):
                kind_k, descs = a.outputs[first + k]
                if kind_k == "tensor" and descs and any(descs) and \
                        info.output_type.name not in ("non_alias", "unsafe_view_alias", "custom_function_view"):
                    raise Unsupported(f"output {k} is padded and aliases an input")
    except Unsupported as e:
        return None, str(e)
    if kind == "forward":
        link["padded_saved"] = True
        out = list(gm.graph.nodes)[-1].args[0]
        link["saved"] = {n.name: a.outputs[k][1] for k, n in enumerate(out)
                         if k >= saved_from and isinstance(n, torch.fx.Node) and a.outputs[k][0] == "tensor"}
    return Plan(gm, a, bounds, options, device, saved_from, link), None


def unpadder(gm, options, device, link):
    """For a backward that cannot be padded although its forward was: cuts the saved tensors back."""
    return Plan(gm, None, bounded_symbols(gm), options, device, 0, link)


def _probe(gm, bounds):
    """Distinct large values for every symbol, to group reshape dims by size without coincidences."""
    syms = set()
    for n in gm.graph.nodes:
        v = _val(n)
        for x in ([v] if _is_sym(v) else list(v.shape) if isinstance(v, torch.Tensor) else []):
            if isinstance(x, torch.SymInt):
                syms |= x.node.expr.free_symbols
    primes = [1009, 1013, 1019, 1021, 1031, 1033, 1039, 1049, 1051, 1061, 1063, 1069, 1087, 1091, 1093, 1097]
    return {s: primes[i % len(primes)] + 1000 * (i // len(primes)) for i, s in enumerate(sorted(syms, key=str))}

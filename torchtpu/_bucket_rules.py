"""Which ops of an ATen graph need what to run exactly at a bucket's size (torchtpu/_buckets.py does the padding).

_Analysis walks the graph once, giving every tensor a descriptor per dim (Pad, or None for a dim that is not
padded), and collects the masks: for each op that combines elements along a padded dim, which argument is masked
along which dims with which value (its identity: 0 for sums and contractions, -inf for max and softmax, the loss's
ignore_index for targets). Elementwise ops, views and factories need nothing; reshapes move a padded factor into
the dim that holds it. An op with no rule on a padded dim raises Unsupported naming it, and the graph stays one
program per size.
"""
import math
import operator
from typing import NamedTuple

import sympy
import torch

aten = torch.ops.aten

class Pad(NamedTuple):
    sym: object
    inner: int
    off: int
    outer: object  # int or a size expression without sym


class Unsupported(Exception):
    """The graph cannot be padded (the message says why); it runs one program per size."""

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
                if any(self.desc[x][i] is None and not _shape(x)[i].is_number or
                       self.desc[x][i] is not None and not isinstance(self.desc[x][i].outer, int) for i in dims):
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

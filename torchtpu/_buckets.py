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
padding is only ever read by masked ops (_bucket_rules.py decides which). Inputs are padded and outputs cut back
to the real size (contiguous, as the unpadded graph's) by a queued row copy in the runtime (tt_rt_copy_rows), which
compiles nothing. Tensors the forward saves for the backward stay padded between the two graphs.

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
import os

import sympy
import torch

from . import _C
from ._bucket_rules import Unsupported, _Analysis, _is_sym, _probe, _shape, _val

aten = torch.ops.aten


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

def mark_dynamic(t, dim, *, min=None, max=None, options=None):
    """Fused eager mode's bounded size: dim `dim` of tpu tensor `t` varies between calls (a sequence length).

    Windows that read `t` (and results computed from it that carry the size) run as the program of the size's
    bucket, the real size a runtime argument, so every size of a bucket shares one compiled program; results stay
    exact (csrc/ir/bucket.c masks the padding). Buckets: powers of two, up to `max` when given (then the last bucket
    is `max`); `options` as torch.compile's (`bucket_size`, `num_dynamic_buckets`). `t` must fill its storage
    contiguously (mark the tensor the data was created as). Returns `t`. Strict and debug mode run ops one at a
    time (nothing to pad); a window the rewrite cannot pad runs per size (`TORCHTPU_LOG=fusion` says why)."""
    if not isinstance(t, torch.Tensor) or t.device.type != "tpu":
        raise TypeError(f"mark_dynamic: a tpu tensor, got {type(t).__name__}"
                        + (f" on {t.device}" if isinstance(t, torch.Tensor) else ""))
    if not -t.dim() <= dim < t.dim():
        raise IndexError(f"mark_dynamic: dim {dim} of a {t.dim()}-d tensor")
    dim %= t.dim()
    size = t.shape[dim]
    if size < 2:
        raise ValueError(f"mark_dynamic: sizes 0 and 1 are not dynamic (dim {dim} has {size}), as in Dynamo")
    if min is not None and size < min or max is not None and size > max:
        raise ValueError(f"mark_dynamic: size {size} of dim {dim} is outside [{min}, {max}]")
    if max is None:
        bucket = 1 << (size - 1).bit_length()
    else:
        bucket = next(b for b in buckets_for(min or 2, max, options or {}) if b >= size)
    _C.mark_dynamic(t, dim, bucket)
    return t


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
_padding_tensors = {}  # (device, n, inner, period, real) -> bool [n]: where a dim's padding is; never written


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
        self.body = last.next  # the first op: what masks of graph inputs go before
        self.real, self.mask_ph, self.mask_keys, self.done, self.tail = {}, {}, [], {}, {}
        for s in self.syms:
            with g.inserting_after(last):
                last = self.real[s] = g.placeholder(f"_tt_real_{s}")
        self.last_ph = last
        for node, pos, dims, fill in a.masks:
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
                y = g.call_function(aten.where.ScalarSelf, (self.padding(g, _shape(node)[d], len(a.desc[node]), d, p),
                                                            fill, node))
            node.replace_all_uses_with(y, delete_user_cb=lambda u, y=y: u is not y)
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
        tensor, dims and fill, right after the tensor is made (graph inputs: before the first op); the views are
        applied again on top."""
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
            at = "inputs" if x.op == "placeholder" else x
            after = self.tail.get(at)
            where = after.next if after is not None else self.body if at == "inputs" else x.next
            with g.inserting_before(where):  # after what was put after `at` already: in the order made
                y = x
                for d in sorted(dims):
                    y = g.call_function(aten.where.ScalarSelf,
                                        (self.padding(g, _shape(x)[d], len(a.desc[x]), d, a.desc[x][d]), fill, y))
            self.done[key] = self.tail[at] = y
        for v in reversed(views):
            with g.inserting_before(v):
                y = g.call_function(v.target, (y,) + tuple(v.args[1:]))
        return y

    def padding(self, g, size, nd, d, p):
        """Where the padding is, along dim d (of size `size`, described by p) of an nd-dim tensor: a bool vector,
        True on padding, viewed to broadcast. The vectors are graph inputs, made per call from the real sizes
        (made inside the graph, their index arithmetic was fused into every masked op and redone per element)."""
        key = (p, size)
        ph = self.mask_ph.get(key)
        if ph is None:
            with g.inserting_after(self.last_ph):
                ph = self.last_ph = self.mask_ph[key] = g.placeholder(f"_tt_padding_{len(self.mask_keys)}")
            self.mask_keys.append(key)
        return g.call_function(aten.view.default, (ph, [1] * d + [-1] + [1] * (nd - d - 1)))

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
            masks = [self.padding_tensor(ev(size, padded), p.inner, padded[p.sym] + p.off, real[p.sym] + p.off)
                     for p, size in getattr(self, "mask_keys", [])]
            sizes = self.memo[key] = (real, padded, args_at, outs_at, masks)
        return sizes

    def padding_tensor(self, n, inner, period, real):
        """Bool [n], True where (i // inner) % period >= real: the padding of a dim. Made once per shape."""
        k = (self.device, n, inner, period, real)
        t = _padding_tensors.get(k)
        if t is None:
            i = torch.arange(n) // inner % period
            t = _padding_tensors[k] = (i >= real).to(self.device)
        return t

    def real_tensor(self, v):
        """The 0-d tensor holding a real size, made once per value (made per call, it cost ~0.8 ms a graph call in
        the GPT training step measured)."""
        t = _real_tensors.get((self.device, v))
        if t is None:
            t = _real_tensors[(self.device, v)] = torch.tensor(v, dtype=torch.int64).to(self.device)
        return t

    def bucket(self, s, v):
        return next((e for e in self.edges[s] if e >= v), v)

    def rows(self, t, descs, real, padded, grow):
        """t with its one padded dim grown to the bucket (grow) or cut back to the real size, copied by rows in
        the runtime (no program for any size); None when t has other than one such dim or is not contiguous."""
        dims = [d for d, p in enumerate(descs) if p is not None and real[p.sym] != padded[p.sym]]
        if len(dims) != 1 or not t.is_contiguous() or not t.numel():
            return None
        d = dims[0]
        p = descs[d]
        r, q = real[p.sym] + p.off, padded[p.sym] + p.off
        src, dst = (r, q) if grow else (q, r)
        inner = p.inner * math.prod(t.shape[d + 1:])
        shape = list(t.shape)
        shape[d] = shape[d] // src * dst
        out = (torch.zeros if grow else torch.empty)(shape, dtype=t.dtype, device=t.device)
        _C.copy_rows(out, t, math.prod(t.shape[:d + 1]) // src // p.inner, r * inner, dst * inner, src * inner)
        return out

    def pad(self, t, descs, shape, real, padded):
        if list(t.shape) == shape:
            return t  # a saved tensor: the forward left it padded
        out = self.rows(t, descs, real, padded, grow=True)
        if out is not None:
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
        """The real part of a padded result: contiguous as the unpadded graph's would be (rows) when there is one
        padded dim, else views (and a copy where a reshape needs one)."""
        out = self.rows(t, descs, real, padded, grow=False)
        if out is not None:
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
            real, padded, args_at, outs_at, masks = self.solve(args)
            new = []
            for a, spec, at in zip(args, self.args, args_at):
                if spec is not None and spec[0] == "size":
                    a = at
                elif spec is not None and spec[1] is not None and any(p is not None for p in spec[1]):
                    a = self.pad(a, spec[1], at, real, padded)
                new.append(a)
            new += [self.real_tensor(real[s]) for s in self.syms] + masks
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
            real, padded, args_at, _, _ = self.solve(args)
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

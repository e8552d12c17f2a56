/* host_fuse.c — fused elementwise groups: planned at compile time, run tile by tile at execute time.
 *
 * Planning walks the nodes in order with any number of groups open. An elementwise node (unary, binary,
 * compare, select, clamp, convert), a reshape or a broadcast_in_dim joins the open groups of its operands that
 * have its element count (merging them when there are several), else the last group it could join (independent
 * ops of one size share a loop), or opens a group. A node that reads a value of an open group without joining it
 * (another count; a broadcast or scalar predicate reading it through index math; any other op) closes that group.
 * A group runs when the interpreter reaches its last member, so every external operand (leaves, unfused nodes,
 * earlier groups) is ready by then, and no node outside it reads its values before that. Chains interleaved op by
 * op (a foreach optimizer step over tensors of several sizes) fuse chain by chain. A node of at most one tile
 * that would open a group beside a bigger one joined last runs alone instead (a scalar's math between an
 * optimizer's steps: groups of a few elements cost more than they save).
 *
 * Row groups: a reduction over a value's trailing dims (rows of up to MAX_ROW elements) joins the group of its
 * operand, which then sees its n elements as rows; the reduction's result and the elementwise math on it are
 * row-level members (one element per row), and a broadcast of a row-level value back over its rows is an
 * element-level member. So softmax, layer_norm and their backward passes run as one loop over tiles of whole
 * rows, every intermediate in the tile (the unfused path wrote each to memory and read it back). Reductions
 * call the unfused kernel's row reduction, so results stay bit for bit equal.
 *
 * Execution (host_fuse_run.c) splits [0, N) into parts (one scratch area each, so parts never share buffers), each
 * part into tiles of TILE elements. Per tile, each step computes one group value into a compute-class buffer (f32,
 * f64 or i64, as host_elementwise.c does) using the same math functions, and rounds to the value's dtype after
 * every op (bf16/f16/narrow ints round-trip through their storage type), so results equal the unfused
 * interpreter's bit for bit. Values used outside the group are stored to their arena slot; the others never
 * leave the tile.
 * TORCHTPU_HOST_FUSE=0 disables fusion (for comparisons).
 */
#include "host_fuse_internal.h"

#include <stdlib.h>
#include <string.h>

static bool fusible(const tt_ir_program *p, const tt_ir_node *n) {
    if (n->op < TT_OP_ABS || n->op > TT_OP_RESHAPE || n->n_outputs != 1) return false;
    const tt_ir_type *ot = &p->types[n->outputs[0]];
    if (tt_host_numel(ot) <= 0) return false;
    if (n->op == TT_OP_BROADCAST_IN_DIM || n->op == TT_OP_RESHAPE || n->op == TT_OP_CONVERT || n->op == TT_OP_SELECT)
        return true;
    if (n->n_inputs < 1 || n->n_inputs > 3) return false;
    return tt_host_ew_type_ok(n->op, tt_host_in_type(p, n, 0)->dtype, ot->dtype);
}

/* A broadcast that moves no element: same count, the operand's non-1 dims mapped in increasing order. */
static bool broadcast_is_linear(const tt_ir_program *p, const tt_ir_node *n) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0);
    if (tt_host_numel(xt) != tt_host_numel(&p->types[n->outputs[0]])) return false;
    int64_t prev = -1;
    for (int32_t i = 0; i < xt->rank; i++) {
        if (xt->dims[i] == 1) continue;
        if (n->attrs.broadcast.dims.v[i] <= prev) return false;
        prev = n->attrs.broadcast.dims.v[i];
    }
    return true;
}

/* Whether operand i of a fusible node must be materialized (read through index math or as a splat). */
static bool needs_external(const tt_ir_program *p, const tt_ir_node *n, int i) {
    if (n->op == TT_OP_BROADCAST_IN_DIM) return !broadcast_is_linear(p, n);
    return tt_host_numel(tt_host_in_type(p, n, i)) != tt_host_numel(&p->types[n->outputs[0]]);
}


/* ---- building one group's steps ---- */
typedef struct gbuild {
    const tt_ir_program *p;
    fgroup *g;
    int32_t *vid_of;   /* per program value: vid in this group, or -1 (reset after) */
    int32_t cap_steps;
    bool row;          /* the member being added is row-level */
} gbuild;

static int32_t add_step(gbuild *b, const fstep *s) {
    fgroup *g = b->g;
    if (g->n_steps == b->cap_steps) {
        int32_t cap = b->cap_steps ? b->cap_steps * 2 : 16;
        fstep *ns = realloc(g->steps, (size_t)cap * sizeof *ns);
        fvid *nv = realloc(g->vids, (size_t)cap * sizeof *nv);
        if (ns) g->steps = ns;
        if (nv) g->vids = nv;
        if (!ns || !nv) return -1;
        b->cap_steps = cap;
    }
    /* Every step defines exactly one new vid, numbered like the step. */
    int32_t k = g->n_steps++;
    g->steps[k] = *s;
    g->steps[k].out = k;
    g->vids[k] = (fvid){tt_host_class_of(s->out_dt), -1, -1, false, k};
    g->n_vids = g->n_steps;
    return k;
}

/* The vid holding external value v read linearly (or as a splat when it has one element and the group more). */
static int32_t external(gbuild *b, tt_ir_value v) {
    if (b->vid_of[v] >= 0) return b->vid_of[v];
    const tt_ir_type *t = &b->p->types[v];
    fstep s;
    memset(&s, 0, sizeof s);
    int64_t level_n = b->row ? b->g->n / b->g->row : b->g->n;
    s.kind = tt_host_numel(t) == level_n ? S_LOAD : S_SPLAT;
    s.in_dt = s.out_dt = t->dtype;
    s.src = v;
    s.row = b->row;
    int32_t k = add_step(b, &s);
    if (k >= 0) b->vid_of[v] = k;
    return k;
}

/* broadcast_in_dim's result as coalesced dims with the operand's stride along each (0: broadcast); size-1 dims
 * dropped. Returns the rank. */
static int32_t bcast_layout(const tt_ir_program *p, const tt_ir_node *n, int64_t *dims, int64_t *str) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0), *ot = &p->types[n->outputs[0]];
    int64_t xs[TT_MAX_RANK], sstr[TT_MAX_RANK];
    tt_host_contiguous_strides(xt->rank, xt->dims, xs);
    for (int32_t d = 0; d < ot->rank; d++) sstr[d] = 0;
    for (int32_t i = 0; i < xt->rank; i++) sstr[n->attrs.broadcast.dims.v[i]] = xt->dims[i] == 1 ? 0 : xs[i];
    int32_t r = 0;
    for (int32_t d = 0; d < ot->rank; d++) {
        if (ot->dims[d] == 1) continue;
        if (r > 0 && str[r - 1] == sstr[d] * ot->dims[d]) {
            dims[r - 1] *= ot->dims[d];
            str[r - 1] = sstr[d];
            continue;
        }
        dims[r] = ot->dims[d];
        str[r] = sstr[d];
        r++;
    }
    return r;
}

/* Whether broadcast n spreads each element of its operand over `row` consecutive elements of its result. */
static bool bcast_over_rows(const tt_ir_program *p, const tt_ir_node *n, int64_t row) {
    if (n->op != TT_OP_BROADCAST_IN_DIM || row < 2) return false;
    int64_t dims[TT_MAX_RANK], str[TT_MAX_RANK];
    int32_t r = bcast_layout(p, n, dims, str);
    if (r == 1) return dims[0] == row && str[0] == 0; /* one row */
    return r == 2 && str[0] == 1 && dims[1] == row && str[1] == 0;
}

/* Elements per row when n reduces a float value over trailing dims (every kept dim of size > 1 before every
 * reduced one) into its own dtype, with a kind the row kernel runs; else 0. */
static int64_t reduce_row(const tt_ir_program *p, const tt_ir_node *n) {
    if (n->op != TT_OP_REDUCE || n->n_inputs != 1 || n->n_outputs != 1) return 0;
    const tt_ir_type *xt = tt_host_in_type(p, n, 0);
    tt_ir_reduce_kind k = n->attrs.reduce.kind;
    tt_host_class c = tt_host_class_of(xt->dtype);
    if (!tt_dtype_is_float(xt->dtype) || (c != TT_HOST_CF32 && c != TT_HOST_CF64) ||
        xt->dtype != p->types[n->outputs[0]].dtype || tt_host_numel(xt) <= 0)
        return 0;
    if (k != TT_REDUCE_ADD && k != TT_REDUCE_MUL && k != TT_REDUCE_MAX && k != TT_REDUCE_MIN) return 0;
    int64_t row = 1;
    bool in_reduced = false;
    for (int32_t d = 0; d < xt->rank; d++) {
        if (xt->dims[d] == 1) continue;
        bool red = false;
        for (int64_t i = 0; i < n->attrs.reduce.dims.n; i++) red |= n->attrs.reduce.dims.v[i] == d;
        if (red) {
            in_reduced = true;
            row *= xt->dims[d];
        } else if (in_reduced) {
            return 0;
        }
    }
    return row >= 2 && row <= MAX_ROW ? row : 0;
}

static int32_t broadcast_step(gbuild *b, const tt_ir_node *n) {
    const tt_ir_program *p = b->p;
    const tt_ir_type *xt = tt_host_in_type(p, n, 0);
    tt_ir_value x = p->operands[n->inputs_offset];
    fstep s;
    memset(&s, 0, sizeof s);
    s.in_dt = s.out_dt = xt->dtype;
    s.src = x;
    s.row = b->row;
    int32_t xv = b->vid_of[x];
    if (xv >= 0 && b->g->steps[xv].row && !b->row && bcast_over_rows(p, n, b->g->row)) {
        s.kind = S_ROWBCAST; /* a row-level value of this group over its rows */
        s.in[0] = xv;
        s.n_in = 1;
        return add_step(b, &s);
    }
    if (tt_host_numel(xt) == 1) {
        s.kind = S_SPLAT;
        return add_step(b, &s);
    }
    s.kind = S_BCAST;
    s.rank = bcast_layout(p, n, s.dims, s.str);
    return add_step(b, &s);
}

static int32_t operand_vid(gbuild *b, const tt_ir_node *n, int i) {
    tt_ir_value v = b->p->operands[n->inputs_offset + i];
    return b->vid_of[v] >= 0 ? b->vid_of[v] : external(b, v);
}

/* Appends member node n (row: at the group's row level); returns false on out of memory. */
static bool add_member(gbuild *b, const tt_ir_node *n, bool row) {
    const tt_ir_program *p = b->p;
    tt_ir_value ov = n->outputs[0];
    tt_dtype odt = p->types[ov].dtype;
    int32_t vid;
    fstep s;
    memset(&s, 0, sizeof s);
    s.op = n->op;
    s.out_dt = odt;
    s.row = row;
    b->row = false; /* a reduction's operand is element-level */
    if (n->op == TT_OP_REDUCE) {
        s.kind = S_REDUCE;
        s.red = n->attrs.reduce.kind;
        s.in_dt = tt_host_in_type(p, n, 0)->dtype;
        s.n_in = 1;
        s.in[0] = operand_vid(b, n, 0);
        vid = s.in[0] < 0 ? -1 : add_step(b, &s);
        if (vid >= 0) b->vid_of[ov] = vid;
        return vid >= 0;
    }
    b->row = row;
    if (n->op == TT_OP_RESHAPE || (n->op == TT_OP_BROADCAST_IN_DIM && broadcast_is_linear(p, n))) {
        vid = operand_vid(b, n, 0); /* same elements in the same order */
    } else if (n->op == TT_OP_BROADCAST_IN_DIM) {
        vid = broadcast_step(b, n);
    } else if (n->op == TT_OP_CONVERT) {
        int32_t x = operand_vid(b, n, 0);
        if (x < 0) return false;
        tt_dtype idt = tt_host_in_type(p, n, 0)->dtype;
        /* Same class into its native dtype changes no value (e.g. bf16 -> f32): share the buffer. */
        if (idt == odt || (tt_host_class_of(idt) == tt_host_class_of(odt) && native(odt))) {
            vid = x;
        } else {
            s.kind = S_CONVERT;
            s.in[0] = x;
            s.n_in = 1;
            s.in_dt = idt;
            vid = add_step(b, &s);
        }
    } else {
        s.kind = n->op == TT_OP_SELECT ? S_SELECT : S_EW;
        s.cmp = n->op == TT_OP_COMPARE ? n->attrs.compare.dir : TT_CMP_EQ;
        s.n_in = n->n_inputs;
        s.in_dt = tt_host_in_type(p, n, n->n_inputs - 1)->dtype;
        for (int i = 0; i < n->n_inputs; i++) {
            s.in[i] = operand_vid(b, n, i);
            if (s.in[i] < 0) return false;
        }
        vid = add_step(b, &s);
    }
    if (vid < 0) return false;
    b->vid_of[ov] = vid;
    return true;
}

/* ---- planning ---- */
static void group_free(fgroup *g) {
    free(g->steps);
    free(g->vids);
    free(g->outs);
    free(g->out_vid);
    free(g->aliases);
    free(g->alias_root);
}

void tt_host_fuse_free(tt_host_fusion *f) {
    if (!f) return;
    for (int32_t i = 0; i < f->n_groups; i++) group_free(&f->groups[i]);
    free(f->groups);
    free(f->group_of);
    free(f->internal);
    free(f->alias);
    free(f->written_at);
    free(f->read_until);
    free(f);
}

/* Finishes group gi from its members (nodes whose group_of is gi): steps, outputs, buffers. A group of one
 * member is dissolved (the plain kernel runs it). Returns false on out of memory. */
static bool close_group(tt_host_fusion *f, const tt_ir_program *p, int32_t gi, const int32_t *members,
                        int32_t n_members, const int32_t *uses_outside, int32_t *vid_of, const int8_t *row_level) {
    fgroup *g = &f->groups[gi];
    if (n_members < 2) {
        for (int32_t i = 0; i < n_members; i++) f->group_of[members[i]] = -1;
        f->n_groups--;
        return true;
    }
    gbuild b = {p, g, vid_of, 0, false};
    bool ok = true;
    for (int32_t i = 0; i < n_members && ok; i++) ok = add_member(&b, &p->nodes[members[i]], row_level[members[i]]);
    /* Outputs: member values read outside the group, stored right after the step that makes them. */
    g->outs = malloc((size_t)n_members * sizeof *g->outs);
    g->out_vid = malloc((size_t)n_members * sizeof *g->out_vid);
    int32_t *order = malloc((size_t)n_members * sizeof *order);
    ok = ok && g->outs && g->out_vid && order;
    g->aliases = malloc((size_t)n_members * sizeof *g->aliases);
    g->alias_root = malloc((size_t)n_members * sizeof *g->alias_root);
    ok = ok && g->aliases && g->alias_root;
    int32_t no = 0;
    for (int32_t i = 0; ok && i < n_members; i++) {
        tt_ir_value v = p->nodes[members[i]].outputs[0];
        if (uses_outside[v]) {
            g->outs[no] = v;
            g->out_vid[no] = vid_of[v];
            no++;
        } else {
            f->internal[v] = true;
        }
    }
    /* A reshape of a stored value (the activation and its [B*T, C] view a matmul reads) would be stored again,
     * the same bytes into other memory: an output that is not a program output shares the memory of another
     * with its vid and dtype instead (a program output keeps its own, as the results need it). */
    for (int32_t o = 0; ok && o < no; o++) {
        tt_ir_value v = g->outs[o];
        for (int32_t r = 0; r < no && uses_outside[v] == 1 && f->alias[v] < 0; r++)
            if (r != o && g->out_vid[r] == g->out_vid[o] && p->types[g->outs[r]].dtype == p->types[v].dtype &&
                (uses_outside[g->outs[r]] == 2 || (r < o && f->alias[g->outs[r]] < 0)))
                f->alias[v] = g->outs[r];
    }
    int32_t n_kept = 0;
    for (int32_t o = 0; ok && o < no; o++) {
        tt_ir_value v = g->outs[o];
        if (f->alias[v] >= 0) {
            g->aliases[g->n_aliases] = v;
            g->alias_root[g->n_aliases++] = f->alias[v];
            continue;
        }
        g->outs[n_kept] = v;
        g->out_vid[n_kept++] = g->out_vid[o];
    }
    no = n_kept;
    g->n_outs = no;
    if (ok) {
        /* Group outputs by the step that defines them (stable). */
        int32_t k = 0;
        for (int32_t s = 0; s < g->n_steps; s++) {
            g->steps[s].first_out = k;
            for (int32_t o = 0; o < no; o++)
                if (g->out_vid[o] == s) order[k++] = o;
            g->steps[s].n_out = k - g->steps[s].first_out;
        }
        tt_ir_value *tv = malloc((size_t)(no ? no : 1) * sizeof *tv);
        if (!tv) ok = false;
        else {
            for (int32_t o = 0; o < no; o++) tv[o] = g->outs[order[o]];
            for (int32_t o = 0; o < no; o++) {
                g->outs[o] = tv[o];
                g->out_vid[o] = vid_of[tv[o]];
            }
            free(tv);
        }
    }
    free(order);
    for (int32_t i = 0; i < n_members; i++) {
        const tt_ir_node *n = &p->nodes[members[i]];
        vid_of[n->outputs[0]] = -1;
        for (int32_t j = 0; j < n->n_inputs; j++) vid_of[p->operands[n->inputs_offset + j]] = -1;
    }
    if (!ok) return false;
    /* Direct pointers: native loads read in place; a step whose one output is native writes in place. */
    for (int32_t s = 0; s < g->n_steps; s++) {
        fstep *st = &g->steps[s];
        fvid *vd = &g->vids[s];
        for (int32_t i = 0; i < st->n_in; i++) g->vids[st->in[i]].last = s;
        if (st->kind == S_LOAD && native(st->in_dt)) vd->direct_in = true;
        if (st->kind != S_LOAD && st->kind != S_SPLAT && st->kind != S_BCAST && st->n_out == 1 &&
            p->types[g->outs[st->first_out]].dtype == st->out_dt && native(st->out_dt))
            vd->direct_out = g->outs[st->first_out];
    }
    /* Sites for in-place results: computing steps write their outputs (in place or stored right after); a
     * parameter is read at its load (into a tile buffer) or, loaded in place, until its last reader. */
    for (int32_t s = 0; s < g->n_steps; s++) {
        const fstep *st = &g->steps[s];
        int64_t site = (int64_t)gi << 32 | s;
        if (st->kind >= S_EW) /* computing steps */
            for (int32_t k = st->first_out; k < st->first_out + st->n_out; k++) f->written_at[g->outs[k]] = site;
        if (st->kind > S_BCAST || p->nodes[p->value_node[st->src]].op != TT_OP_PARAMETER) continue;
        if (st->kind != S_LOAD) f->read_until[st->src] = NEVER; /* read through index math: any element */
        else if (f->read_until[st->src] != NEVER)
            f->read_until[st->src] = (int64_t)gi << 32 | (g->vids[s].direct_in ? g->vids[s].last : s);
    }
    /* Tile buffers by liveness; an op may write over an operand that dies at it (in-place safe). A few splats
     * keep a buffer each, filled once per part; many (an optimizer window: scalars of every op of every
     * parameter) are refilled per tile like other values, or their buffers would take the cache. */
    int32_t n_splats = 0;
    for (int32_t s = 0; s < g->n_steps; s++) n_splats += g->steps[s].kind == S_SPLAT;
    g->splat_per_tile = n_splats > MAX_KEPT_SPLATS;
    int32_t *free_list = malloc((size_t)g->n_steps * sizeof *free_list);
    if (!free_list) return false;
    int32_t n_free = 0, n_bufs = 0;
    for (int32_t s = 0; s < g->n_steps; s++) {
        fstep *st = &g->steps[s];
        for (int32_t i = 0; i < st->n_in; i++) {
            fvid *iv = &g->vids[st->in[i]];
            bool dup = false;
            for (int32_t j = 0; j < i; j++) dup |= st->in[j] == st->in[i];
            bool kept = !g->splat_per_tile && g->steps[st->in[i]].kind == S_SPLAT;
            if (!dup && !kept && iv->last == s && iv->buf >= 0) free_list[n_free++] = iv->buf;
        }
        fvid *vd = &g->vids[s];
        if (vd->direct_in || vd->direct_out >= 0) continue;
        if (st->kind == S_SPLAT && !g->splat_per_tile) {
            vd->buf = n_bufs++; /* its own buffer, filled once per part */
            continue;
        }
        vd->buf = n_free ? free_list[--n_free] : n_bufs++;
        /* A value nobody reads (stored only) frees its buffer at once. */
        if (vd->last == s) free_list[n_free++] = vd->buf;
    }
    free(free_list);
    g->n_bufs = n_bufs;
    int nt = tt_host_num_threads();
    g->tile = g->row ? g->row * (TILE / g->row > 1 ? TILE / g->row : 1) : TILE;
    int64_t tiles = (g->n + g->tile - 1) / g->tile;
    int64_t parts = (int64_t)nt * 4 < MAX_PARTS ? (int64_t)nt * 4 : MAX_PARTS;
    g->max_parts = (int32_t)(tiles < parts ? tiles : parts);
    /* Per part: the buffers, a conversion temporary, the pointer table. */
    g->part_bytes = (size_t)(n_bufs + 1) * (size_t)g->tile * 8 + ((size_t)g->n_vids * sizeof(void *) + 63) / 64 * 64;
    return true;
}

/* The in-place sites of plain elementwise nodes (math the host kernels run index by index, operand and result of
 * one type), then every parameter's readers: all in one unit, and not a program output, or it keeps its memory. */
static void plan_plain_sites(tt_host_fusion *f, const tt_ir_program *p) {
    int64_t plain = f->n_groups;
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (f->group_of[k] >= 0 || !fusible(p, n) || n->op == TT_OP_RESHAPE || n->op == TT_OP_BROADCAST_IN_DIM ||
            n->op == TT_OP_CONVERT || n->op == TT_OP_SELECT)
            continue;
        int64_t site = (plain + k) << 32;
        f->written_at[n->outputs[0]] = site;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            tt_ir_value v = p->operands[n->inputs_offset + i];
            if (p->nodes[p->value_node[v]].op != TT_OP_PARAMETER || f->read_until[v] == NEVER) continue;
            f->read_until[v] = needs_external(p, n, i) ? NEVER : site;
        }
    }
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        int64_t u = f->group_of[k] >= 0 ? f->group_of[k] : plain + k;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            tt_ir_value v = p->operands[n->inputs_offset + i];
            if (f->read_until[v] >= 0 && (f->read_until[v] >> 32) != u) f->read_until[v] = NEVER;
        }
    }
    for (int32_t o = 0; o < p->n_outputs; o++)
        if (f->read_until[p->outputs[o]] != NO_SITE) f->read_until[p->outputs[o]] = NEVER;
}

bool tt_host_fuse_may_overwrite(const tt_host_fusion *f, const tt_ir_program *p, tt_ir_value out, tt_ir_value param) {
    if (!f || f->written_at[out] < 0 || f->read_until[param] < 0) return false;
    const tt_ir_type *a = &p->types[out], *b = &p->types[param];
    return (f->written_at[out] >> 32) == (f->read_until[param] >> 32) &&
           (f->read_until[param] & 0xffffffff) <= (f->written_at[out] & 0xffffffff) && a->dtype == b->dtype &&
           tt_host_numel(a) == tt_host_numel(b);
}

#define N_RECENT 4

static int32_t group_root(int32_t *parent, int32_t g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
}

/* The level at which node n (element count cnt; red: the row length it reduces over, or 0) can take operand i
 * from group g, where the operand is row-level (src_row) or not: 1 = row level, 0 = element level, -1 = it cannot.
 * A reduction takes an element-level value of rows of its length; a broadcast over rows takes a row-level one. */
static int join_level(const tt_ir_program *p, const fgroup *g, const tt_ir_node *n, int i, int64_t cnt, int64_t red,
                      bool src_row) {
    if (red)
        return !src_row && g->n == tt_host_numel(tt_host_in_type(p, n, 0)) && (!g->row || g->row == red) ? 1 : -1;
    if (src_row) {
        if (cnt == g->n && bcast_over_rows(p, n, g->row)) return 0;
        return cnt == g->n / g->row && !needs_external(p, n, i) ? 1 : -1;
    }
    return cnt == g->n && !needs_external(p, n, i) ? 0 : -1;
}

static bool rows_agree(const fgroup *a, const fgroup *b) {
    return a->n == b->n && (!a->row || !b->row || a->row == b->row);
}

tt_status tt_host_fuse_plan(const tt_ir_program *p, tt_host_fusion **out) {
    *out = NULL;
    int32_t nn = p->n_nodes, nv = p->n_values;
    tt_host_fusion *f = calloc(1, sizeof *f);
    int32_t *members = malloc(((size_t)nn + 1) * sizeof *members);
    int32_t *uses_outside = calloc((size_t)nv + 1, sizeof *uses_outside);
    int32_t *vid_of = malloc(((size_t)nv + 1) * sizeof *vid_of);
    int32_t *parent = malloc(((size_t)nn + 1) * sizeof *parent); /* planned groups: union-find of merges */
    bool *open = calloc((size_t)nn + 1, sizeof *open);
    int8_t *row_level = calloc((size_t)nn + 1, sizeof *row_level); /* per node: row-level in its group */
    if (!f || !members || !uses_outside || !vid_of || !parent || !open || !row_level) goto oom;
    f->groups = calloc((size_t)nn + 1, sizeof *f->groups);
    f->group_of = malloc(((size_t)nn + 1) * sizeof *f->group_of);
    f->internal = calloc((size_t)nv + 1, sizeof *f->internal);
    f->alias = malloc(((size_t)nv + 1) * sizeof *f->alias);
    f->written_at = malloc(((size_t)nv + 1) * sizeof *f->written_at);
    f->read_until = malloc(((size_t)nv + 1) * sizeof *f->read_until);
    if (!f->groups || !f->group_of || !f->internal || !f->alias || !f->written_at || !f->read_until) goto oom;
    for (int32_t v = 0; v < nv; v++) vid_of[v] = f->alias[v] = -1;
    for (int32_t v = 0; v < nv; v++) f->written_at[v] = f->read_until[v] = NO_SITE;
    /* TORCHTPU_HOST_FUSE=0 turns fusion off (read per compile: tests compare both paths). */
    const char *env = getenv("TORCHTPU_HOST_FUSE");
    bool enabled = !(env && env[0] == '0' && env[1] == 0);

    /* Pass 1: membership, with any number of groups open (operations issued op by op over many tensors, as
     * torch.optim's foreach steps issue them, interleave independent chains). A fusible node joins the open
     * groups of its operands that have its element count, merging them (their members then run together, at
     * this node); with none it opens a group of its own. A node that reads a value of an open group without
     * joining it (not fusible, another count, read through index math) closes that group: a group runs at its
     * last member, so it must run before any outside reader, and outside readers only come after it closes. */
    int32_t recent[N_RECENT]; /* groups joined last, latest first */
    for (int r = 0; r < N_RECENT; r++) recent[r] = -1;
    for (int32_t k = 0; k < nn; k++) {
        const tt_ir_node *n = &p->nodes[k];
        f->group_of[k] = -1;
        int64_t red = enabled ? reduce_row(p, n) : 0;
        bool fuse = enabled && (red || fusible(p, n));
        int64_t cnt = fuse ? tt_host_numel(&p->types[n->outputs[0]]) : 0;
        int64_t gn = red ? tt_host_numel(tt_host_in_type(p, n, 0)) : cnt; /* elements of a group it can join */
        int lvl = -1; /* its level in the groups it joins: that of the first one it can join */
        int32_t join = -1;
        for (int pass = 0; pass < 3; pass++) /* find the level, close what this node cannot join, join the rest */
            for (int32_t i = 0; i < n->n_inputs; i++) {
                int32_t src = p->value_node[p->operands[n->inputs_offset + i]];
                int32_t g = f->group_of[src] >= 0 ? group_root(parent, f->group_of[src]) : -1;
                if (g < 0 || !open[g]) continue;
                int l = fuse ? join_level(p, &f->groups[g], n, i, cnt, red, row_level[src]) : -1;
                if (pass == 0 && lvl < 0) lvl = l;
                bool joins = l >= 0 && l == lvl;
                if (pass == 1 && !joins) open[g] = false;
                if (pass < 2 || !joins) continue;
                if (join < 0) {
                    join = g;
                } else if (join != g && rows_agree(&f->groups[g], &f->groups[join])) {
                    parent[g] = join; /* merge */
                    if (f->groups[g].row) f->groups[join].row = f->groups[g].row;
                } else if (join != g) {
                    open[g] = false; /* rows of another length: runs before this node */
                }
            }
        if (!fuse) continue;
        /* A row-level node beside a group with rows (a constant broadcast to one value per row) joins it. */
        if (join < 0 && !red && recent[0] >= 0) {
            int32_t c = group_root(parent, recent[0]);
            const fgroup *cg = &f->groups[c];
            if (open[c] && cg->row && cg->n / cg->row > 1 && cnt == cg->n / cg->row) {
                join = c;
                lvl = 1;
            }
        }
        /* With no operand in an open group of its count, a node joins the group of its count joined last (of the
         * last few groups joined): independent updates of equal-sized tensors (an optimizer's, tensor after tensor,
         * a scalar's math between them) share one loop. */
        if (join < 0 && gn <= TILE && recent[0] >= 0) { /* a scalar's math beside a bigger group runs alone */
            int32_t c = group_root(parent, recent[0]);
            if (open[c] && f->groups[c].n > gn) continue;
        }
        for (int r = 0; join < 0 && r < N_RECENT; r++) {
            int32_t c = recent[r] >= 0 ? group_root(parent, recent[r]) : -1; /* merged since: its root */
            if (c >= 0 && open[c] && f->groups[c].n == gn && (!red || !f->groups[c].row || f->groups[c].row == red))
                join = c;
        }
        if (join < 0) {
            join = f->n_groups++;
            parent[join] = join;
            open[join] = true;
            f->groups[join].n = gn;
        }
        if (red) f->groups[join].row = red;
        row_level[k] = red ? 1 : lvl > 0;
        f->group_of[k] = join;
        f->groups[join].exec_node = k;
        int r = 0; /* move join to the front of recent */
        while (r < N_RECENT - 1 && recent[r] != join) r++;
        for (; r > 0; r--) recent[r] = recent[r - 1];
        recent[0] = join;
    }
    for (int32_t k = 0; k < nn; k++)
        if (f->group_of[k] >= 0) f->group_of[k] = group_root(parent, f->group_of[k]);
    /* Uses outside each value's group. */
    for (int32_t k = 0; k < nn; k++) {
        const tt_ir_node *n = &p->nodes[k];
        for (int32_t i = 0; i < n->n_inputs; i++) {
            tt_ir_value v = p->operands[n->inputs_offset + i];
            int32_t src = p->value_node[v];
            if (f->group_of[src] < 0 || f->group_of[src] != f->group_of[k]) uses_outside[v] = 1;
        }
    }
    for (int32_t o = 0; o < p->n_outputs; o++) uses_outside[p->outputs[o]] = 2; /* 2: a program output */
    /* Pass 2: build each group (dissolving single-member ones), renumbering the survivors. */
    int32_t n_planned = f->n_groups;
    f->n_groups = 0;
    /* members of each planned group, in node order: start[gi] .. start[gi + 1] (counting sort; parent reused) */
    int32_t *start = parent;
    for (int32_t gi = 0; gi <= n_planned; gi++) start[gi] = 0;
    for (int32_t k = 0; k < nn; k++)
        if (f->group_of[k] >= 0) start[f->group_of[k] + 1]++;
    for (int32_t gi = 0; gi < n_planned; gi++) start[gi + 1] += start[gi];
    for (int32_t k = 0; k < nn; k++)
        if (f->group_of[k] >= 0) members[start[f->group_of[k]]++] = k;
    for (int32_t gi = n_planned; gi > 0; gi--) start[gi] = start[gi - 1]; /* the fills moved each start to the next */
    start[0] = 0;
    for (int32_t gi = 0; gi < n_planned; gi++) {
        int32_t nm = start[gi + 1] - start[gi];
        const int32_t *gm = members + start[gi];
        int32_t slot = f->n_groups++;
        if (slot != gi) {
            f->groups[slot] = f->groups[gi];
            memset(&f->groups[gi], 0, sizeof f->groups[gi]);
        }
        for (int32_t i = 0; i < nm; i++) f->group_of[gm[i]] = slot;
        if (!close_group(f, p, slot, gm, nm, uses_outside, vid_of, row_level)) goto oom;
    }
    plan_plain_sites(f, p);
    free(members);
    free(uses_outside);
    free(vid_of);
    free(parent);
    free(open);
    free(row_level);
    *out = f;
    return TT_OK;
oom:
    free(members);
    free(uses_outside);
    free(vid_of);
    free(parent);
    free(open);
    free(row_level);
    tt_host_fuse_free(f);
    return tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory planning fusion");
}

int32_t tt_host_fuse_n_groups(const tt_host_fusion *f) { return f ? f->n_groups : 0; }
int32_t tt_host_fuse_group_of(const tt_host_fusion *f, int32_t node) { return f ? f->group_of[node] : -1; }
int32_t tt_host_fuse_exec_node(const tt_host_fusion *f, int32_t group) { return f->groups[group].exec_node; }
bool tt_host_fuse_internal(const tt_host_fusion *f, tt_ir_value v) { return f && f->internal[v]; }
tt_ir_value tt_host_fuse_alias(const tt_host_fusion *f, tt_ir_value v) { return f ? f->alias[v] : -1; }
void tt_host_fuse_bind_aliases(const tt_host_fusion *f, int32_t group, void **vals) {
    const fgroup *g = &f->groups[group];
    for (int32_t i = 0; i < g->n_aliases; i++) vals[g->aliases[i]] = vals[g->alias_root[i]];
}
size_t tt_host_fuse_scratch_bytes(const tt_host_fusion *f, int32_t group) {
    return (size_t)f->groups[group].max_parts * f->groups[group].part_bytes;
}

/* host_fuse_run.c — running a fused group (planned by host_fuse.c) tile by tile: steps over tile buffers, parts
 * over the thread pool. */
#include "host_fuse_internal.h"

#include <string.h>

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; the per-tile loops want the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

static void load_class(tt_host_class c, tt_dtype dt, const void *src, int64_t m, void *dst) {
    if (c == TT_HOST_CF32) tt_host_load_f32(dt, src, m, dst);
    else if (c == TT_HOST_CF64) tt_host_load_f64(dt, src, m, dst);
    else tt_host_load_i64(dt, src, m, dst);
}
static void store_class(tt_host_class c, tt_dtype dt, const void *src, int64_t m, void *dst) {
    if (c == TT_HOST_CF32) tt_host_store_f32(dt, src, m, dst);
    else if (c == TT_HOST_CF64) tt_host_store_f64(dt, src, m, dst);
    else tt_host_store_i64(dt, src, m, dst);
}
static void splat(tt_host_class c, const void *one, int64_t m, void *dst) {
    if (c == TT_HOST_CF32) {
        float v = *(const float *)one, *d = dst;
        for (int64_t i = 0; i < m; i++) d[i] = v;
    } else {
        uint64_t v;
        memcpy(&v, one, 8);
        uint64_t *d = dst;
        for (int64_t i = 0; i < m; i++) d[i] = v;
    }
}

TT_HOST_VEC_CLONES static void bcast_tile(const fstep *s, tt_host_class c, const char *src, int64_t off, int64_t m, char *dst) {
    size_t es = tt_dtype_size(s->in_dt), cs = class_size(c);
    int32_t r = s->rank;
    int64_t idx[TT_MAX_RANK], rem = off;
    for (int32_t d = r - 1; d >= 0; d--) {
        idx[d] = rem % s->dims[d];
        rem /= s->dims[d];
    }
    int64_t inner = s->dims[r - 1], istr = s->str[r - 1];
    for (int64_t i = 0; i < m;) {
        int64_t base = 0;
        for (int32_t d = 0; d < r; d++) base += idx[d] * s->str[d];
        int64_t run = inner - idx[r - 1] < m - i ? inner - idx[r - 1] : m - i;
        char *o = dst + (size_t)i * cs;
        if (istr == 0) {
            uint64_t one[1];
            load_class(c, s->in_dt, src + base * (int64_t)es, 1, one);
            splat(c, one, run, o);
        } else if (istr == 1) {
            load_class(c, s->in_dt, src + base * (int64_t)es, run, o);
        } else {
            for (int64_t j = 0; j < run; j++)
                load_class(c, s->in_dt, src + (base + j * istr) * (int64_t)es, 1, o + (size_t)j * cs);
        }
        i += run;
        idx[r - 1] += run;
        for (int32_t d = r - 1; d > 0 && idx[d] >= s->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

typedef struct fjob {
    const fgroup *g;
    const tt_ir_program *p;
    void *const *vals;
    char *scratch;
    int64_t per_part; /* elements per part, a multiple of the group's tile */
} fjob;

/* Each row of x (row values) reduced to one value of o: the unfused kernel's row reduction, so equal bits. */
static void reduce_rows(const fstep *st, tt_host_class c, const void *x, int64_t rows, int64_t row, void *o) {
    for (int64_t r = 0; r < rows; r++) {
        if (c == TT_HOST_CF32) ((float *)o)[r] = tt_host_reduce_row_f32(st->red, (const float *)x + r * row, row);
        else ((double *)o)[r] = tt_host_reduce_row_f64(st->red, (const double *)x + r * row, row);
    }
}

/* One tile: elements [off, off + m) of the group (whole rows in a group with rows); first: the part's first
 * (kept splat buffers are filled then). A row-level step works on the tile's rows [off / row, (off + m) / row). */
TT_HOST_VEC_CLONES static void run_tile(const fjob *j, char *part, int64_t off, int64_t m, bool first) {
    const fgroup *g = j->g;
    const tt_ir_program *p = j->p;
    size_t tb = (size_t)g->tile * 8; /* bytes per tile buffer */
    char *tmp = part + (size_t)g->n_bufs * tb;
    void **ptr = (void **)(void *)(tmp + tb);
    for (int32_t s = 0; s < g->n_steps; s++) {
        const fstep *st = &g->steps[s];
        const fvid *vd = &g->vids[s];
        tt_host_class c = vd->cls;
        int64_t so = st->row ? off / g->row : off, sm = st->row ? m / g->row : m; /* this step's index range */
        void *o;
        if (vd->direct_out >= 0)
            o = (char *)j->vals[vd->direct_out] + so * (int64_t)class_size(c);
        else if (vd->direct_in)
            o = (char *)j->vals[st->src] + so * (int64_t)tt_dtype_size(st->in_dt);
        else
            o = part + (size_t)vd->buf * tb;
        ptr[s] = o;
        const char *src = st->kind <= S_BCAST ? j->vals[st->src] : NULL;
        switch (st->kind) {
        case S_LOAD:
            if (!vd->direct_in) load_class(c, st->in_dt, src + so * (int64_t)tt_dtype_size(st->in_dt), sm, o);
            break;
        case S_SPLAT: /* m values whatever its level: an external scalar's splat serves readers at both */
            if (g->splat_per_tile || first) {
                uint64_t one[1];
                load_class(c, st->in_dt, src, 1, one);
                splat(c, one, g->splat_per_tile ? m : g->tile, o);
            }
            break;
        case S_BCAST: bcast_tile(st, c, src, so, sm, o); break;
        case S_EW: {
            tt_host_class ic = g->vids[st->in[0]].cls;
            const void *a = ptr[st->in[0]], *b = st->n_in > 1 ? ptr[st->in[1]] : NULL;
            const void *cc = st->n_in > 2 ? ptr[st->in[2]] : NULL;
            if (st->op == TT_OP_COMPARE || st->op == TT_OP_IS_FINITE) {
                uint8_t *u = (uint8_t *)tmp;
                int64_t *oi = o;
                tt_host_ew_compare(ic, st->op, st->cmp, a, b, u, sm);
                for (int64_t i = sm - 1; i >= 0; i--) oi[i] = u[i];
                break;
            }
            tt_host_ew_math(ic, st->op, st->in_dt, a, b, cc, o, sm);
            if (!native(st->out_dt)) {
                store_class(c, st->out_dt, o, sm, tmp);
                load_class(c, st->out_dt, tmp, sm, o);
            }
        } break;
        case S_CONVERT:
            store_class(g->vids[st->in[0]].cls, st->out_dt, ptr[st->in[0]], sm, tmp);
            load_class(c, st->out_dt, tmp, sm, o);
            break;
        case S_SELECT: {
            const int64_t *pr = ptr[st->in[0]];
            if (c == TT_HOST_CF32) {
                const float *t = ptr[st->in[1]], *f = ptr[st->in[2]];
                float *d = o;
                for (int64_t i = 0; i < sm; i++) d[i] = pr[i] ? t[i] : f[i];
            } else {
                const uint64_t *t = ptr[st->in[1]], *f = ptr[st->in[2]];
                uint64_t *d = o;
                for (int64_t i = 0; i < sm; i++) d[i] = pr[i] ? t[i] : f[i];
            }
        } break;
        case S_REDUCE:
            reduce_rows(st, c, ptr[st->in[0]], sm, g->row, o);
            if (!native(st->out_dt)) { /* rounded to the result's dtype, as the unfused kernel stores it */
                store_class(c, st->out_dt, o, sm, tmp);
                load_class(c, st->out_dt, tmp, sm, o);
            }
            break;
        case S_ROWBCAST: {
            const char *x = ptr[st->in[0]];
            size_t cs = class_size(c);
            /* last row first: o may be x's buffer (x dies here), and row r's values start at or after x[r] */
            for (int64_t r = m / g->row - 1; r >= 0; r--) {
                uint64_t one[1];
                memcpy(one, x + (size_t)r * cs, cs);
                splat(c, one, g->row, (char *)o + (size_t)(r * g->row) * cs);
            }
        } break;
        }
        for (int32_t k = st->first_out; k < st->first_out + st->n_out; k++) {
            if (vd->direct_out >= 0) continue;
            tt_ir_value v = g->outs[k];
            tt_dtype dt = p->types[v].dtype;
            store_class(c, dt, o, sm, (char *)j->vals[v] + so * (int64_t)tt_dtype_size(dt));
        }
    }
}

static void run_parts(void *user, int64_t begin, int64_t end) {
    const fjob *j = user;
    int64_t tile = j->g->tile;
    for (int64_t part = begin; part < end; part++) {
        char *scr = j->scratch + (size_t)part * j->g->part_bytes;
        int64_t lo = part * j->per_part, hi = lo + j->per_part < j->g->n ? lo + j->per_part : j->g->n;
        for (int64_t off = lo; off < hi; off += tile) run_tile(j, scr, off, hi - off < tile ? hi - off : tile, off == lo);
    }
}

tt_status tt_host_fuse_run(const tt_host_fusion *f, int32_t group, const tt_ir_program *p, void *const *vals,
                           void *scratch) {
    const fgroup *g = &f->groups[group];
    int64_t tiles = (g->n + g->tile - 1) / g->tile;
    /* Small groups run inline in one part; big ones over up to max_parts parts. Big counts the steps too: an
     * optimizer's window is one group of hundreds of steps over a few thousand elements. */
    int64_t parts = g->n * (g->n_steps < 8 ? 1 : g->n_steps / 8) < TT_HOST_GRAIN ? 1 : g->max_parts;
    int64_t per_tiles = (tiles + parts - 1) / parts;
    fjob j = {g, p, vals, scratch, per_tiles * g->tile};
    parts = (tiles + per_tiles - 1) / per_tiles;
    if (parts > 1) tt_host_parallel_for(parts, 1, run_parts, &j);
    else run_parts(&j, 0, 1);
    return TT_OK;
}

/* bucket_launch.c — bounded dynamic sizes in fused eager mode: marks on storages, and windows run as their
 * bucket's program.
 *
 * torchtpu.mark_dynamic(t, dim, max=) marks t's storage: dim `dim` of its contiguous shape is a size that varies,
 * padded to a bucket. A window that reads a marked storage whole is rewritten by tt_ir_bucket (csrc/ir/bucket.c)
 * for the bucket: marked inputs are copied into padded buffers (a queued row copy, no program), the real size is
 * one more scalar argument, and results that carry the size are written padded and cut back the same way. Every
 * size of a bucket gives the same program, so the compile cache compiles it once; the window's own trace still
 * differs per size (it is cached per size, and cheap). A result that carries the size is marked in turn, so the next
 * window (a size cap's cut, a later call) is bucketed too. A window the pass cannot rewrite exactly runs as it is,
 * one program per size, and TORCHTPU_LOG=fusion says why. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tt_rt_mark {
    int32_t rank;
    int64_t dims[TT_MAX_RANK]; /* the storage as a contiguous tensor */
    tt_ir_bucket_pad pad;      /* where it carries the size (one dim) */
    int64_t size, bucket;
};

struct tt_rt_bucket_plan {
    tt_ir_program *program; /* the bucket's */
    int64_t size, bucket;
    int32_t n_params, n_out;
    tt_ir_bucket_pad *pads; /* per parameter of the window's program, then per output */
    bool *extend;           /* per parameter: padded by reading a longer view of its storage in place, no copy */
    int32_t n_guards;       /* scalar arguments the rewrite relied on: it holds while they keep these values */
    int32_t *guard_arg;
    int64_t *guard_value;
};

/* The first dim that carries the size; -1 if none. */
static int32_t padded_dim(const tt_ir_bucket_pad *q, int32_t rank) {
    for (int32_t i = 0; i < rank; i++)
        if (q->inner[i]) return i;
    return -1;
}

/* How many dims carry the size. */
static int32_t n_padded(const tt_ir_bucket_pad *q, int32_t rank) {
    int32_t n = 0;
    for (int32_t i = 0; i < rank; i++) n += q->inner[i] != 0;
    return n;
}

/* Whether a contiguous value of dims t with padding q can be copied to and from its padded twin by row copies: one
 * padded dim, or two adjacent dims that are the size itself (attention's [B, H, s, s]). */
static bool copyable(int32_t rank, const int64_t *dims, const tt_ir_bucket_pad *q, int64_t s) {
    int32_t d = padded_dim(q, rank), n = n_padded(q, rank);
    if (n <= 1) return true;
    return n == 2 && d + 1 < rank && q->inner[d] == 1 && q->inner[d + 1] == 1 && dims[d] == s && dims[d + 1] == s;
}

/* Marks change under this lock and are read as copies (a user thread may mark a storage a window is reading). */
static pthread_mutex_t mark_mu = PTHREAD_MUTEX_INITIALIZER;

static void mark_set(tt_rt_storage *s, tt_rt_mark *m) {
    if (!m && !atomic_load_explicit(&s->mark, memory_order_relaxed)) return; /* the common release: no lock */
    pthread_mutex_lock(&mark_mu);
    tt_rt_mark *old = atomic_exchange(&s->mark, m);
    pthread_mutex_unlock(&mark_mu);
    free(old);
}

/* A copy of s's mark; false if it has none. */
static bool mark_get(const tt_rt_storage *s, tt_rt_mark *out) {
    if (!atomic_load_explicit(&((tt_rt_storage *)s)->mark, memory_order_relaxed)) return false;
    pthread_mutex_lock(&mark_mu);
    const tt_rt_mark *m = atomic_load_explicit(&((tt_rt_storage *)s)->mark, memory_order_relaxed);
    if (m) *out = *m;
    pthread_mutex_unlock(&mark_mu);
    return m != NULL;
}

void tt_rt_mark_free(tt_rt_storage *s) { mark_set(s, NULL); }

static bool is_contiguous(const tt_rt_tensor *t) {
    int64_t stride = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != stride) return false;
        stride *= t->dims[d];
    }
    return true;
}

tt_status tt_rt_mark_dynamic(tt_rt_storage *s, int32_t rank, const int64_t *dims, int32_t dim, int64_t bucket) {
    if (!s) return tt_error(TT_STATUS_INVALID_ARGUMENT, "mark_dynamic: no storage");
    if (bucket == 0) {
        mark_set(s, NULL);
        return TT_OK;
    }
    if (rank < 1 || rank > TT_MAX_RANK || dim < 0 || dim >= rank)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "mark_dynamic: dim %d of a %d-d tensor", (int)dim, (int)rank);
    if (dims[dim] < 2 || bucket < dims[dim])
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "mark_dynamic: a size of %lld cannot be padded to %lld (sizes 0 and 1 are not dynamic; the "
                        "bound must hold the size)", (long long)dims[dim], (long long)bucket);
    /* a storage the open window writes (made on the device just now) becomes its input: the mark then seeds it */
    if (atomic_load(&s->wslot) >= 0) {
        tt_status st = tt_rt_window_cut(s->device, TT_RT_CUT_FLUSH);
        if (st != TT_OK) return st;
    }
    tt_rt_mark *m = calloc(1, sizeof *m);
    if (!m) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a dynamic mark");
    m->rank = rank;
    memcpy(m->dims, dims, sizeof *dims * (size_t)rank);
    m->pad.inner[dim] = 1;
    m->size = dims[dim];
    m->bucket = bucket;
    mark_set(s, m);
    return TT_OK;
}

int64_t tt_rt_storage_bucket(const tt_rt_storage *s, int64_t *size) {
    tt_rt_mark m;
    bool has = mark_get(s, &m);
    if (size) *size = has ? m.size : 0;
    return has ? m.bucket : 0;
}

uint64_t tt_rt_mark_word(const tt_rt_storage *s) {
    tt_rt_mark m;
    if (!mark_get(s, &m)) return 0;
    uint64_t h = (uint64_t)m.size * 0x9E3779B97F4A7C15ull ^ (uint64_t)m.bucket << 1;
    for (int32_t d = 0; d < m.rank; d++)
        h = (h ^ (uint64_t)m.dims[d] ^ (uint64_t)m.pad.inner[d] << 40) * 0xff51afd7ed558ccdull;
    return h | 1;
}

/* Where a whole, contiguous view of a marked storage carries its size; false if it does not. */
static bool view_pad(const tt_rt_mark *m, const tt_rt_tensor *t, tt_ir_bucket_pad *q) {
    if (t->offset != 0 || tt_numel(t->rank, t->dims) != tt_numel(m->rank, m->dims) ||
        tt_numel(t->rank, t->dims) * (int64_t)tt_dtype_size(t->dtype) != (int64_t)t->storage->nbytes ||
        !is_contiguous(t))
        return false;
    return tt_ir_bucket_reshape(m->size, m->rank, m->dims, &m->pad, t->rank, t->dims, q) &&
           padded_dim(q, t->rank) >= 0;
}

/* Whether a view read in place stays inside its storage with its padded dims (each the size itself) grown to S: a
 * buffer's prefix (a causal mask's [:, :, :s, :s]) is then passed padded as a longer view, nothing copied. */
static bool can_extend(const tt_rt_tensor *t, const tt_ir_bucket_pad *q, int64_t s, int64_t S) {
    if (!tt_rt_g.driver_strided) return false;
    int64_t last = t->offset;
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t n = t->dims[d];
        if (q->inner[d]) {
            if (q->inner[d] != 1 || n != s) return false;
            n = S;
        }
        if (t->strides[d] < 0) return false;
        last += (n - 1) * t->strides[d];
    }
    return (last + 1) * (int64_t)tt_dtype_size(t->dtype) <= (int64_t)t->storage->nbytes;
}

/* Whether an unmarked input the rewrite found carrying the size (an attention mask made by a window that ran per
 * size, a buffer's prefix) can be passed padded: a longer view in place, or a contiguous view copied. */
static bool can_pad_input(const tt_rt_arg *a, const tt_ir_bucket_pad *q, int64_t s, int64_t S, bool *extend) {
    if (a->kind != TT_RT_ARG_TENSOR) return false;
    const tt_rt_tensor *t = &a->tensor;
    if ((*extend = can_extend(t, q, s, S))) return true;
    return is_contiguous(t) && copyable(t->rank, t->dims, q, s);
}

void tt_rt_bucket_plan_free(tt_rt_bucket_plan *plan) {
    if (!plan) return;
    tt_ir_program_destroy(plan->program);
    free(plan->pads);
    free(plan->extend);
    free(plan->guard_arg);
    free(plan->guard_value);
    free(plan);
}

tt_ir_program *tt_rt_bucket_plan_program(const tt_rt_bucket_plan *plan) { return plan->program; }

bool tt_rt_bucket_plan_holds(const tt_rt_bucket_plan *plan, const tt_rt_arg *args, int32_t n_args) {
    for (int32_t g = 0; g < plan->n_guards; g++)
        if (plan->guard_arg[g] >= n_args || args[plan->guard_arg[g]].i != plan->guard_value[g]) return false;
    return true;
}

tt_rt_bucket_plan *tt_rt_bucket_plan_new(tt_ir_program *p, const tt_rt_arg *args, int32_t n_args, char *why,
                                         size_t why_size) {
    why[0] = 0;
    tt_rt_mark first, m;
    bool marked = false;
    for (int32_t i = 0; i < n_args && !marked; i++)
        marked = args[i].kind == TT_RT_ARG_TENSOR && mark_get(args[i].tensor.storage, &first);
    if (!marked || n_args != p->n_params) return NULL;
    tt_rt_bucket_plan *plan = calloc(1, sizeof *plan);
    tt_ir_bucket_pad *pads = calloc((size_t)(p->n_params + p->n_outputs), sizeof *pads);
    bool *extend = calloc((size_t)p->n_params + 1, sizeof *extend);
    if (!plan || !pads || !extend) {
        free(plan);
        free(pads);
        free(extend);
        snprintf(why, why_size, "out of host memory");
        return NULL;
    }
    plan->pads = pads;
    plan->extend = extend;
    plan->size = first.size;
    plan->bucket = first.bucket;
    plan->n_params = p->n_params;
    plan->n_out = p->n_outputs;
    for (int32_t i = 0; i < n_args; i++) {
        if (args[i].kind != TT_RT_ARG_TENSOR) continue;
        /* one size per window: marks of another size or bucket stay unpadded (their dims then refuse the pass) */
        if (mark_get(args[i].tensor.storage, &m) && m.size == plan->size && m.bucket == plan->bucket &&
            !view_pad(&m, &args[i].tensor, &pads[i]))
            memset(&pads[i], 0, sizeof pads[i]);
    }
    tt_ir_bucket_pad *outs = pads + p->n_params;
    tt_ir_bucket_want want;
    tt_ir_bucket_scalar *scalars = calloc((size_t)n_args, sizeof *scalars);
    tt_status st = scalars ? TT_OK : tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int32_t i = 0; scalars && i < n_args; i++)
        if (args[i].kind == TT_RT_ARG_SCALAR && tt_dtype_is_int(p->types[p->params[i]].dtype) && !args[i].rng)
            scalars[i] = (tt_ir_bucket_scalar){.known = true, .value = args[i].i};
    /* inputs the rewrite asks for are padded too when they can be, one at a time */
    for (int32_t tries = 0; scalars; tries++) {
        st = tt_ir_bucket_ex(p, plan->size, plan->bucket, pads, &plan->program, outs, &want, scalars);
        if (st != TT_STATUS_UNSUPPORTED || want.param < 0 || tries >= n_args ||
            !can_pad_input(&args[want.param], &want.pad, plan->size, plan->bucket, &extend[want.param]))
            break;
        pads[want.param] = want.pad;
    }
    for (int32_t o = 0; st == TT_OK && o < p->n_outputs; o++) {
        const tt_ir_type *t = &p->types[p->outputs[o]];
        if (!copyable(t->rank, t->dims, &outs[o], plan->size))
            st = tt_error(TT_STATUS_UNSUPPORTED, "bucket: result %d carries the size in dims a row copy cannot cut",
                          (int)o);
    }
    for (int32_t i = 0; st == TT_OK && i < n_args; i++) {
        if (!scalars[i].used) continue;
        int32_t *ga = realloc(plan->guard_arg, sizeof *ga * (size_t)(plan->n_guards + 1));
        if (ga) plan->guard_arg = ga;
        int64_t *gv = ga ? realloc(plan->guard_value, sizeof *gv * (size_t)(plan->n_guards + 1)) : NULL;
        if (gv) plan->guard_value = gv;
        if (!ga || !gv) {
            st = tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        plan->guard_arg[plan->n_guards] = i;
        plan->guard_value[plan->n_guards++] = scalars[i].value;
    }
    free(scalars);
    if (st != TT_OK) {
        snprintf(why, why_size, "%s", tt_last_error());
        tt_rt_bucket_plan_free(plan);
        atomic_fetch_add(&tt_rt_g.bucket_refused, 1);
        return NULL;
    }
    return plan;
}

/* Queues the copy between a contiguous real value t (at element offset off of storage real) and its padded twin
 * (storage padded, offset 0): into the twin (to_padded) or back. */
static tt_status copy_padded(const tt_rt_tensor *t, const tt_ir_bucket_pad *q, int64_t s, int64_t S,
                             tt_rt_storage *padded, bool to_padded) {
    int32_t d = padded_dim(q, t->rank), n = n_padded(q, t->rank);
    size_t es = tt_dtype_size(t->dtype), off = (size_t)t->offset * es;
    int64_t before = 1, after = 1;
    for (int32_t i = 0; i < d; i++) before *= t->dims[i];
    for (int32_t i = d + n; i < t->rank; i++) after *= t->dims[i];
    /* blocks (the outer index), each `rows` rows of `real` elements: real rows are dense, padded ones S apart */
    int64_t k = q->inner[d], blocks = 1, rows = before * (t->dims[d] / (s * k)), real = s * k * after,
            padded_row = S * k * after, block_real = 0, block_padded = 0;
    if (n == 2) { /* [.., s, s, ..]: per outer index, s rows of s * after */
        blocks = before;
        rows = s;
        real = s * after;
        padded_row = S * after;
        block_real = s * s * after;
        block_padded = S * S * after;
    }
    tt_status st = TT_OK;
    for (int64_t b = 0; st == TT_OK && b < blocks; b++) {
        size_t ro = off + (size_t)(b * block_real) * es, po = (size_t)(b * block_padded) * es;
        st = to_padded ? tt_rt_copy_rows_enqueue(padded, po, (size_t)padded_row * es, t->storage, ro, (size_t)real * es,
                                                 (size_t)real * es, (size_t)rows)
                       : tt_rt_copy_rows_enqueue(t->storage, ro, (size_t)real * es, padded, po, (size_t)padded_row * es,
                                                 (size_t)real * es, (size_t)rows);
    }
    return st;
}

/* t's padded twin: a new contiguous storage of the padded dims. */
static tt_status padded_twin(int device, const tt_rt_tensor *t, const tt_ir_bucket_pad *q, int64_t s, int64_t S,
                             tt_rt_tensor *out) {
    *out = *t;
    out->offset = 0;
    int64_t stride = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (q->inner[d]) out->dims[d] = t->dims[d] / s * S;
        out->strides[d] = stride;
        stride *= out->dims[d];
    }
    return tt_rt_storage_create(device, (size_t)stride * tt_dtype_size(t->dtype), &out->storage);
}

tt_status tt_rt_bucket_launch(int device, const tt_rt_bucket_plan *plan, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *name,
                              const tt_rt_origins *origins) {
    int64_t s = plan->size, S = plan->bucket;
    tt_rt_arg *a = calloc((size_t)n_args + 1, sizeof *a);
    tt_rt_tensor *r = calloc((size_t)(n_results ? n_results : 1), sizeof *r);
    tt_status st = a && r ? TT_OK : tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a bucketed window");
    for (int32_t i = 0; st == TT_OK && i < n_args; i++) {
        a[i] = args[i];
        const tt_ir_bucket_pad *q = &plan->pads[i];
        if (args[i].kind != TT_RT_ARG_TENSOR || padded_dim(q, args[i].tensor.rank) < 0) continue;
        const tt_rt_tensor *t = &args[i].tensor;
        if (plan->extend[i]) { /* a longer view of the same storage */
            for (int32_t d = 0; d < t->rank; d++)
                if (q->inner[d]) a[i].tensor.dims[d] = S;
            continue;
        }
        if ((st = padded_twin(device, t, q, s, S, &a[i].tensor)) != TT_OK) break;
        st = copy_padded(t, q, s, S, a[i].tensor.storage, true);
    }
    if (st == TT_OK) a[n_args] = (tt_rt_arg){.kind = TT_RT_ARG_SCALAR, .i = s, .f = (double)s};
    const tt_ir_bucket_pad *outs = plan->pads + plan->n_params;
    for (int32_t o = 0; st == TT_OK && o < n_results; o++) {
        r[o] = results[o];
        if (padded_dim(&outs[o], results[o].rank) >= 0) st = padded_twin(device, &results[o], &outs[o], s, S, &r[o]);
    }
    if (st == TT_OK) st = tt_rt_launch_queued(device, plan->program, a, n_args + 1, r, n_results, name, origins);
    for (int32_t o = 0; st == TT_OK && o < n_results; o++) {
        const tt_rt_tensor *t = &results[o];
        if (padded_dim(&outs[o], t->rank) < 0) continue;
        st = copy_padded(t, &outs[o], s, S, r[o].storage, false);
        /* the result carries the size: windows that read it are bucketed too (one dim: where a mark can say) */
        tt_rt_mark *m = st == TT_OK && n_padded(&outs[o], t->rank) == 1 ? calloc(1, sizeof *m) : NULL;
        if (m) {
            *m = (tt_rt_mark){.rank = t->rank, .pad = outs[o], .size = s, .bucket = S};
            memcpy(m->dims, t->dims, sizeof *t->dims * (size_t)t->rank);
            mark_set(t->storage, m);
        }
    }
    for (int32_t i = 0; a && i < n_args; i++)
        if (a[i].kind == TT_RT_ARG_TENSOR && a[i].tensor.storage != args[i].tensor.storage)
            tt_rt_storage_release(a[i].tensor.storage);
    for (int32_t o = 0; r && o < n_results; o++)
        if (r[o].storage && r[o].storage != results[o].storage) tt_rt_storage_release(r[o].storage);
    free(a);
    free(r);
    if (st == TT_OK) atomic_fetch_add(&tt_rt_g.bucket_windows, 1);
    return st;
}

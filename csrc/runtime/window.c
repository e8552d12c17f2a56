/* window.c — the fused eager mode: ops recorded into one window per device, cut into one program.
 *
 * Recording appends an op's program to the window's builder (tt_ir_builder_inline). Each storage the window
 * touches has a slot (retained): its contents as a flat [n] value once the window has written it or needed it
 * whole, else read in place through parameter views (when the driver can). Reading a view of a slot's value and
 * writing a view into it are IR view ops (csrc/ir/view.c), so `x[:, 1:].t() + 1` on a pending x stays in the
 * window. At a cut, every written slot whose storage something else still references (a tensor, a queued op)
 * becomes a result of the program, written whole into its buffer (given one now if pending); the rest are
 * dropped and DCE removes the work only they needed. The program goes through the compile cache and is queued on
 * the device's stream like a STRICT launch, so the caller never waits for it.
 *
 * The slots' bookkeeping, shared by recording and by building the program at a trace miss, is in wslots.c.
 *
 * One mutex per window: ops from Python threads and autograd's worker thread append to the same window in the
 * order they arrive. A cut holds the lock while it queues (queueing never waits on the window). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *(*where_hook)(char *buf, size_t size);
void tt_rt_set_where_hook(const char *(*where)(char *buf, size_t size)) { where_hook = where; }

static const char *const cut_names[TT_RT_CUT_COUNT] = {
    [TT_RT_CUT_READ] = "read",           [TT_RT_CUT_SYNC] = "synchronize",  [TT_RT_CUT_HOST_WRITE] = "host write",
    [TT_RT_CUT_COPY] = "device copy",    [TT_RT_CUT_OTHER_MODE] = "other mode", [TT_RT_CUT_VIEW] = "view",
    [TT_RT_CUT_SIZE] = "size cap",       [TT_RT_CUT_FLUSH] = "flush",       [TT_RT_CUT_FALLBACK] = "fallback",
    [TT_RT_CUT_EAGER] = "eager op",      [TT_RT_CUT_GRAPH] = "graph",
};

const char *tt_rt_cut_reason_name(tt_rt_cut_reason r) {
    return (unsigned)r < TT_RT_CUT_COUNT ? cut_names[r] : "?";
}

tt_status tt_rt_window_init(tt_rt_window *w) {
    memset(w, 0, sizeof *w);
    if (pthread_mutex_init(&w->mu, NULL)) return tt_error(TT_STATUS_INTERNAL, "could not create a window lock");
    if (!(w->b = tt_ir_builder_create())) {
        pthread_mutex_destroy(&w->mu);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a fusion window");
    }
    atomic_init(&w->n_ops, 0);
    w->ready = true;
    return TT_OK;
}

/* Empties the window (lock held): slots released, op records and builder reset. */
static void window_clear(tt_rt_window *w) {
    for (int32_t i = 0; i < w->n_slots; i++) {
        atomic_store(&w->slots[i].s->wslot, -1);
        tt_rt_storage_release(w->slots[i].s);
    }
    int32_t n_ops = atomic_load(&w->n_ops);
    for (int32_t k = 0; k < n_ops; k++) tt_ir_program_destroy(w->ops[k].p);
    w->n_slots = w->n_args = w->n_views = w->n_op_args = w->n_op_res = w->n_trace = 0;
    atomic_store_explicit(&w->n_ops, 0, memory_order_release);
    w->first_op[0] = 0;
    w->last_where[0] = 0;
    w->call_ops = w->call_chained = 0;
    w->origins_len = 0;
    tt_ir_builder_reset(w->b);
}

void tt_rt_window_fini(tt_rt_window *w) {
    if (!w->ready) return;
    window_clear(w);
    tt_ir_builder_destroy(w->b);
    free(w->args);
    free(w->slots);
    free(w->views);
    free(w->origins);
    free(w->ops);
    free(w->op_args);
    free(w->op_res);
    free(w->trace);
    free(w->out_slots);
    pthread_mutex_destroy(&w->mu);
    memset(w, 0, sizeof *w);
}


void tt_rt_set_op_lines(bool on) { tt_rt_g.op_lines = on; }
bool tt_rt_get_op_lines(void) { return tt_rt_g.op_lines; }

void tt_rt_where(char *buf, size_t size) {
    buf[0] = 0;
    const char *at = where_hook ? where_hook(buf, size) : NULL;
    if (!at) buf[0] = 0;
}

/* Where the user's code is now, for the log (called without the window's lock: the hook may take the GIL). */
static void where_now(char *buf, size_t size) {
    tt_rt_where(buf, size);
    if (!buf[0]) snprintf(buf, size, "?");
}

/* Appends the op and its line to the window's origins (lock held). */
static bool add_origin(tt_rt_window *w, const char *op, const char *where) {
    size_t lo = strlen(op) + 1, lw = strlen(where) + 1, need = lo + lw;
    if (w->origins_len + need > w->cap_origins) {
        size_t cap = w->cap_origins ? w->cap_origins * 2 : 4096;
        while (cap < w->origins_len + need) cap *= 2;
        char *q = realloc(w->origins, cap);
        if (!q) return false;
        w->origins = q;
        w->cap_origins = cap;
    }
    memcpy(w->origins + w->origins_len, op, lo);
    memcpy(w->origins + w->origins_len + lo, where, lw);
    w->origins_len += need;
    return true;
}

static void log_cut(int device, tt_rt_window *w, tt_rt_cut_reason reason, int32_t n_out, int32_t dropped,
                    const char *outcome, const char *at) {
    fprintf(stderr, "torchtpu fusion: tpu:%d cut (%s) at %s: %d ops from %s%s%s, %d results, %d dropped; %s\n",
            device, tt_rt_cut_reason_name(reason), at && at[0] ? at : "?", (int)atomic_load(&w->n_ops), w->first_op,
            w->graph[0] ? " in graph " : "", w->graph, (int)n_out, (int)dropped, outcome);
}

/* The window's program and the slots it writes as outputs: the cached trace's (replayed), or built now and cached.
 * mask: the written slots something still references. *plan: how to run it as its bucket's program, or NULL;
 * *own_plan: a plan the trace cache did not take (the caller frees it). */
static tt_status window_program(int device, tt_rt_window *w, const uint64_t *mask, int32_t n_mask,
                                tt_rt_wtrace **trace, tt_ir_program **built, const int32_t **out_slots,
                                int32_t *n_out, const tt_rt_bucket_plan **plan, tt_rt_bucket_plan **own_plan) {
    uint64_t hash;
    if ((*trace = tt_rt_wtrace_find(w, mask, n_mask, &hash))) {
        atomic_fetch_add(&tt_rt_g.window_replays, 1);
        *n_out = tt_rt_wtrace_outputs(*trace, out_slots);
        *plan = tt_rt_wtrace_plan(*trace);
        if (*plan && !tt_rt_bucket_plan_holds(*plan, w->args, w->n_args)) *plan = NULL; /* runs per size */
        return TT_OK;
    }
    tt_status st = tt_rt_window_build(w);
    if (st == TT_OK && !tt_rt_grow((void **)&w->out_slots, &w->cap_out_slots, w->n_slots, sizeof *w->out_slots))
        st = tt_rt_oom("a window's outputs");
    int32_t n = 0;
    for (int32_t i = 0; st == TT_OK && i < w->n_slots; i++) {
        if (!(mask[i / 64] >> (i % 64) & 1)) continue;
        /* written whole in the value's own shape (not as [n]): keeps the program's rows for the host row plan */
        tt_ir_builder_add_output(w->b, tt_ir_reshape_source(w->b, w->slots[i].flat));
        w->out_slots[n++] = i;
    }
    if (st == TT_OK) st = tt_ir_builder_finish(w->b, built);
    if (st == TT_OK) {
        char why[TT_RT_MSG_SIZE];
        *plan = *own_plan = tt_rt_bucket_plan_new(*built, w->args, w->n_args, why, sizeof why);
        if (why[0] && tt_rt_g.log_fusion)
            fprintf(stderr, "torchtpu fusion: tpu:%d a window of %d ops from %s runs per size, not padded: %s\n",
                    device, (int)atomic_load(&w->n_ops), w->first_op, why);
    }
    /* not cached when out of memory: the window still runs */
    if (st == TT_OK) *trace = tt_rt_wtrace_insert(w, mask, n_mask, hash, *built, w->out_slots, n, *own_plan);
    if (*trace) *own_plan = NULL;
    *out_slots = w->out_slots;
    *n_out = n;
    return st;
}

/* Cuts the window (lock held). Whatever happens, the window is empty afterwards. */
static tt_status cut_locked(int device, tt_rt_window *w, tt_rt_cut_reason reason, const char *where) {
    int32_t n_ops = atomic_load(&w->n_ops);
    if (n_ops == 0) {
        window_clear(w);
        return TT_OK;
    }
    tt_status st = TT_OK;
    /* the results: written slots that someone besides the window still references (a tensor, a queued op) */
    int32_t n_mask = (w->n_slots + 63) / 64, n_keep = 0, dropped = 0;
    uint64_t stack_mask[8] = {0}, *mask = stack_mask;
    if (n_mask > 8 && !(mask = calloc((size_t)n_mask, sizeof *mask))) st = tt_rt_oom("a window's cut");
    for (int32_t i = 0; st == TT_OK && i < w->n_slots; i++) {
        if (!w->slots[i].written) continue;
        if (atomic_load_explicit(&w->slots[i].s->refcount, memory_order_acquire) <= 1) {
            dropped++;
            continue;
        }
        mask[i / 64] |= (uint64_t)1 << (i % 64);
        n_keep++;
    }
    tt_rt_wtrace *trace = NULL;
    tt_ir_program *built = NULL;
    const int32_t *out_slots = NULL;
    int32_t n_out = 0;
    const tt_rt_bucket_plan *plan = NULL;
    tt_rt_bucket_plan *own_plan = NULL;
    int64_t compiles = atomic_load(&tt_rt_g.compiles);
    if (st == TT_OK && n_keep > 0)
        st = window_program(device, w, mask, n_mask, &trace, &built, &out_slots, &n_out, &plan, &own_plan);
    tt_ir_program *p = trace ? tt_rt_wtrace_program(trace) : built;
    tt_rt_tensor stack_res[8], *res = stack_res;
    if (st == TT_OK && n_out > 8 && !(res = malloc(sizeof *res * (size_t)n_out))) st = tt_rt_oom("a window's cut");
    for (int32_t o = 0; st == TT_OK && o < n_out; o++) {
        tt_rt_wslot *sl = &w->slots[out_slots[o]];
        if ((st = tt_rt_storage_materialize(sl->s)) != TT_OK) break;
        const tt_ir_type *vt = &p->types[p->outputs[o]];
        tt_rt_tensor *r = &res[o];
        memset(r, 0, sizeof *r);
        r->storage = sl->s;
        r->dtype = sl->dtype;
        r->rank = vt->rank;
        int64_t stride = 1;
        for (int32_t d = vt->rank - 1; d >= 0; d--) {
            r->dims[d] = vt->dims[d];
            r->strides[d] = stride;
            stride *= vt->dims[d];
        }
    }
    char name[96];
    if (w->graph[0]) snprintf(name, sizeof name, "graph %s (%d ops)", w->graph, (int)n_ops);
    else if (n_ops == 1) snprintf(name, sizeof name, "%s", w->first_op); /* a window of one op is that op */
    else snprintf(name, sizeof name, "fused window of %d ops (from %s)", (int)n_ops, w->first_op);
    tt_rt_origins origins = {w->origins, w->origins_len, n_ops};
    if (st == TT_OK && n_out > 0)
        st = plan ? tt_rt_bucket_launch(device, plan, w->args, w->n_args, res, n_out, name, &origins)
                  : tt_rt_launch_queued(device, p, w->args, w->n_args, res, n_out, name, &origins);
    if (w->graph_depth > 0) w->graph_cuts++;
    if (w->capture && st == TT_OK && n_out > 0 && !plan)
        *w->capture = tt_rt_graph_run_new(p, w->args, w->n_args, res, n_out, &origins);
    atomic_fetch_add(&tt_rt_g.cuts[reason], 1);
    atomic_fetch_add(&tt_rt_g.windows_run, 1);
    atomic_fetch_add(&tt_rt_g.windows_ops, n_ops);
    atomic_fetch_add(&tt_rt_g.pending_dropped, dropped);
    if (tt_rt_g.log_fusion || (tt_rt_g.log_compile && reason == TT_RT_CUT_GRAPH && w->graph[0])) {
        char outcome[96];
        if (st != TT_OK) snprintf(outcome, sizeof outcome, "failed");
        else if (n_out == 0) snprintf(outcome, sizeof outcome, "nothing to run");
        else if (atomic_load(&tt_rt_g.compiles) > compiles)
            snprintf(outcome, sizeof outcome, "compiled (%s)%s",
                     tt_rt_wtrace_miss_reason(&origins, plan ? tt_rt_bucket_plan_program(plan) : p),
                     plan ? ", padded to its bucket" : "");
        else snprintf(outcome, sizeof outcome, "%s", built ? "built, cached program" : "replayed");
        log_cut(device, w, reason, n_out, dropped, outcome, where);
    }
    if (res != stack_res) free(res);
    if (mask != stack_mask) free(mask);
    tt_rt_wtrace_release(trace);
    tt_rt_bucket_plan_free(own_plan);
    tt_ir_program_destroy(built);
    char msg[TT_RT_MSG_SIZE];
    if (st != TT_OK) {
        snprintf(msg, sizeof msg, "%s: %s", name, tt_last_error());
        /* what the window should have written raises this error when read, instead of giving undefined bytes */
        tt_rt_poison *poison = tt_rt_poison_new(st, msg);
        for (int32_t i = 0; i < w->n_slots; i++)
            if (w->slots[i].written) tt_rt_storage_poison(w->slots[i].s, poison);
        tt_rt_poison_release(poison);
    }
    window_clear(w);
    return st == TT_OK ? TT_OK : tt_error(st, "%s", msg);
}

tt_status tt_rt_window_cut(int device, tt_rt_cut_reason reason) {
    tt_status first = TT_OK;
    char where[256] = "";
    for (int d = 0; d < tt_rt_g.n_devices; d++) {
        if ((device >= 0 && d != device) || !tt_rt_window_busy(d)) continue;
        if (tt_rt_g.log_fusion && !where[0]) where_now(where, sizeof where);
        tt_rt_window *w = &tt_rt_g.windows[d];
        pthread_mutex_lock(&w->mu);
        tt_status st = cut_locked(d, w, reason, where);
        pthread_mutex_unlock(&w->mu);
        if (st != TT_OK && first == TT_OK) first = st;
    }
    return first;
}

tt_status tt_rt_window_graph(int device, const char *name, tt_rt_graph_run **capture) {
    tt_rt_window *w = &tt_rt_g.windows[device];
    char where[256] = "";
    if (tt_rt_g.log_fusion || tt_rt_g.log_compile) where_now(where, sizeof where);
    if (capture) *capture = NULL;
    pthread_mutex_lock(&w->mu);
    tt_status st = TT_OK;
    bool outermost = name ? w->graph_depth == 0 : w->graph_depth == 1;
    if (!name && w->graph_depth == 0) {
        st = tt_error(TT_STATUS_INVALID_ARGUMENT, "tpu:%d: a graph ended that never began", device);
    } else if (outermost) {
        /* one program, all of it the graph's own: what it launched can be launched again for the same inputs */
        w->capture = !name && w->graph_cuts == 0 && !w->graph_foreign ? capture : NULL;
        st = cut_locked(device, w, TT_RT_CUT_GRAPH, where);
        w->capture = NULL;
        snprintf(w->graph, sizeof w->graph, "%s", name ? name : "");
        w->graph_cuts = 0;
        w->graph_foreign = false;
        w->graph_thread = pthread_self();
    }
    if (name) w->graph_depth++;
    else if (w->graph_depth > 0) w->graph_depth--;
    pthread_mutex_unlock(&w->mu);
    return st;
}

tt_status tt_rt_flush(int device, tt_rt_cut_reason reason) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (device < -1 || device >= tt_rt_g.n_devices)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "flush: tpu:%d does not exist (%d devices)", device,
                        tt_rt_g.n_devices);
    return tt_rt_window_cut(device, (unsigned)reason < TT_RT_CUT_COUNT ? reason : TT_RT_CUT_FLUSH);
}

/* Whether the op's tensors fit beside what the window already holds. */
static bool op_fits(tt_rt_window *w, const tt_rt_arg *args, int32_t n_args, const tt_rt_tensor *results,
                    int32_t n_results) {
    for (int32_t i = 0; i < n_args; i++)
        if (args[i].kind == TT_RT_ARG_TENSOR && !tt_rt_window_view_fits(w, &args[i].tensor, false)) return false;
    for (int32_t j = 0; j < n_results; j++)
        if (!tt_rt_window_view_fits(w, &results[j], true)) return false;
    /* one storage seen as two dtypes within the op (a slot keeps one) */
    for (int32_t i = 0; i < n_args + n_results; i++) {
        if (i < n_args && args[i].kind != TT_RT_ARG_TENSOR) continue;
        const tt_rt_tensor *a = i < n_args ? &args[i].tensor : &results[i - n_args];
        for (int32_t j = i + 1; j < n_args + n_results; j++) {
            if (j < n_args && args[j].kind != TT_RT_ARG_TENSOR) continue;
            const tt_rt_tensor *c = j < n_args ? &args[j].tensor : &results[j - n_args];
            if (a->storage == c->storage && a->dtype != c->dtype) return false;
        }
    }
    return true;
}

/* Whether an op reads a storage the op recorded just before it wrote: the next step of one tensor's chain. */
static bool reads_previous(const tt_rt_window *w, const tt_rt_arg *args, int32_t n_args) {
    int32_t k = atomic_load(&w->n_ops);
    if (k == 0) return false;
    const tt_rt_wop *prev = &w->ops[k - 1];
    for (int32_t i = 0; i < n_args; i++)
        for (int32_t j = 0; args[i].kind == TT_RT_ARG_TENSOR && j < prev->n_res; j++)
            if (w->op_res[prev->first_res + j].storage == args[i].tensor.storage) return true;
    return false;
}

tt_status tt_rt_window_record(int device, tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op, const char *where) {
    tt_rt_window *w = &tt_rt_g.windows[device];
    if (!where) where = "";
    pthread_mutex_lock(&w->mu);
    if (!op_fits(w, args, n_args, results, n_results)) {
        /* Not beside what the window holds (a storage it has seen as another dtype, a view it cannot add): cut,
         * and the op starts the next window, as in strict mode, unless it does not fit even alone. */
        tt_status st = cut_locked(device, w, TT_RT_CUT_VIEW, where);
        if (st == TT_OK && !op_fits(w, args, n_args, results, n_results))
            st = tt_error(TT_STATUS_UNSUPPORTED, "%s: not expressible in a window", op);
        if (st != TT_OK) {
            pthread_mutex_unlock(&w->mu);
            return st;
        }
    }
    /* The size cap cuts between calls (a call: consecutive ops from one line of user code; ops with no user line,
     * autograd's engine thread running a backward, are one call too). Inside a call it cuts where a chain of
     * dependent ops starts (an optimizer step tensor by tensor), except in a call whose ops mostly do not read
     * what the op before wrote: one operation applied across many tensors, then the next (a foreach optimizer
     * step; its lines are torch's, so all of it is the user's opt.step() line). Each tensor's chain then spans
     * the call, so the call stays in one window up to TT_RT_CALL_OPS_MAX times the cap. */
    int32_t n_ops = atomic_load(&w->n_ops);
    bool new_call = (!where[0] && !tt_rt_g.op_lines) || strcmp(where, w->last_where) != 0;
    bool chained = !new_call && reads_previous(w, args, n_args);
    int32_t judge = tt_rt_g.window_max_ops < 8 ? tt_rt_g.window_max_ops : 8; /* ops seen before judging a call */
    bool op_major = w->call_ops >= judge && 2 * w->call_chained <= w->call_ops;
    int32_t cap = new_call || (!chained && !op_major) ? tt_rt_g.window_max_ops
                                                      : tt_rt_g.window_max_ops * TT_RT_CALL_OPS_MAX;
    bool cut = n_ops > 0 && n_ops >= cap && w->graph_depth == 0;
    if (w->graph_depth > 0 && !pthread_equal(w->graph_thread, pthread_self())) w->graph_foreign = true;
    if (cut) {
        tt_status st = cut_locked(device, w, TT_RT_CUT_SIZE, where); /* clears the call's line and counts */
        if (st != TT_OK) {
            pthread_mutex_unlock(&w->mu);
            return st;
        }
    }
    if (new_call || cut) { /* a plain bounded copy: this runs for most ops */
        size_t len = strnlen(where, sizeof w->last_where - 1);
        memcpy(w->last_where, where, len);
        w->last_where[len] = 0;
        w->call_ops = w->call_chained = 0;
    }
    w->call_ops++;
    w->call_chained += chained;
    /* The op is kept (its program retained, its args copied) and only its bookkeeping done now: the program is
     * built at the cut, and only when the window's trace is new. */
    int32_t k = atomic_load(&w->n_ops);
    tt_status st = TT_OK;
    if (!tt_rt_grow((void **)&w->ops, &w->cap_ops, k + 1, sizeof *w->ops) ||
        !tt_rt_grow((void **)&w->op_args, &w->cap_op_args, w->n_op_args + n_args, sizeof *w->op_args) ||
        !tt_rt_grow((void **)&w->op_res, &w->cap_op_res, w->n_op_res + n_results, sizeof *w->op_res) ||
        !add_origin(w, op, where)) {
        st = tt_rt_oom("an op in a window");
    } else {
        tt_rt_wop *rec = &w->ops[k];
        *rec = (tt_rt_wop){tt_rt_wtrace_intern(p), w->n_op_args, n_args, w->n_op_res, n_results};
        memcpy(w->op_args + w->n_op_args, args, sizeof *args * (size_t)n_args);
        memcpy(w->op_res + w->n_op_res, results, sizeof *results * (size_t)n_results);
        w->n_op_args += n_args;
        w->n_op_res += n_results;
        if (k == 0) snprintf(w->first_op, sizeof w->first_op, "%s", op);
        atomic_fetch_add_explicit(&w->n_ops, 1, memory_order_release);
        st = tt_rt_window_pass_op(w, rec, false);
    }
    if (st != TT_OK) {
        /* The window's bookkeeping is broken from here on: what was recorded before this op is lost too. Drop it
         * all and say so (the caller raises at this op). */
        char msg[TT_RT_MSG_SIZE];
        snprintf(msg, sizeof msg, "%s", tt_last_error());
        window_clear(w);
        pthread_mutex_unlock(&w->mu);
        return tt_error(st, "%s: recording into the fusion window failed (%d earlier ops dropped): %s", op, (int)k,
                        msg);
    }
    pthread_mutex_unlock(&w->mu);
    return st;
}

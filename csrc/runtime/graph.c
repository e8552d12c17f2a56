/* graph.c — compiled graphs (torch.compile's "tpu" backend) enter the runtime here.
 *
 * A graph is recorded through the same lowerings and the same window as fused eager ops, so it needs no compiler
 * of its own: its ops run into one window with no size cap, and the window's cut at its end is the graph's
 * program (compiled once per structure, found in the cache or the trace cache after that). What begin/end add is
 * the boundary: the thread records in FUSED mode whatever mode it is in, the window is cut where the graph starts
 * and ends, and the program carries the graph's name for the profiler, the fusion log and errors.
 *
 * A graph that ran as one program can be launched again without recording its ops at all: the end hands back
 * what the cut launched (tt_rt_graph_run: the program, its args and results), and a later call with inputs laid
 * out the same way launches that program with the new storages (tt_rt_graph_replay). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tt_rt_graph_run {
    tt_ir_program *program; /* retained */
    tt_rt_arg *args;        /* tensor storages retained */
    int32_t n_args;
    tt_rt_tensor *results; /* storages retained */
    int32_t n_results;
    tt_rt_origins origins; /* text owned */
};

static tt_status check_device(int device) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (device < 0 || device >= tt_rt_g.n_devices)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "compiled graph: tpu:%d does not exist (%d devices)", device,
                        tt_rt_g.n_devices);
    return TT_OK;
}

tt_status tt_rt_graph_begin(int device, const char *name, int *prev_mode) {
    tt_status st = check_device(device);
    if (st != TT_OK) return st;
    if (!prev_mode) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_graph_begin: prev_mode is NULL");
    int prev = tt_rt_thread_mode;
    if ((st = tt_rt_set_thread_eager_mode(TT_EAGER_FUSED)) != TT_OK) return st;
    *prev_mode = prev;
    return tt_rt_window_graph(device, name && name[0] ? name : "?", NULL);
}

tt_status tt_rt_graph_end_capture(int device, int prev_mode, tt_rt_graph_run **run) {
    if (run) *run = NULL;
    tt_status st = check_device(device);
    if (st != TT_OK) return st;
    st = tt_rt_window_graph(device, NULL, run);
    tt_status mst = tt_rt_set_thread_eager_mode(prev_mode);
    if (st == TT_OK) st = mst;
    if (st == TT_OK && tt_rt_mode_now() == TT_EAGER_DEBUG) st = tt_rt_synchronize(device);
    return st;
}

tt_status tt_rt_graph_end(int device, int prev_mode) { return tt_rt_graph_end_capture(device, prev_mode, NULL); }

tt_rt_graph_run *tt_rt_graph_run_new(tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                                     const tt_rt_tensor *results, int32_t n_results, const tt_rt_origins *origins) {
    tt_rt_graph_run *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    bool has_origins = origins && origins->n > 0 && origins->len > 0;
    r->args = malloc(sizeof *r->args * (size_t)(n_args > 0 ? n_args : 1));
    r->results = malloc(sizeof *r->results * (size_t)(n_results > 0 ? n_results : 1));
    char *text = has_origins ? malloc(origins->len) : NULL;
    if (!r->args || !r->results || (has_origins && !text)) {
        free(r->args);
        free(r->results);
        free(text);
        free(r);
        return NULL;
    }
    if (text) {
        memcpy(text, origins->text, origins->len);
        r->origins = (tt_rt_origins){text, origins->len, origins->n};
    }
    tt_ir_program_retain(p);
    r->program = p;
    memcpy(r->args, args, sizeof *args * (size_t)n_args);
    memcpy(r->results, results, sizeof *results * (size_t)n_results);
    r->n_args = n_args;
    r->n_results = n_results;
    for (int32_t i = 0; i < n_args; i++)
        if (args[i].kind == TT_RT_ARG_TENSOR) tt_rt_storage_retain(args[i].tensor.storage);
    for (int32_t j = 0; j < n_results; j++) tt_rt_storage_retain(results[j].storage);
    return r;
}

void tt_rt_graph_run_drop_storages(tt_rt_graph_run *r, const bool *keep) {
    for (int32_t i = 0; i < r->n_args; i++)
        if (r->args[i].kind == TT_RT_ARG_TENSOR && !(keep && keep[i])) {
            tt_rt_storage_release(r->args[i].tensor.storage); /* accepts NULL */
            r->args[i].tensor.storage = NULL;
        }
    for (int32_t j = 0; j < r->n_results; j++) {
        tt_rt_storage_release(r->results[j].storage);
        r->results[j].storage = NULL;
    }
}

void tt_rt_graph_run_free(tt_rt_graph_run *r) {
    if (!r) return;
    tt_rt_graph_run_drop_storages(r, NULL);
    tt_ir_program_destroy(r->program);
    free((void *)r->origins.text);
    free(r->args);
    free(r->results);
    free(r);
}

int32_t tt_rt_graph_run_args(const tt_rt_graph_run *r, const tt_rt_arg **args) {
    *args = r->args;
    return r->n_args;
}

int32_t tt_rt_graph_run_results(const tt_rt_graph_run *r, const tt_rt_tensor **results) {
    *results = r->results;
    return r->n_results;
}

tt_status tt_rt_graph_replay(int device, const tt_rt_graph_run *r, const char *name, const tt_rt_arg *args,
                             const tt_rt_tensor *results) {
    tt_status st = check_device(device);
    if (st != TT_OK) return st;
    if (!r) return tt_error(TT_STATUS_INVALID_ARGUMENT, "graph replay: no captured program");
    /* what the window holds runs first, as at a graph's begin; then the program, queued as a cut queues it (the
     * same executable: found in the cache by its structure) */
    if ((st = tt_rt_window_cut(device, TT_RT_CUT_GRAPH)) != TT_OK) return st;
    char label[96];
    snprintf(label, sizeof label, "graph %s (replayed)", name && name[0] ? name : "?");
    st = tt_rt_launch_queued(device, r->program, args, r->n_args, results, r->n_results, label, &r->origins);
    atomic_fetch_add(&tt_rt_g.cuts[TT_RT_CUT_GRAPH], 1);
    atomic_fetch_add(&tt_rt_g.windows_run, 1);
    atomic_fetch_add(&tt_rt_g.window_replays, 1);
    if (tt_rt_g.log_fusion || tt_rt_g.log_compile)
        fprintf(stderr, "torchtpu fusion: tpu:%d graph %s: its program replayed without recording its ops%s\n", device,
                name && name[0] ? name : "?", st == TT_OK ? "" : " (failed)");
    if (st == TT_OK && tt_rt_mode_now() == TT_EAGER_DEBUG) st = tt_rt_synchronize(device);
    return st;
}

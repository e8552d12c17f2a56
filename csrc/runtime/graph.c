/* graph.c — compiled graphs (torch.compile's "tpu" backend) enter the runtime here.
 *
 * A graph is recorded through the same lowerings and the same window as fused eager ops, so it needs no compiler
 * of its own: its ops run into one window with no size cap, and the window's cut at its end is the graph's
 * program (compiled once per structure, found in the cache or the trace cache after that). What begin/end add is
 * the boundary: the thread records in FUSED mode whatever mode it is in, the window is cut where the graph starts
 * and ends, and the program carries the graph's name for the profiler, the fusion log and errors. */
#include "rt_internal.h"

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
    return tt_rt_window_graph(device, name && name[0] ? name : "?");
}

tt_status tt_rt_graph_end(int device, int prev_mode) {
    tt_status st = check_device(device);
    if (st != TT_OK) return st;
    st = tt_rt_window_graph(device, NULL);
    tt_status mst = tt_rt_set_thread_eager_mode(prev_mode);
    if (st == TT_OK) st = mst;
    if (st == TT_OK && tt_rt_mode_now() == TT_EAGER_DEBUG) st = tt_rt_synchronize(device);
    return st;
}

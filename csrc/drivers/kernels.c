/* kernels.c — the process-wide table of custom kernels (tt_kernel.h) that every driver calls by name.
 *
 * Append-only: an entry never changes or goes away once published, so lookups (per call, from any thread, inside
 * a plugin's own threads too) read without a lock up to the published count; registration takes one. */
#include "tt_kernel.h"
#include "tt_ir.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MAX_KERNELS 256

typedef struct kernel_entry {
    char name[64];
    size_t name_len;
    tt_kernel_fn fn;
    void *user;
} kernel_entry;

static kernel_entry kernels[MAX_KERNELS];
static _Atomic int32_t n_kernels;
static pthread_mutex_t register_mu = PTHREAD_MUTEX_INITIALIZER;

static int32_t find(const char *name, size_t len) {
    int32_t n = atomic_load_explicit(&n_kernels, memory_order_acquire);
    for (int32_t i = 0; i < n; i++)
        if (kernels[i].name_len == len && !memcmp(kernels[i].name, name, len)) return i;
    return -1;
}

static bool valid_name(const char *name, size_t len) {
    if (len == 0 || len >= sizeof kernels[0].name) return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
    }
    return true;
}

tt_status tt_kernel_register(const char *name, tt_kernel_fn fn, void *user) {
    if (!name || !fn) return tt_error(TT_STATUS_INVALID_ARGUMENT, "kernel register: name or function is NULL");
    size_t len = strlen(name);
    if (!valid_name(name, len))
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "kernel register: '%.80s' is not a kernel name (1 to 63 characters of A-Z a-z 0-9 _ .)", name);
    pthread_mutex_lock(&register_mu);
    tt_status st = TT_OK;
    int32_t i = find(name, len), n = atomic_load_explicit(&n_kernels, memory_order_relaxed);
    if (i >= 0) {
        if (kernels[i].fn != fn || kernels[i].user != user)
            st = tt_error(TT_STATUS_INVALID_ARGUMENT, "kernel register: '%s' is already registered to another function",
                          name);
    } else if (n == MAX_KERNELS) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "kernel register: the table is full (%d kernels)", MAX_KERNELS);
    } else {
        memcpy(kernels[n].name, name, len + 1);
        kernels[n].name_len = len;
        kernels[n].fn = fn;
        kernels[n].user = user;
        atomic_store_explicit(&n_kernels, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&register_mu);
    return st;
}

tt_status tt_kernel_call(const char *name, size_t name_len, const tt_kernel_tensor *inputs, int32_t n_inputs,
                         tt_kernel_tensor *outputs, int32_t n_outputs) {
    int32_t i = name ? find(name, name_len) : -1;
    if (i < 0)
        return tt_error(TT_STATUS_UNSUPPORTED, "custom_call %.*s: no kernel of that name is registered",
                        (int)(name_len < 64 ? name_len : 64), name ? name : "");
    tt_clear_error();
    tt_status st = kernels[i].fn(kernels[i].user, inputs, n_inputs, outputs, n_outputs);
    if (st != TT_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tt_last_error());
        st = tt_error(st, "kernel %s: %s", kernels[i].name, msg[0] ? msg : "failed (no message)");
    }
    return st;
}

tt_status tt_kernel_check_program(const tt_ir_program *p) {
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const char *target = p->nodes[k].attrs.custom_call.target;
        if (p->nodes[k].op == TT_OP_CUSTOM_CALL && find(target, strlen(target)) < 0)
            return tt_error(TT_STATUS_UNSUPPORTED, "custom_call %.64s: no kernel of that name is registered "
                            "(tt_kernel_register)", target);
    }
    return TT_OK;
}

/* buffer_uses.c — the per-execution table of buffer uses (buffer_uses.h). */
#include "buffer_uses.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static tt_buffer_use *slot(const tt_buffer_uses *u, const tt_buffer *b) {
    uint32_t h = (uint32_t)(((uintptr_t)b >> 4) * 0x9E3779B1u) & u->mask;
    while (u->table[h].buf && u->table[h].buf != b) h = (h + 1) & u->mask;
    return &u->table[h];
}

tt_status tt_buffer_uses_build(tt_buffer_uses *u, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                               int32_t n_results) {
    u->mask = 15;
    while (u->mask < 2u * (uint32_t)(n_args + n_results)) u->mask = u->mask * 2 + 1;
    u->table = u->mask < sizeof u->few / sizeof u->few[0] ? u->few : calloc((size_t)u->mask + 1, sizeof *u->table);
    if (!u->table) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for an execution's buffer table");
    if (u->table == u->few) memset(u->few, 0, ((size_t)u->mask + 1) * sizeof *u->few);
    for (int32_t i = 0; i < n_args; i++) {
        if (!args[i].buffer) continue;
        tt_buffer_use *e = slot(u, args[i].buffer);
        e->buf = args[i].buffer;
        if (e->n_args++ == 0) e->arg = i;
    }
    for (int32_t o = 0; o < n_results; o++) {
        if (!results[o].buffer) continue;
        tt_buffer_use *e = slot(u, results[o].buffer);
        e->buf = results[o].buffer;
        e->n_results++;
    }
    return TT_OK;
}

const tt_buffer_use *tt_buffer_uses_of(const tt_buffer_uses *u, const tt_buffer *b) { return slot(u, b); }

void tt_buffer_uses_free(tt_buffer_uses *u) {
    if (u->table != u->few) free(u->table);
    u->table = NULL;
}

/* buffer_uses.h — which arguments and results of one execution use each buffer: a table by address (open
 * addressing), so that matching every result against every argument stays linear in a window of hundreds of each.
 * Shared by the drivers (the host driver computes results in place, the PJRT driver donates arguments). */
#ifndef TT_BUFFER_USES_H
#define TT_BUFFER_USES_H

#include "tt_driver.h"

typedef struct tt_buffer_use {
    const tt_buffer *buf;
    int32_t n_args, arg, n_results; /* arg: the first argument using it */
} tt_buffer_use;

typedef struct tt_buffer_uses {
    tt_buffer_use few[256];
    tt_buffer_use *table; /* few, or a heap table for a big launch */
    uint32_t mask;
} tt_buffer_uses;

/* Fills u (scalar arguments, with no buffer, are skipped); OUT_OF_MEMORY if a big table cannot be allocated. */
tt_status tt_buffer_uses_build(tt_buffer_uses *u, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                               int32_t n_results);
/* b's entry (zero counts if no argument or result uses it). */
const tt_buffer_use *tt_buffer_uses_of(const tt_buffer_uses *u, const tt_buffer *b);
void tt_buffer_uses_free(tt_buffer_uses *u);

#endif /* TT_BUFFER_USES_H */

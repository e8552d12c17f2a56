/* host_fuse_internal.h — the fused groups' plan, shared by planning (host_fuse.c) and running (host_fuse_run.c). */
#ifndef TT_HOST_FUSE_INTERNAL_H
#define TT_HOST_FUSE_INTERNAL_H

#include "host_internal.h"

#define TILE 1024
#define MAX_PARTS 64
#define MAX_KEPT_SPLATS 16
#define MAX_ROW 8192 /* longest row a group reduces: a tile holds whole rows, every buffer one tile */

/* S_REDUCE: each row of the operand (row elements) to one value; S_ROWBCAST: each value over its row. */
typedef enum step_kind { S_LOAD, S_SPLAT, S_BCAST, S_EW, S_CONVERT, S_SELECT, S_REDUCE, S_ROWBCAST } step_kind;

typedef struct fstep {
    step_kind kind;
    tt_ir_op op;
    tt_ir_cmp cmp;
    tt_ir_reduce_kind red; /* S_REDUCE */
    bool row;          /* one value per row of the group (a reduction's level), else one per element */
    int32_t out;       /* vid written */
    int32_t in[3];     /* vids read */
    int32_t n_in;
    tt_dtype in_dt;    /* operand dtype (EW, CONVERT source, loads: the source's dtype) */
    tt_dtype out_dt;   /* result dtype */
    tt_ir_value src;   /* loads: program value read */
    int32_t rank;      /* S_BCAST: coalesced result dims and source strides (elements) */
    int64_t dims[TT_MAX_RANK], str[TT_MAX_RANK];
    int32_t first_out, n_out; /* this step's entries in the group's outputs */
} fstep;

typedef struct fvid {
    tt_host_class cls;
    int32_t buf;         /* tile buffer index, or -1 (direct pointer) */
    int32_t direct_out;  /* program value whose slot the step writes in place, or -1 */
    bool direct_in;      /* S_LOAD of a native-dtype value: points into the source */
    int32_t last;        /* last step reading it */
} fvid;

/* A group iterates over n elements; a group with reductions sees them as n / row rows of row elements (a
 * reduction over trailing dims), its tiles hold whole rows, and its row-level values have one element per row. */
typedef struct fgroup {
    int64_t n;           /* elements */
    int64_t row;         /* elements per row, or 0 (no reduction) */
    int64_t tile;        /* elements per tile: TILE, or whole rows */
    int32_t exec_node;   /* runs when the interpreter reaches this node */
    int32_t n_steps, n_vids, n_bufs, n_outs;
    fstep *steps;
    fvid *vids;
    tt_ir_value *outs;   /* values stored after their step */
    int32_t *out_vid;
    tt_ir_value *aliases; /* values stored by another of the group's outputs (alias_root): same vid, same dtype */
    tt_ir_value *alias_root;
    int32_t n_aliases;
    int32_t max_parts;
    size_t part_bytes;
    bool splat_per_tile; /* splats refilled every tile (many of them), else kept per part */
} fgroup;

/* In-place results: a unit is a group (its index) or a plain elementwise node (n_groups + node); a site is
 * unit << 32 | step (0 for a plain node). Within a unit every element is read and written at its own index, one
 * tile at a time, so a value written at a step no earlier than the last read of a parameter may take that
 * parameter's memory. */
#define NO_SITE (-1)
#define NEVER (-2)

struct tt_host_fusion {
    int32_t n_groups;
    fgroup *groups;
    int32_t *group_of;   /* per node: group or -1 */
    bool *internal;      /* per value: lives only in tiles */
    tt_ir_value *alias;  /* per value: the group output whose memory it shares (same bytes), or -1 */
    int64_t *written_at; /* per value: the site computing it, element by element, or NO_SITE */
    int64_t *read_until; /* per parameter value: the last site reading it (all in one unit), NO_SITE or NEVER */
};

static inline bool native(tt_dtype dt) { return dt == TT_F32 || dt == TT_F64 || dt == TT_I64; }
static inline size_t class_size(tt_host_class c) { return c == TT_HOST_CF32 ? 4 : 8; }

#endif

/* dynamic.c — lowerings for ops whose result size depends on data, in their static-size form. The shim and the
 * package first learn the size (a sync) and then call the static op: nonzero -> nonzero_static. */
#include "tt_lower.h"

/* aten::nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> i64[size, rank]: the coordinates of the
 * first `size` nonzero elements in row-major order; rows past the count hold fill_value. Each nonzero element's
 * rank among nonzeros (an inclusive cumulative sum) is its output row; the others scatter out of range. */
static tt_status tt_lower_nonzero_static(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const tt_ir_type *xtp = tt_lower_type(ctx, args[0].value);
    int64_t size = args[1].i;
    if (!xtp || xtp->rank == 0 || size < 0) return TT_STATUS_UNSUPPORTED;
    const tt_ir_type xv = *xtp; /* copied: building more nodes may move the builder's type array */
    const tt_ir_type *xt = &xv;
    int64_t n = tt_numel(xt->rank, xt->dims);
    tt_ir_value flat = tt_ir_reshape(b, args[0].value, 1, &n);
    tt_ir_value nz = xt->dtype == TT_BOOL ? flat
                                          : tt_ir_compare(b, TT_CMP_NE, flat, tt_lower_full(ctx, xt->dtype, 1, &n, 0));
    tt_ir_value rank = tt_ir_binary(b, TT_OP_SUBTRACT, tt_ir_cumulative(b, TT_REDUCE_ADD, tt_ir_convert(b, nz, TT_I64), 0, false),
                                    tt_lower_full(ctx, TT_I64, 1, &n, 1));
    tt_ir_value row = tt_ir_select(b, nz, rank, tt_lower_full(ctx, TT_I64, 1, &n, (double)size));
    int64_t n1[2] = {n, 1};
    tt_ir_attrs sa = tt_lower_scatter_elements_attrs(1, TT_REDUCE_NONE, false);
    tt_ir_value picked = tt_ir_scatter(b, tt_lower_full(ctx, TT_I64, 1, &size, -1), tt_ir_reshape(b, row, 2, n1),
                                       tt_ir_iota(b, TT_I64, 1, &n, 0), &sa);
    tt_ir_value empty = tt_ir_compare(b, TT_CMP_LT, picked, tt_lower_full(ctx, TT_I64, 1, &size, 0));
    tt_ir_value fill = tt_lower_full(ctx, TT_I64, 1, &size, (double)(nargs > 2 ? args[2].i : -1));
    tt_ir_value cols[TT_MAX_RANK];
    int64_t s1[2] = {size, 1};
    int64_t stride = 1;
    for (int32_t d = xt->rank - 1; d >= 0; d--) {
        tt_ir_value q = tt_ir_binary(b, TT_OP_DIVIDE, picked, tt_lower_full(ctx, TT_I64, 1, &size, (double)stride));
        tt_ir_value c = tt_ir_binary(b, TT_OP_REMAINDER, q, tt_lower_full(ctx, TT_I64, 1, &size, (double)xt->dims[d]));
        cols[d] = tt_ir_reshape(b, tt_ir_select(b, empty, fill, c), 2, s1);
        stride *= xt->dims[d];
    }
    outs[0] = tt_ir_concatenate(b, xt->rank, cols, 1);
    return tt_ir_builder_status(b);
}

const tt_lower_entry tt_lower_table_dynamic[] = {
    {"aten::nonzero_static", tt_lower_nonzero_static},
    {NULL, NULL},
};

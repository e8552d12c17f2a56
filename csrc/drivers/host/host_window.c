/* host_window.c — reduce_window for the host driver (pooling and friends).
 *
 * out[o] = reduce over window positions w of x[o*stride + w*dilation - pad_low], where positions outside x are
 * the kind's identity (0 for add, 1 for mul, -inf / lowest for max, +inf / highest for min, all-ones for and, 0
 * for or) and so are skipped. Floats accumulate in f32 (f64 for f64) and round once at the end; integers wrap;
 * max/min propagate NaN. Output elements are spread over the thread pool.
 */
#include "host_kernels.h"

#include <math.h>
#include <string.h>

void tt_host_load_row(tt_dtype dt, const void *src, int64_t off, int64_t stride, int64_t n, tt_dtype to,
                      void *dst);
void tt_host_store_row(tt_dtype from, const void *src, int64_t n, tt_dtype dt, void *dst, int64_t off);

typedef struct window_job {
    const tt_ir_type *xt, *ot;
    tt_ir_reduce_kind kind;
    const int64_t *win, *str, *pad, *dil;
    int64_t xstrides[TT_MAX_RANK];
    const void *x;
    void *out;
    tt_dtype cd; /* compute dtype: TT_F32, TT_F64 or TT_I64 */
} window_job;

static double id_float(tt_ir_reduce_kind k) {
    return k == TT_REDUCE_MUL ? 1.0 : k == TT_REDUCE_MAX ? -INFINITY : k == TT_REDUCE_MIN ? INFINITY : 0.0;
}

static int64_t id_int(tt_ir_reduce_kind k, tt_dtype dt) {
    int64_t lo, hi;
    switch (dt) {
    case TT_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case TT_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case TT_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case TT_U8: lo = 0, hi = UINT8_MAX; break;
    case TT_BOOL: lo = 0, hi = 1; break;
    default: lo = INT64_MIN, hi = INT64_MAX; break;
    }
    switch (k) {
    case TT_REDUCE_MUL: return 1;
    case TT_REDUCE_MAX: return lo;
    case TT_REDUCE_MIN: return hi;
    case TT_REDUCE_AND: return dt == TT_BOOL ? 1 : -1;
    default: return 0;
    }
}

static void window_range(void *user, int64_t o0, int64_t o1) {
    const window_job *j = user;
    int r = j->xt->rank;
    int64_t oidx[TT_MAX_RANK];
    int64_t rem = o0;
    for (int d = r - 1; d >= 0; d--) {
        oidx[d] = j->ot->dims[d] ? rem % j->ot->dims[d] : 0;
        rem = j->ot->dims[d] ? rem / j->ot->dims[d] : 0;
    }
    int64_t wn = tt_numel(r, j->win);
    bool is_bool = j->xt->dtype == TT_BOOL;
    for (int64_t o = o0; o < o1; o++) {
        double accf = id_float(j->kind);
        int64_t acci = id_int(j->kind, j->xt->dtype);
        int64_t widx[TT_MAX_RANK] = {0};
        for (int64_t w = 0; w < wn; w++) {
            int64_t off = 0;
            bool inside = true;
            for (int d = 0; d < r; d++) {
                int64_t pos = oidx[d] * j->str[d] + widx[d] * j->dil[d] - j->pad[d];
                if (pos < 0 || pos >= j->xt->dims[d]) {
                    inside = false;
                    break;
                }
                off += pos * j->xstrides[d];
            }
            for (int d = r - 1; d >= 0; d--) {
                if (++widx[d] < j->win[d]) break;
                widx[d] = 0;
            }
            if (!inside) continue;
            if (j->cd == TT_I64) {
                int64_t v;
                tt_host_load_row(j->xt->dtype, j->x, off, 1, 1, TT_I64, &v);
                uint64_t a = (uint64_t)acci, b = (uint64_t)v;
                switch (j->kind) {
                case TT_REDUCE_ADD: acci = is_bool ? (int64_t)(a | b) : (int64_t)(a + b); break;
                case TT_REDUCE_MUL: acci = is_bool ? (int64_t)(a & b) : (int64_t)(a * b); break;
                case TT_REDUCE_MAX: acci = v > acci ? v : acci; break;
                case TT_REDUCE_MIN: acci = v < acci ? v : acci; break;
                case TT_REDUCE_AND: acci = (int64_t)(a & b); break;
                case TT_REDUCE_OR: acci = (int64_t)(a | b); break;
                default: break;
                }
            } else {
                double v;
                if (j->xt->dtype == TT_F32) {
                    v = ((const float *)j->x)[off]; /* the common case, without a call per element */
                } else if (j->cd == TT_F32) {
                    float fv;
                    tt_host_load_row(j->xt->dtype, j->x, off, 1, 1, TT_F32, &fv);
                    v = fv;
                } else {
                    tt_host_load_row(j->xt->dtype, j->x, off, 1, 1, TT_F64, &v);
                }
                switch (j->kind) {
                case TT_REDUCE_ADD: accf += v; break;
                case TT_REDUCE_MUL: accf *= v; break;
                case TT_REDUCE_MAX: accf = (v > accf || isnan(v)) && !isnan(accf) ? v : accf; break;
                case TT_REDUCE_MIN: accf = (v < accf || isnan(v)) && !isnan(accf) ? v : accf; break;
                default: break;
                }
                if (j->cd == TT_F32) accf = (float)accf; /* f32 accumulation, as the device does */
            }
        }
        if (j->cd == TT_I64) {
            tt_host_store_row(TT_I64, &acci, 1, j->ot->dtype, j->out, o);
        } else if (j->cd == TT_F32) {
            float f = (float)accf;
            tt_host_store_row(TT_F32, &f, 1, j->ot->dtype, j->out, o);
        } else {
            tt_host_store_row(TT_F64, &accf, 1, j->ot->dtype, j->out, o);
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++oidx[d] < j->ot->dims[d]) break;
            oidx[d] = 0;
        }
    }
}

tt_status tt_host_reduce_window(const tt_ir_program *p, const tt_ir_node *node, const void *x, void *out) {
    if (!p || !node || node->n_inputs != 1 || node->n_outputs < 1)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: malformed node");
    const tt_ir_type *xt = &p->types[p->operands[node->inputs_offset]];
    const tt_ir_type *ot = &p->types[node->outputs[0]];
    const __typeof__(node->attrs.reduce_window) *a = &node->attrs.reduce_window;
    int r = xt->rank;
    if (r < 0 || r > TT_MAX_RANK || ot->rank != r)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: operand and result ranks differ");
    if (xt->dtype != ot->dtype || (unsigned)xt->dtype >= TT_DTYPE_COUNT)
        return tt_error(TT_STATUS_TYPE, "reduce_window: result dtype must match the operand");
    if (a->kind < TT_REDUCE_ADD || a->kind > TT_REDUCE_OR)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: bad reduction kind %d", (int)a->kind);
    if (tt_dtype_is_float(xt->dtype) && (a->kind == TT_REDUCE_AND || a->kind == TT_REDUCE_OR))
        return tt_error(TT_STATUS_TYPE, "reduce_window: and/or need an integer or bool operand, got %s",
                        tt_dtype_name(xt->dtype));
    /* Missing attribute lists (n = 0) mean the defaults: window 1, stride 1, no padding, dilation 1. */
    int64_t win[TT_MAX_RANK], str[TT_MAX_RANK], pl[TT_MAX_RANK], ph[TT_MAX_RANK], dil[TT_MAX_RANK];
    const tt_ir_dims *lists[5] = {&a->window, &a->strides, &a->pad_low, &a->pad_high, &a->window_dilation};
    for (int i = 0; i < 5; i++)
        if (lists[i]->n != 0 && lists[i]->n != r)
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: attribute lists need one entry per dim");
    for (int d = 0; d < r; d++) {
        win[d] = a->window.n ? a->window.v[d] : 1;
        str[d] = a->strides.n ? a->strides.v[d] : 1;
        pl[d] = a->pad_low.n ? a->pad_low.v[d] : 0;
        ph[d] = a->pad_high.n ? a->pad_high.v[d] : 0;
        dil[d] = a->window_dilation.n ? a->window_dilation.v[d] : 1;
        if (win[d] < 1 || str[d] < 1 || dil[d] < 1)
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: window, strides and dilation must be >= 1");
        int64_t padded = xt->dims[d] + pl[d] + ph[d], span = (win[d] - 1) * dil[d] + 1;
        int64_t n = padded < span ? 0 : (padded - span) / str[d] + 1;
        if (n != ot->dims[d])
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce_window: result dim %d is %lld, expected %lld", d,
                            (long long)ot->dims[d], (long long)n);
    }
    window_job j = {.xt = xt, .ot = ot, .kind = a->kind, .win = win, .str = str, .pad = pl, .dil = dil, .x = x,
                    .out = out};
    j.cd = xt->dtype == TT_F64 ? TT_F64 : tt_dtype_is_float(xt->dtype) ? TT_F32 : TT_I64;
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        j.xstrides[d] = s;
        s *= xt->dims[d];
    }
    int64_t n = tt_numel(r, ot->dims);
    int64_t wn = tt_numel(r, win);
    if (n > 0) tt_host_parallel_for(n, 16384 / (wn > 0 ? wn : 1) + 1, window_range, &j);
    return TT_OK;
}

/* host_sort.c — stable sort of 1 or 2 operands along a dim, keyed by the first. NaN sorts above everything
 * (last ascending, first descending, like PyTorch). A bottom-up merge sort of indices per line; the operands are
 * then permuted as raw elements, so their values are never converted. */
#include "host_internal.h"

#include <string.h>

/* Whether key a goes strictly before key b. */
static inline bool before_f(double a, double b, bool desc) {
    if (desc) {
        double t = a;
        a = b;
        b = t;
    }
    return a == a && (b != b || a < b);
}
static inline bool before_i(int64_t a, int64_t b, bool desc) { return desc ? b < a : a < b; }

static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, const void *keys, bool is_float, bool desc) {
    const double *kf = keys;
    const int64_t *ki = keys;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                /* Take from the right only when strictly before: equal keys keep their order (stable). */
                bool right = is_float ? before_f(kf[idx[b]], kf[idx[a]], desc) : before_i(ki[idx[b]], ki[idx[a]], desc);
                tmp[k++] = right ? idx[b++] : idx[a++];
            }
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

tt_status tt_host_sort(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0);
    int64_t dim = n->attrs.sort.dim;
    bool desc = n->attrs.sort.descending, is_float = tt_dtype_is_float(xt->dtype);
    int64_t outer = 1, inner = 1, size = xt->rank ? xt->dims[dim] : 1;
    for (int32_t i = 0; i < (int32_t)dim; i++) outer *= xt->dims[i];
    for (int32_t i = (int32_t)dim + 1; i < xt->rank; i++) inner *= xt->dims[i];
    int32_t nops = n->n_inputs < 2 ? n->n_inputs : 2;
    if (n->n_outputs < nops) return tt_error(TT_STATUS_INTERNAL, "host sort: %d operands, %d results", (int)nops, (int)n->n_outputs);
    int64_t *keys = scratch, *idx = keys + size, *tmp = idx + size;
    size_t es0 = tt_dtype_size(xt->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * size * inner + in;
            const char *x0 = (const char *)tt_host_in(p, n, vals, 0) + base * (int64_t)es0;
            for (int64_t j = 0; j < size; j++) {
                const char *e = x0 + j * inner * (int64_t)es0;
                if (is_float) tt_host_load_f64(xt->dtype, e, 1, (double *)(void *)&keys[j]);
                else tt_host_load_i64(xt->dtype, e, 1, &keys[j]);
                idx[j] = j;
            }
            merge_sort(idx, tmp, size, keys, is_float, desc);
            for (int32_t k = 0; k < nops; k++) {
                const tt_ir_type *t = tt_host_in_type(p, n, k);
                size_t es = tt_dtype_size(t->dtype);
                const char *src = (const char *)tt_host_in(p, n, vals, k) + base * (int64_t)es;
                char *dst = (char *)vals[n->outputs[k]] + base * (int64_t)es;
                for (int64_t j = 0; j < size; j++)
                    memcpy(dst + j * inner * (int64_t)es, src + idx[j] * inner * (int64_t)es, es);
            }
        }
    }
    return TT_OK;
}

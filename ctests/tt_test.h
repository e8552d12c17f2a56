/* tt_test.h — a tiny test harness for the C core: sentence-named cases, a central list, a summary line. */
#ifndef TT_TEST_H
#define TT_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int tt_test_failures;
static int tt_test_case_failed;

#define TT_CHECK(cond)                                                                  \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            tt_test_case_failed = 1;                                                    \
        }                                                                               \
    } while (0)
#define TT_CHECK_OK(expr)                                                                             \
    do {                                                                                              \
        tt_status st_ = (expr);                                                                       \
        if (st_ != TT_OK) {                                                                           \
            fprintf(stderr, "  %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #expr, tt_status_name(st_), \
                    tt_last_error());                                                                 \
            tt_test_case_failed = 1;                                                                  \
        }                                                                                             \
    } while (0)
#define TT_CHECK_NEAR(a, b, tol) TT_CHECK(fabs((double)(a) - (double)(b)) <= (tol))

typedef struct tt_test_case {
    const char *name;
    void (*fn)(void);
} tt_test_case;

/* Runs every case, prints "N passed, N failed", returns the process exit code. */
static int tt_test_run(const tt_test_case *cases) {
    int passed = 0;
    for (const tt_test_case *c = cases; c->name; c++) {
        tt_test_case_failed = 0;
        c->fn();
        printf("%s %s\n", tt_test_case_failed ? "FAIL" : "ok  ", c->name);
        if (tt_test_case_failed) tt_test_failures++;
        else passed++;
    }
    printf("%d passed, %d failed\n", passed, tt_test_failures);
    return tt_test_failures ? 1 : 0;
}
#endif

/* matmul.c — lowerings of the matmul op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_matmul[] = {
    {NULL, NULL},
};

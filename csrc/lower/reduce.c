/* reduce.c — lowerings of the reduce op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_reduce[] = {
    {NULL, NULL},
};

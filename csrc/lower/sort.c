/* sort.c — lowerings of the sort op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_sort[] = {
    {NULL, NULL},
};

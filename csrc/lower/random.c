/* random.c — lowerings of the random op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_random[] = {
    {NULL, NULL},
};

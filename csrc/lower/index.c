/* index.c — lowerings of the index op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_index[] = {
    {NULL, NULL},
};

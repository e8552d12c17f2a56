/* creation.c — lowerings of the creation op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_creation[] = {
    {NULL, NULL},
};

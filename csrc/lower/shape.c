/* shape.c — lowerings of the shape op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_shape[] = {
    {NULL, NULL},
};

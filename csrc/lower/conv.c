/* conv.c — lowerings of the conv op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_conv[] = {
    {NULL, NULL},
};

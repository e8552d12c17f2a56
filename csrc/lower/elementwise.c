/* elementwise.c — lowerings of the elementwise op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_elementwise[] = {
    {NULL, NULL},
};

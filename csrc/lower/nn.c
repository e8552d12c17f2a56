/* nn.c — lowerings of the nn op family. */
#include "tt_lower.h"

const tt_lower_entry tt_lower_table_nn[] = {
    {NULL, NULL},
};

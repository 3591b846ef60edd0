/* save.c: lp_trace_save (lpt.h): a trace written as .lpt text or .lptb binary, optionally
 * compressed, through lp_save_with (io.h). */
#include "longpole/formats/lpt.h"

#include <stdint.h>

static lp_status write_text(void *t, FILE *out, lp_error *err) { return lp_lpt_write(t, out, err); }
static lp_status write_bin(void *t, FILE *out, lp_error *err) { return lp_lptb_write(t, out, err); }

lp_status lp_trace_save(const lp_trace *t, const char *path, int binary, lp_compression compress, lp_error *err)
{
    return lp_save_with(path, compress, binary ? write_bin : write_text, (void *)(uintptr_t)t, err);
}

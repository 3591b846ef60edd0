/* secwrite.h: the writer of longpole's mapped binary files (.lptb traces, .lpkx kernel
 * graph indexes): a header, then sections each padded to 8 bytes so that a reader can
 * map the file and point straight at every column, and at the end an XXH3-64 of every
 * byte before it. Internal to the library.
 *
 * Invariants: `off` is the number of bytes written so far (the checksum covers exactly
 * those); a failed write is remembered (`failed`) and reported once by lp_secw_finish,
 * so writers can emit a whole file without checking each call.
 */
#ifndef LP_CODEC_SECWRITE_H
#define LP_CODEC_SECWRITE_H

#include "longpole/base/status.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct lp_secw {
    FILE *f;
    void *h;       /* XXH3_state_t */
    uint64_t off;  /* bytes written */
    int failed;
} lp_secw;

/* Start writing to f (LP_ERR_NOMEM when the checksum state cannot be had). */
lp_status lp_secw_init(lp_secw *w, FILE *f, lp_error *err);
/* n bytes of p, checksummed. */
void lp_secw_put(lp_secw *w, const void *p, size_t n);
/* Zero bytes up to the next multiple of 8. */
void lp_secw_pad(lp_secw *w);
/* A section: n elements of elem bytes, then padding. */
void lp_secw_section(lp_secw *w, const void *p, size_t elem, uint64_t n);
/* Append the checksum and flush; 0, or -1 when any write failed. Frees the state (also
 * after a failure); the caller closes f. */
int lp_secw_finish(lp_secw *w);
/* Free the state without writing the checksum (abandoned files). */
void lp_secw_abandon(lp_secw *w);

#endif

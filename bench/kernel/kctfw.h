/* kctfw.h: a faithful writer of CTF 1.8 packets for kgen (bench/kernel/kgen.c): LTTng
 * kernel event names and field names, little-endian, byte-aligned fields, 64-bit
 * timestamps in every event header (no compact headers, so no wrap-around rule to
 * honour), 64 KiB packets per CPU with LTTng's packet context (timestamp_begin/end,
 * content/packet size, packet_seq_num, events_discarded, cpu_id). The metadata is TSDL
 * text written at the end (event classes numbered as they first occur: syscalls and
 * events the mapping does not use keep their names, without fields).
 */
#ifndef KCTFW_H
#define KCTFW_H

#include "longpole/import/kernel.h"
#include <stdio.h>

typedef struct kctfw kctfw;

/* A trace directory `dir` (created) for host `hostname` with `ncpus` streams. */
kctfw *kctfw_open(const char *dir, const char *hostname, uint32_t ncpus);
/* One event (in time order per CPU); names resolved in kt's string table. 0 or -1. */
int kctfw_event(kctfw *w, const lp_ktrace *kt, const lp_kev *e);
/* Bytes written so far (whole packets). */
uint64_t kctfw_bytes(const kctfw *w);
/* Flush the packets, write the metadata, close; bytes written into *bytes. 0 or -1. */
int kctfw_close(kctfw *w, uint64_t *bytes);

#endif

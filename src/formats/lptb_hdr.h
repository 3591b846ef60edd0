/* lptb_hdr.h: the 128-byte header of a .lptb file (docs/formats/lptb.md), shared by its
 * reader and writer (lpt_bin.c) and the dataflow generator's direct writer
 * (gen/dataflow_bin.c). Internal. All fields little-endian (the host order: lpt_bin.c
 * refuses to build on a big-endian host). */
#ifndef LP_IO_LPTB_HDR_H
#define LP_IO_LPTB_HDR_H

#include <stdint.h>

#define LP_LPTB_HDR_SIZE 128

typedef struct lp_lptb_hdr {
    char magic[8];
    uint32_t version, flags;
    uint64_t nstrings, strbytes, ntypes, nworkers, nacts, nmsgs, napool, ngaps;
    int64_t tmin, tmax;
    uint64_t nskew;
    uint64_t reserved[3];
} lp_lptb_hdr;

_Static_assert(sizeof(lp_lptb_hdr) == LP_LPTB_HDR_SIZE, "header layout");

#endif

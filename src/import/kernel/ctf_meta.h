/* ctf_meta.h: the TSDL metadata subset of LTTng's CTF 1.8 traces, parsed into type
 * trees for the direct packet decoder (ctf_meta.c parses, ctf_pkt.c decodes). Private to
 * src/import/kernel/. docs/formats/ctf.md lists the subset.
 *
 * A type tree is made of ctype nodes owned by the ctfmeta (freed with it); a node may be
 * shared (typealiases, named structs), so the per-use facts live in the ctmember entries
 * that point to it: the member's capture code (what the decoder keeps of its value) and
 * its reference slot (where a sequence length or variant tag is kept for later fields).
 */
#ifndef LP_IMPORT_KERNEL_CTF_META_H
#define LP_IMPORT_KERNEL_CTF_META_H

#include <stddef.h>
#include <stdint.h>

enum { CT_INT = 0, CT_STRING, CT_STRUCT, CT_VARIANT, CT_ARRAY, CT_SEQ };
enum { CT_LE = 0, CT_BE = 1, CT_NATIVE = 2 };

typedef struct ctype ctype;

typedef struct ctmember {
    char *name;     /* as written in the metadata (leading '_' kept) */
    ctype *t;
    int32_t slot;   /* >= 0: its value is kept in the decoder's slot (a length or a tag) */
    int16_t cap;    /* capture code of the decoder (ctf_pkt.c), 0: none */
} ctmember;

typedef struct ctenum {
    char *label;
    int64_t lo, hi;  /* inclusive; compared as the integer's signedness says */
} ctenum;

struct ctype {
    uint8_t kind;    /* CT_* */
    uint8_t bo;      /* CT_LE / CT_BE (CT_NATIVE resolved to the trace's after parsing) */
    uint8_t sign;    /* integer: signed */
    uint8_t text;    /* integer: encoding UTF8/ASCII (an array/sequence of them is a string) */
    uint32_t size;   /* integer: bits */
    uint32_t align;  /* bits (struct: the largest of its members' and its own align()) */
    int32_t clock;   /* integer: index of the clock it maps to, -1 none */
    ctmember *m;     /* struct members / variant options */
    uint32_t nm;
    ctenum *en;      /* enum mappings (an integer with labels) */
    uint32_t nen;
    ctype *elem;     /* array / sequence element */
    uint64_t len;    /* array length */
    char *ref;       /* sequence length / variant tag, as written */
    int32_t refslot; /* resolved slot of ref, -1 not yet */
    const ctype *tagt;  /* variant: the tag's (enum) type */
    int32_t *opt;    /* variant: option index of each of tagt's mappings (-1 none) */
    ctype *next;     /* every node of a ctfmeta, for freeing */
};

typedef struct ctclock {
    char *name;
    uint64_t freq;
    int64_t offset_s;
    int64_t offset;  /* cycles */
} ctclock;

typedef struct ctevent {
    char *name;
    uint64_t id;
    uint64_t stream_id;
    ctype *context;  /* may be NULL */
    ctype *fields;   /* may be NULL */
    uint64_t line;   /* where it was declared */
} ctevent;

typedef struct ctstream {
    uint64_t id;
    ctype *pctx;     /* packet.context, may be NULL */
    ctype *ehdr;     /* event.header, may be NULL */
    ctype *ectx;     /* event.context, may be NULL */
} ctstream;

typedef struct ctfmeta {
    uint8_t bo;          /* the trace's byte order */
    ctype *phdr;         /* trace packet.header, may be NULL */
    ctstream *st;
    uint32_t nst;
    ctevent *ev;
    uint32_t nev;
    ctclock *clk;
    uint32_t nclk;
    char *hostname;      /* env hostname, or NULL */
    int32_t nslots;      /* reference slots handed out (ctf_meta_resolve) */
    ctype *all;          /* every node */
    /* parser state (aliases and named types) */
    struct ctfnamed *named;
    size_t nnamed, capnamed, capst, capev, capclk;
} ctfmeta;

/* Is `data` packetized metadata (its first 4 bytes the magic 0x75D11D57, either byte
 * order)? */
int ctf_meta_is_packetized(const unsigned char *data, size_t n);

/* The TSDL text of metadata `data` (plain text is copied; packetized metadata is the
 * concatenation of its packets' contents). *text is lp_malloc'ed and NUL-terminated. On
 * failure returns -1 with a reason in msg and the byte offset in *off. */
int ctf_meta_text(const unsigned char *data, size_t n, char **text, size_t *tlen, char *msg, size_t msgn,
                  uint64_t *off);

/* Parse TSDL text. 0 on success; -1: msg says why and *line where (1-based), with
 * *unsupported set when the text is valid TSDL outside the subset (the caller may fall
 * back to libbabeltrace2) and clear when it is malformed. ctf_meta_release either way. */
int ctf_meta_parse(ctfmeta *m, const char *text, size_t n, char *msg, size_t msgn, uint64_t *line,
                   int *unsupported);
void ctf_meta_release(ctfmeta *m);

/* A field name without its one leading '_' (CTF 1.8 6.1). */
const char *ctf_name(const char *s);

#endif

/* kint.h: internals shared by the kernel-trace readers (src/import/kernel/): the event
 * mapping table (kev_map.c), the host builder every reader feeds (ktrace.c) and the
 * readers' entry points (ctf.c, ftrace.c). Not a public header.
 *
 * A reader hands each event, normalised to an lp_kev, to the host builder under a
 * stream number (a CTF data stream, or the one text stream of an ftrace file); the
 * builder keeps every stream in arrival order and, at the end (khb_finish), puts each
 * stream in timestamp order (stable; what was out of order is counted, never dropped),
 * merges the streams by (timestamp, stream number), fills the per-CPU context (ctx_tid)
 * where the reader did not know it, and builds the per-socket address table.
 */
#ifndef LP_IMPORT_KERNEL_KINT_H
#define LP_IMPORT_KERNEL_KINT_H

#include "longpole/import/kernel.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the mapping of event names and fields (kev_map.c) ------------------------------ */

/* The members of lp_kev a field can fill. */
enum { KR_TID = 0, KR_TID2, KR_A, KR_B, KR_KEY, KR_FLAGS, KR_NAME, KR_NAME2, KR_X, KR_N };
/* KR_X is not a member: a second field folded into one (inet_connect's dport goes with
 * sport into flags). */

/* How a field's value is read. CTF fields are typed (integer or string); ftrace prints
 * text, and these say how to read it. */
typedef enum kfkind {
    KF_INT = 0,  /* a decimal integer (ftrace: leading digits, "001" allowed; "0x.." as hex) */
    KF_HEX,      /* ftrace: hexadecimal without 0x (pointers: hashed %p); CTF: an integer */
    KF_STR,      /* a string (comm, handler name) */
    KF_BASENAME, /* a path; its last component is kept (exec's filename) */
    KF_STATE,    /* sched_switch prev_state: CTF the number, ftrace the letters (LP_KSTATE_*) */
    KF_IRQRET,   /* irq_handler_exit ret: CTF the number, ftrace "handled"/"unhandled" */
    KF_ADDR4,    /* an IPv4 address (CTF: a big-endian 32-bit integer, already host order) */
    KF_PORT      /* a TCP port (likewise, 16-bit) */
} kfkind;

/* Where a member comes from: the field's name in LTTng's CTF (alternatives of the two
 * generations separated by '|', the first present wins) and in ftrace's text. */
typedef struct kfield {
    const char *ctf;   /* NULL: not in CTF (member -1 / LP_STR_NONE) */
    const char *ft;    /* NULL: not in ftrace */
    uint8_t kind;      /* kfkind */
    uint8_t optional;  /* missing -> -1 (or LP_STR_NONE), not an error */
} kfield;

/* Special handling beyond the role table. */
enum {
    KS_NONE = 0,
    KS_SYSCALL_ENTRY,  /* the syscall's name is the rest of the event name after a prefix */
    KS_SYSCALL_EXIT,
    KS_SOCK_ADDR,      /* inet_connect / inet_accept: addresses -> a, b, flags (ports) */
    KS_SOCK_CLONE,     /* inet_sock_clone: nsk takes osk's addresses (resolved in time order) */
    KS_BLOCK,          /* ftrace prints block_rq_* positionally ("8,0 WS 4096 () 123 + 8 [comm]") */
    KS_NET_DEV,        /* net_dev_queue / netif_receive_skb: LP_KNET_DEV, TCP header if present */
    KS_IPI,            /* x86 irq_vectors_* entry/exit */
    KS_LOST            /* ftrace "CPU:N [LOST M EVENTS]": not an event */
};

typedef struct kevdef {
    const char *name;  /* event name as the tracer writes it (exact), or a prefix (KS_SYSCALL_*) */
    uint16_t type;     /* lp_kev_type */
    uint8_t special;   /* KS_* */
    uint8_t prefix;    /* name is a prefix (syscalls) */
    kfield f[KR_N];
} kevdef;

/* The definition of an event name (n bytes, not NUL-terminated), or NULL (an event the
 * graph does not use: LP_KEV_OTHER). *sysname (may be NULL) receives the offset of the
 * syscall name inside `name` for KS_SYSCALL_*. */
const kevdef *lp_kevdef_find(const char *name, size_t n, size_t *sysname);

/* The number of ftrace prev_state letters ("R", "S", "R+", "D|K", "I") as LP_KSTATE_*
 * bits; -1 if a letter is unknown. */
int64_t lp_kstate_from_letters(const char *s, size_t n);

/* ---- the host builder (ktrace.c) -------------------------------------------------------- */

typedef struct kstream {
    lp_kev *ev;
    size_t n, cap;
    int64_t mx;     /* the largest stamp pushed so far */
    uint64_t nout;  /* events pushed with a stamp below mx (out of order) */
    size_t nruns;   /* ascending runs: 1 + the number of steps back from one stamp to the next */
} kstream;

/* Internal bit of lp_kev.kfl while a host is built (cleared by khb_finish). */
#define KPAD_CLONE 0x8000u /* LP_KEV_SOCK_ADDR of inet_sock_clone: key = nsk, a = osk, addresses to copy */

/* Event arrays of finished hosts' streams, kept for the next host's streams: writing
 * into memory already touched costs a fraction of fresh pages (which the kernel must
 * find and zero), and a trace of many hosts reads them one after the other. */
#define KSPARE_MAX 256
typedef struct kspare {
    lp_kev *ev[KSPARE_MAX];
    size_t cap[KSPARE_MAX];
    uint32_t n;
} kspare;
void kspare_release(kspare *sp);

typedef struct khb {
    lp_ktrace *kt;      /* owns the string table */
    kspare *spare;      /* NULL, or where the streams' arrays go after the merge and come from */
    lp_diags *diags;
    const char *file;   /* for diagnostics */
    kstream *st;
    uint32_t nst, capst;
    uint32_t ncpus;     /* 1 + highest CPU seen, or what the trace declares */
    uint64_t nlost, nbad, bytes;
    uint64_t nctx;      /* events pushed with the tracer's own context (ctx_tid >= 0) */
    int keep_all;       /* LP_KREAD_ALL: drop no unused event (khb_finish) */
    lp_str name, source;
} khb;

void khb_init(khb *b, lp_ktrace *kt, lp_diags *diags, const char *file);
void khb_release(khb *b);
/* Append one event to stream `s` (created on first use). LP_ERR_NOMEM. */
lp_status khb_push(khb *b, uint32_t s, const lp_kev *e, lp_error *err);
/* Intern a string into the trace's table; LP_STR_NONE on failure (err set). */
lp_status khb_str(khb *b, const char *s, size_t n, lp_str *out, lp_error *err);
/* Intern a name field of the event mapping: a KF_BASENAME field keeps its last path
 * component (every reader does the same). */
lp_status khb_name(khb *b, int kind, const char *s, size_t n, lp_str *out, lp_error *err);
/* Merge the streams into a new host of b->kt (appended to kt->host). The builder's
 * streams are freed either way. Unless b->keep_all or some event carried the tracer's
 * context, LP_KEV_OTHER events that are not the first or last of their stream are not
 * kept (lp_khost.ndropped; the next switch on their CPU carries the stamp of the one just
 * before it, LP_KEVF_PREV). */
lp_status khb_finish(khb *b, lp_error *err);
/* Order of lp_ksock entries: by (sk, ts). */
int khost_sock_cmp(const void *x, const void *y);
/* Hosts of kt that are pieces of one host (same name, times one after the other: LTTng
 * session rotation's archive chunks, an ftrace recording split in files) joined into the
 * first piece, in time order (kchunk.c); overlapping pieces of one name stay apart with
 * a warning. */
lp_status khost_join_chunks(lp_ktrace *kt, lp_diags *diags, lp_error *err);

/* ---- the readers ------------------------------------------------------------------------ */

/* CTF trace directory (ctf.c: the direct decoder, or libbabeltrace2 when
 * LONGPOLE_CTF=babeltrace or when the direct decoder cannot use the metadata). */
lp_status lp_kctf_read(khb *b, const char *dir, lp_error *err);
/* CTF trace directory by the direct decoder (ctf_pkt.c, no libbabeltrace2):
 * LP_ERR_UNSUPPORTED when its metadata is outside the subset the decoder reads (the
 * caller may fall back to libbabeltrace2), LP_ERR_FORMAT for malformed metadata or data
 * (file and byte offset in the message). *at_metadata is set when the failure came
 * from the metadata (no event was decoded: the builder is as it was given). */
lp_status lp_kctf_direct_read(khb *b, const char *dir, int *at_metadata, lp_error *err);
/* The same on memory: metadata (text or packets) and the bytes of one stream file. */
lp_status lp_kctf_direct_mem(khb *b, const char *meta, size_t nmeta, const unsigned char *data, size_t ndata,
                             lp_error *err);
/* ftrace text (ftrace.c). */
lp_status lp_kftrace_read(khb *b, const char *data, size_t n, lp_error *err);

/* What one lp_ktrace_read call shares between its hosts: the spare stream arrays (NULL:
 * no reuse) and its flags (LP_KREAD_*). */
typedef struct kread {
    kspare *spare;
    unsigned flags;
} kread;

/* Allocate an empty lp_ktrace (string table initialised). */
lp_status lp_ktrace_new(lp_ktrace **out, lp_error *err);

#endif

/* stacks.h: call-stack samples of a run (CrystalPerf §3.1): what each thread was doing,
 * on and off the CPU, as wall-clock intervals with a call stack and a thread state.
 * Readers: `perf script` text (src/import/stacks/perfscript.c; docs/formats/perf-script.md)
 * and timestamped collapsed stacks (collapsed.c; docs/formats/collapsed-stacks.md).
 *
 * A sample is an interval [start, end) of one thread (tid, in process pid) in one state:
 *  - LP_SS_ONCPU: running (a cpu-clock sample, or the on-CPU time between a switch-in
 *    and the next sample or switch-out);
 *  - LP_SS_RUNNABLE: switched out while runnable (preempted, or throttled by a CPU quota:
 *    it waits for a core);
 *  - LP_SS_BLOCKED: switched out in uninterruptible sleep (state D: block I/O, page-in);
 *  - LP_SS_SLEEP: switched out in interruptible sleep (state S: sockets, futexes, pipes,
 *    timers);
 *  - LP_SS_UNKNOWN: the input does not say (collapsed stacks without a state).
 * Its stack is a list of frames, leaf (most recent call) first; a frame is a symbol (""
 * when the input had none: "[unknown]" or a bare address), the library or binary it is
 * in (its basename, "" when unknown) and whether it is a kernel frame.
 *
 * Invariants: samples are in order of start; start <= end; every stack id is < nstacks
 * or LP_NONE32 (no stack); frames and stacks are deduplicated (equal lists share an id).
 * Data problems (malformed lines, frames without symbols, intervals left open at the end
 * of the recording, records out of time order) are counted here and reported to an
 * lp_diags sink with file and line; they never stop the reader.
 */
#ifndef LONGPOLE_IMPORT_STACKS_H
#define LONGPOLE_IMPORT_STACKS_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/diag.h"
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/codec/io.h"

typedef enum lp_sstate {
    LP_SS_ONCPU = 0,
    LP_SS_RUNNABLE,
    LP_SS_BLOCKED,
    LP_SS_SLEEP,
    LP_SS_UNKNOWN,
    LP_SS_N
} lp_sstate;

typedef struct lp_stacks {
    lp_strtab strs;          /* symbols, libraries, thread names */

    uint32_t nframes;        /* distinct frames */
    lp_str *fsym, *fdso;     /* [nframes] symbol ("" if none), library basename ("" if none) */
    uint8_t *fkern;          /* [nframes] 1 for a kernel frame */
    size_t capframes;

    uint32_t nstacks;        /* distinct stacks: frames sfr[soff[s] .. soff[s+1]), leaf first */
    uint32_t *soff;          /* [nstacks+1] */
    uint32_t *sfr;
    size_t capstacks, capsfr;

    uint64_t n;              /* samples, in order of start */
    int64_t *start, *end;    /* ns, on the input's clock */
    uint32_t *tid, *pid;
    uint8_t *state;          /* lp_sstate */
    uint32_t *stack;         /* stack id or LP_NONE32 */
    size_t cap;

    /* what the reader met (also reported to the diagnostics) */
    uint64_t nlines;         /* input lines read */
    uint64_t nbad;           /* malformed records skipped */
    uint64_t nnosym;         /* frames without a symbol */
    uint64_t nopen;          /* off-CPU intervals still open when the recording ended (dropped) */
    uint64_t nunordered;     /* records earlier than the previous one of their thread (dropped) */
    int has_switch;          /* the input has switch-in/out records (exact on/off-CPU times) */

    void *idx;               /* private: dedup tables while reading */
} lp_stacks;

void lp_stacks_init(lp_stacks *s);
void lp_stacks_release(lp_stacks *s);

/* Readers: append the samples of one input. `name` names it in diagnostics. */
lp_status lp_stacks_read_perf(lp_stacks *s, lp_input *in, const char *name, lp_diags *ds, lp_error *err);
lp_status lp_stacks_read_collapsed(lp_stacks *s, lp_input *in, const char *name, lp_diags *ds, lp_error *err);
/* Which reader fits these first bytes: 1 perf script, 2 collapsed, 0 neither. */
int lp_stacks_detect(const unsigned char *head, size_t n);
/* Open a file, detect its kind and read it; then sort the samples by start. A file that is
 * neither kind is LP_ERR_FORMAT; one with no sample at all is LP_ERR_DATA. */
lp_status lp_stacks_load(lp_stacks *s, const char *path, lp_diags *ds, lp_error *err);
/* Sort samples by (start, tid) (readers append per thread as intervals close). */
lp_status lp_stacks_sort(lp_stacks *s, lp_error *err);

/* Frame accessors. */
static inline uint32_t lp_stacks_depth(const lp_stacks *s, uint32_t st)
{
    return st == UINT32_MAX ? 0 : s->soff[st + 1] - s->soff[st];
}
static inline uint32_t lp_stacks_frame(const lp_stacks *s, uint32_t st, uint32_t i) { return s->sfr[s->soff[st] + i]; }
const char *lp_sstate_name(lp_sstate st);

/* Building (used by the readers and by tests): intern a frame, a stack (frames leaf
 * first) and append a sample. */
lp_status lp_stacks_frame_add(lp_stacks *s, const char *sym, size_t nsym, const char *dso, size_t ndso, int kernel,
                              uint32_t *id, lp_error *err);
lp_status lp_stacks_stack_add(lp_stacks *s, const uint32_t *fr, uint32_t n, uint32_t *id, lp_error *err);
lp_status lp_stacks_push(lp_stacks *s, int64_t start, int64_t end, uint32_t tid, uint32_t pid, lp_sstate st,
                         uint32_t stack, lp_error *err);

#endif

/* scenarios.c: the SnailTrail §7.5 presets of the dataflow generator (scenario.h).
 *
 * Why these parameters. Transient critical paths avoid `waiting`, so CP concentrates
 * on the workers that are busy while the others wait for them; an effect shows in CP
 * only once the responsible worker limits the job.
 *  - Skew: the count stage is keyed; with skew s and parallelism 4, count.0 receives
 *    s + (1 - s)/4 of the records (47.5%, 62.5%, 85%). With 1500 ns per record (and
 *    100 ns deserialization) at 1.6 M records/s, count.0 needs 1.2, 1.6 and 2.2 s of
 *    work per second: it saturates at every skew, credit-based flow control blocks the
 *    flatmaps (waiting for credit) and the sources behind them, and the job runs at
 *    count.0's pace. The other count workers are 40% busy, the flatmaps (1000 ns per
 *    record) under 50%. So count.0 is the straggler at 30% already.
 *  - Parallelism: the defaults (source 200, flatmap 2000, count 600 ns per record) at
 *    1 M records/s need 2.2 flatmap-seconds per second: two flatmap workers cannot keep
 *    up (4-2-4) and backpressure the sources; one source (1-2-4) reads at the same
 *    rate, still faster than two flatmaps (0.3 s per second of source work); with four
 *    flatmaps (4-4-4) every stage has slack, the sources wait for input in `io`, and
 *    CP moves to them.
 */
#include "longpole/gen/scenario.h"

#include <string.h>

static const lp_gen_scenario presets[] = {
    {"skew30", "WordCount 4-4-4, 30% of the words on one key (SnailTrail §7.5, Fig. 10)",
     "the straggler summary names count.0"},
    {"skew50", "WordCount 4-4-4, 50% of the words on one key (SnailTrail §7.5, Fig. 10)",
     "the straggler summary names count.0"},
    {"skew80", "WordCount 4-4-4, 80% of the words on one key (SnailTrail §7.5, Fig. 10)",
     "the straggler summary names count.0"},
    {"flatmap-424", "WordCount with an under-provisioned flatmap: source 4, flatmap 2, count 4 (§7.5, Fig. 11 left)",
     "the operator summary ranks flatmap first"},
    {"flatmap-124", "the same with the source slowed to one worker: 1-2-4 (§7.5, Fig. 11 middle)",
     "the operator summary still ranks flatmap first"},
    {"flatmap-444", "the flatmap re-scaled: 4-4-4 (§7.5, Fig. 11 right)",
     "the operator summary no longer ranks flatmap first"},
};

const lp_gen_scenario *lp_gen_scenarios(size_t *n)
{
    *n = sizeof presets / sizeof presets[0];
    return presets;
}

lp_status lp_gen_scenario_apply(lp_gen_dataflow *o, const char *name, lp_error *err)
{
    const char *spec = NULL;
    double rate = 0, skew = 0;
    if (strcmp(name, "skew30") == 0 || strcmp(name, "skew50") == 0 || strcmp(name, "skew80") == 0) {
        spec = "source:4:200,flatmap:4:1000,count:4:1500:keyed";
        rate = 1.6e6;
        skew = name[4] == '3' ? 0.3 : name[4] == '5' ? 0.5 : 0.8;
    } else if (strcmp(name, "flatmap-424") == 0) {
        spec = "source:4,flatmap:2,count:4";
        rate = 1e6;
    } else if (strcmp(name, "flatmap-124") == 0) {
        spec = "source:1,flatmap:2,count:4";
        rate = 1e6;
    } else if (strcmp(name, "flatmap-444") == 0) {
        spec = "source:4,flatmap:4,count:4";
        rate = 1e6;
    } else {
        return lp_error_set(err, LP_ERR_ARG,
                            "unknown scenario '%s' (skew30, skew50, skew80, flatmap-424, flatmap-124, flatmap-444)",
                            name);
    }
    lp_gen_dataflow p;
    lp_gen_dataflow_defaults(&p);
    lp_status st = lp_gen_parse_ops(&p, spec, err);
    if (st)
        return st;
    p.rate = rate;
    p.skew = skew;
    p.duration_ns = INT64_C(10000000000);
    p.seed = 1;
    *o = p;
    return LP_OK;
}

/* test_stacks.c: the call-stack sample readers (src/import/stacks/): perf script with and
 * without switch records (intervals checked to the ns), frames without symbols, records
 * out of order, malformed lines and intervals open at the end counted; timestamped
 * collapsed stacks with states and kernel frames; detection. */
#include "t.h"
#include "longpole/import/stacks.h"
#include "longpole/codec/io.h"

static lp_status read_text(lp_stacks *s, const char *text, int collapsed, lp_diags *ds)
{
    lp_error err;
    lp_input *in;
    lp_stacks_init(s);
    lp_diags_init(ds, 50);
    if (lp_input_open_mem(&in, text, strlen(text), "t.txt", &err))
        return LP_ERR_NOMEM;
    lp_status st = collapsed ? lp_stacks_read_collapsed(s, in, "t.txt", ds, &err)
                             : lp_stacks_read_perf(s, in, "t.txt", ds, &err);
    lp_input_close(in);
    return st;
}

static const char *sym_of(const lp_stacks *s, uint64_t i, uint32_t k)
{
    return lp_strtab_get(&s->strs, s->fsym[lp_stacks_frame(s, s->stack[i], k)]);
}

/* With switch records: on-CPU time cut at samples and at the switch-out; off-CPU time
 * from the switch-out to the switch-in, with the sched_switch's stack and state. */
static void test_switch(void)
{
    const char *text =
        "app 10/11  1.000000000:    1000000 cpu-clock/period=1000000/: \n"
        "\t            121e compute (/tmp/app)\n"
        "\t            12f9 main (/tmp/app)\n"
        "\n"
        "app 10/11  1.000400000:          1  sched:sched_switch: prev_comm=app prev_pid=11 prev_prio=120 "
        "prev_state=D ==> next_comm=x next_pid=1 next_prio=120\n"
        "\tffffffff82265ec8 __schedule ([kernel.kallsyms])\n"
        "\tffffffff822668ff io_schedule ([kernel.kallsyms])\n"
        "\tffffffff817cf7b6 ext4_sync_file ([kernel.kallsyms])\n"
        "\t           fece0 fdatasync (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\t            130d [unknown] (/tmp/app)\n"
        "\n"
        "app 10/11  1.000500000: PERF_RECORD_SWITCH OUT        \n"
        "app 10/11  1.003000000: PERF_RECORD_SWITCH IN         \n"
        "app 10/11  1.003500000:    1000000 cpu-clock/period=1000000/: \n"
        "\t            121e compute (/tmp/app)\n"
        "\n"
        "app 10/11  1.004000000: PERF_RECORD_SWITCH OUT preempt\n"
        "app 10/11  1.005000000: PERF_RECORD_SWITCH IN         \n"
        "app 10/12  1.006000000: PERF_RECORD_SWITCH OUT        \n";
    lp_stacks s;
    lp_diags ds;
    CHECK(read_text(&s, text, 0, &ds) == LP_OK);
    CHECK(s.has_switch);
    /* thread 11: [0.999, 1.0] on (compute: period before the first sample, nothing known
     * before), [1.0, 1.0005] on (the switch's stack), [1.0005, 1.003] blocked,
     * [1.003, 1.0035] on, [1.0035, 1.004] on, [1.004, 1.005] runnable */
    CHECK_EQ_I(s.n, 6);
    CHECK_EQ_I(s.start[0], 999000000);
    CHECK_EQ_I(s.end[0], 1000000000);
    CHECK_EQ_I(s.state[0], LP_SS_ONCPU);
    CHECK_STR(sym_of(&s, 0, 0), "compute");
    CHECK_EQ_I(s.start[1], 1000000000);
    CHECK_EQ_I(s.end[1], 1000500000);
    CHECK_EQ_I(s.state[1], LP_SS_ONCPU);
    CHECK_EQ_I(s.start[2], 1000500000);
    CHECK_EQ_I(s.end[2], 1003000000);
    CHECK_EQ_I(s.state[2], LP_SS_BLOCKED);
    CHECK_EQ_I(lp_stacks_depth(&s, s.stack[2]), 5);
    CHECK_STR(sym_of(&s, 2, 1), "io_schedule");
    CHECK(s.fkern[lp_stacks_frame(&s, s.stack[2], 1)]);
    CHECK(!s.fkern[lp_stacks_frame(&s, s.stack[2], 3)]);
    CHECK_STR(lp_strtab_get(&s.strs, s.fdso[lp_stacks_frame(&s, s.stack[2], 3)]), "libc.so.6");
    CHECK_STR(sym_of(&s, 2, 4), ""); /* [unknown] */
    CHECK_EQ_I(s.nnosym, 1);
    CHECK_EQ_I(s.start[3], 1003000000);
    CHECK_EQ_I(s.end[3], 1003500000);
    CHECK_EQ_I(s.start[5], 1004000000);
    CHECK_EQ_I(s.end[5], 1005000000);
    CHECK_EQ_I(s.state[5], LP_SS_RUNNABLE);
    CHECK_EQ_I(s.pid[0], 10);
    CHECK_EQ_I(s.tid[0], 11);
    /* thread 12 switched out and never came back: open at the end, dropped and counted */
    CHECK_EQ_I(s.nopen, 1);
    CHECK_EQ_I(s.nbad, 0);
    lp_stacks_release(&s);
    lp_diags_release(&ds);
}

/* Without switch records (plain `perf record -g -e cpu-clock -e sched:sched_switch`). */
static void test_no_switch(void)
{
    const char *text =
        "my app 7 [001] 2.000000: 1000000 cpu-clock: \n"
        "\t  121e compute+0x4d (/tmp/app)\n"
        "\n"
        "my app 7 [001] 2.000200: sched:sched_switch: prev_comm=my app prev_pid=7 prev_prio=120 prev_state=S ==> "
        "next_comm=x next_pid=1 next_prio=120\n"
        "\tffffffff81e87cd2 sk_wait_data+0x12 ([kernel.kallsyms])\n"
        "\n"
        "my app 7 [001] 2.010000: 1000000 cpu-clock: \n"
        "\t  121e compute+0x4d (/tmp/app)\n"
        "\n";
    lp_stacks s;
    lp_diags ds;
    CHECK(read_text(&s, text, 0, &ds) == LP_OK);
    CHECK(!s.has_switch);
    /* [1.999, 2.0] on; [2.0, 2.0002] on (ran until the switch); [2.0002, 2.009] sleeping
     * (back at the next sample minus its period); [2.009, 2.010] on */
    CHECK_EQ_I(s.n, 4);
    CHECK_EQ_I(s.start[1], 2000000000);
    CHECK_EQ_I(s.end[1], 2000200000);
    CHECK_EQ_I(s.state[2], LP_SS_SLEEP);
    CHECK_EQ_I(s.start[2], 2000200000);
    CHECK_EQ_I(s.end[2], 2009000000);
    CHECK_STR(sym_of(&s, 2, 0), "sk_wait_data"); /* "+0x12" stripped */
    CHECK_STR(sym_of(&s, 0, 0), "compute");
    CHECK_EQ_I(s.tid[0], 7);
    CHECK_EQ_I(s.pid[0], 7);
    lp_stacks_release(&s);
    lp_diags_release(&ds);
}

/* Malformed perf output: counted, reported with line numbers, never fatal. */
static void test_bad_perf(void)
{
    const char *text = "this is not a record\n"
                       "\tframe outside\n"
                       "app 1/1 x.y: 5 cpu-clock: \n"
                       "app 1/1 3.0: 1000 cpu-clock: \n"
                       "\tnot-hex sym (dso)\n"
                       "\t   \n"
                       "\n"
                       "app 1/1 2.0: 1000 cpu-clock: \n" /* earlier than the previous one: dropped */
                       "\n";
    lp_stacks s;
    lp_diags ds;
    CHECK(read_text(&s, text, 0, &ds) == LP_OK);
    CHECK_EQ_I(s.nbad, 5);
    CHECK_EQ_I(s.nunordered, 1);
    CHECK_EQ_I(s.n, 1);
    CHECK(ds.count[LP_RULE_IMPORT] >= 5);
    CHECK(ds.nkept > 0 && ds.kept[0].line == 1);
    lp_stacks_release(&s);
    lp_diags_release(&ds);
}

static void test_collapsed(void)
{
    const char *text = "# ts tid stack weight\n"
                       "1000 5 main;work;compress 200\n"
                       "1.5 4/5:D main;fsync;ext4_sync_file_[k];io_schedule_[k] 300\n"
                       "2000 6:R main;libz.so.1`deflate;longest_match [libz.so.1] 50\n"
                       "bad line\n"
                       "3000 7 main 12.5\n"
                       "3000 7:Q main 10\n";
    lp_stacks s;
    lp_diags ds;
    CHECK(read_text(&s, text, 1, &ds) == LP_OK);
    CHECK_EQ_I(s.n, 3);
    CHECK_EQ_I(s.nbad, 3);
    CHECK_EQ_I(s.start[0], 1000);
    CHECK_EQ_I(s.end[0], 1200);
    CHECK_EQ_I(s.state[0], LP_SS_UNKNOWN);
    CHECK_STR(sym_of(&s, 0, 0), "compress"); /* leaf first */
    CHECK_EQ_I(s.start[2], 1500000000);
    CHECK_EQ_I(s.state[2], LP_SS_BLOCKED);
    CHECK_EQ_I(s.pid[2], 4);
    CHECK_STR(sym_of(&s, 2, 0), "io_schedule");
    CHECK(s.fkern[lp_stacks_frame(&s, s.stack[2], 0)]);
    CHECK_EQ_I(s.state[1], LP_SS_ONCPU);
    CHECK_STR(sym_of(&s, 1, 0), "longest_match");
    CHECK_STR(lp_strtab_get(&s.strs, s.fdso[lp_stacks_frame(&s, s.stack[1], 0)]), "libz.so.1");
    CHECK_STR(sym_of(&s, 1, 1), "deflate");
    CHECK_STR(lp_strtab_get(&s.strs, s.fdso[lp_stacks_frame(&s, s.stack[1], 1)]), "libz.so.1");
    lp_stacks_release(&s);
    lp_diags_release(&ds);
}

static void test_detect(void)
{
    const char *p = "cpwork  8569/8588   7429.076219736:          1  sched:sched_switch: x\n";
    const char *c = "1000 5 main;work 200\n";
    CHECK_EQ_I(lp_stacks_detect((const unsigned char *)p, strlen(p)), 1);
    CHECK_EQ_I(lp_stacks_detect((const unsigned char *)c, strlen(c)), 2);
    CHECK_EQ_I(lp_stacks_detect((const unsigned char *)"{\"a\":1}\n", 8), 0);
    CHECK_EQ_I(lp_stacks_detect((const unsigned char *)"", 0), 0);
}

/* Frames and stacks are deduplicated. */
static void test_dedup(void)
{
    lp_stacks s;
    lp_stacks_init(&s);
    lp_error err;
    uint32_t a, b, c, st1, st2;
    CHECK(lp_stacks_frame_add(&s, "f", 1, "lib", 3, 0, &a, &err) == LP_OK);
    CHECK(lp_stacks_frame_add(&s, "f", 1, "lib", 3, 1, &b, &err) == LP_OK);
    CHECK(lp_stacks_frame_add(&s, "f", 1, "lib", 3, 0, &c, &err) == LP_OK);
    CHECK(a == c && a != b);
    uint32_t fr[2] = {a, b};
    CHECK(lp_stacks_stack_add(&s, fr, 2, &st1, &err) == LP_OK);
    CHECK(lp_stacks_stack_add(&s, fr, 2, &st2, &err) == LP_OK);
    CHECK(st1 == st2 && s.nstacks == 1);
    lp_stacks_release(&s);
}

int main(void)
{
    test_switch();
    test_no_switch();
    test_bad_perf();
    test_collapsed();
    test_detect();
    test_dedup();
    return t_done("test_stacks");
}

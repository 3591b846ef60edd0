/* cpfcli.h: what the CrystalPerf commands (resources, whatif) share: the options that
 * bring call-stack samples and a classifier model to a trace, and the loading of a trace
 * with its execution profile (cpfcli.c). */
#ifndef LP_CLI_CPFCLI_H
#define LP_CLI_CPFCLI_H

#include "cli.h"
#include "longpole/analysis/crystalperf/bottleneck.h"
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/analysis/crystalperf/profile.h"
#include "longpole/analysis/crystalperf/resource.h"
#include "longpole/analysis/crystalperf/whatif.h"

typedef struct cli_cpf {
    const char *samples;       /* --samples FILE */
    const char *model;         /* --model FILE */
    int no_classifier;
    int64_t offset;            /* --samples-offset D */
    const char *offset_raw;
} cli_cpf;

extern const cli_opt cli_cpf_opts[];
#define CLI_CPF_GROUP(T, m) CLI_GROUP("samples (CrystalPerf):", cli_cpf_opts, T, m)

/* A trace with its profile: everything a CrystalPerf command works on. */
typedef struct cpf_input {
    lp_trace *t;
    lp_stacks s;
    int have_s;
    lp_cls_model m;
    int have_m;
    lp_cpf_profile p;
    int have_p;
    int data_errors;
} cpf_input;

/* Load the trace (operands), the samples and the model; build the profile with intervals
 * of bin_ns (0: none). Prints diagnostics; returns 0 or an exit status. */
int cpf_load(const char *cmd, const cli_load *lo, const cli_cpf *co, char **paths, int npaths, int64_t bin_ns,
             cpf_input *in);
void cpf_release(cpf_input *in);
/* The evidence line(s) of a profile, as text (to stdout). */
void cpf_print_evidence(const cpf_input *in);
/* The same as JSON members of the current object. */
void cpf_json_evidence(lp_jsonw *j, const cpf_input *in);

#endif

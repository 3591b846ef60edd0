/* opt.c: the one option parser of the commands and the help it prints (opt.h).
 * Parsing walks argv once; each argument is looked up in the spec's groups (a linear
 * scan: a command has at most a few dozen options), its value converted as its kind
 * says and stored at the group's base plus the option's offset. */
#include "opt.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ------------------------------------------------------------------------ */

/* An unsigned integer field of 1, 2, 4 or 8 bytes. */
static void store_uint(void *dst, size_t size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)dst = (uint8_t)v; break;
    case 2: *(uint16_t *)dst = (uint16_t)v; break;
    case 4: *(uint32_t *)dst = (uint32_t)v; break;
    default: *(uint64_t *)dst = v; break;
    }
}

/* x within a range "[lo,hi]" (either bracket open or closed, either bound empty). */
static int in_range(const char *r, double x)
{
    if (!r)
        return 1;
    char *end;
    int lo_open = r[0] == '(';
    const char *p = r + 1;
    if (*p != ',') {
        double lo = strtod(p, &end);
        if (lo_open ? !(x > lo) : !(x >= lo))
            return 0;
        p = end;
    }
    p++; /* the comma */
    if (*p != ')' && *p != ']') {
        double hi = strtod(p, &end);
        if (*end == ')' ? !(x < hi) : !(x <= hi))
            return 0;
    }
    return 1;
}

static int list_add(cli_list *l, const char *v)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 8;
        const char **nv = lp_reallocarray(l->v, cap, sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* Store val into the field; 0, -1 for a bad value (msg may say why), -2 out of memory. */
static int set_value(const cli_opt *o, void *dst, const char *val, char *msg, size_t msgn)
{
    uint64_t u;
    int64_t d;
    double x;
    switch (o->kind) {
    case CLI_FLAG: store_uint(dst, o->size, 1); return 0;
    case CLI_SET: store_uint(dst, o->size, (uint64_t)(int64_t)o->ival); return 0;
    case CLI_STR:
    case CLI_TIME: *(const char **)dst = val; return 0;
    case CLI_DUR:
        if (cli_parse_dur(val, &d) || !in_range(o->range, (double)d))
            return -1;
        *(int64_t *)dst = d;
        return 0;
    case CLI_COUNT:
        if (cli_parse_count(val, &u) || !in_range(o->range, (double)u))
            return -1;
        store_uint(dst, o->size, u);
        return 0;
    case CLI_DOUBLE:
        if (cli_parse_double(val, &x) || !in_range(o->range, x))
            return -1;
        *(double *)dst = x;
        return 0;
    case CLI_CHOICE:
        for (int k = 0; o->choices[k]; k++)
            if (strcmp(o->choices[k], val) == 0) {
                *(int *)dst = k;
                return 0;
            }
        return -1;
    case CLI_LIST: return list_add(dst, val) ? -2 : 0;
    case CLI_FN:
    case CLI_ACTION: return o->fn(dst, val, msg, msgn) ? -1 : 0;
    }
    return -1;
}

/* ---- parsing ------------------------------------------------------------------------ */

static int takes_value(const cli_opt *o) { return o->kind != CLI_FLAG && o->kind != CLI_SET && o->kind != CLI_ACTION; }

/* Whether arg names o: 0 no, 1 bare, 2 "name=value" (*val set). */
static int matches(const cli_opt *o, const char *arg, const char **val)
{
    for (int k = 0; k < 2; k++) {
        const char *n = k ? o->alias : o->name;
        if (!n)
            continue;
        size_t len = strlen(n);
        if (strncmp(arg, n, len) != 0)
            continue;
        if (arg[len] == '\0')
            return 1;
        if (arg[len] == '=' && takes_value(o)) {
            *val = arg + len + 1;
            return 2;
        }
    }
    return 0;
}

static const cli_opt *find(const cli_spec *s, const char *arg, const cli_group **g, const char **val)
{
    for (const cli_group *gr = s->groups; gr < s->groups + CLI_MAXGROUPS && gr->opts; gr++)
        for (const cli_opt *o = gr->opts; o->name; o++)
            if (matches(o, arg, val)) {
                *g = gr;
                return o;
            }
    return NULL;
}

/* The message for a bad value: `bad` with its "%s" replaced by the value, else `err`. */
static int bad_value(const cli_spec *s, const cli_opt *o, const char *val)
{
    if (!o->bad)
        return cli_usage(s->cmd, "%s", o->err);
    const char *p = strstr(o->bad, "%s");
    if (!p)
        return cli_usage(s->cmd, "%s", o->bad);
    return cli_usage(s->cmd, "%.*s%s%s", (int)(p - o->bad), o->bad, val, p + 2);
}

static int unknown(const cli_spec *s, const char *arg)
{
    const char *fmt = s->unknown ? s->unknown : "unknown option '%s'";
    const char *p = strstr(fmt, "%s");
    return cli_usage(s->cmd, "%.*s%s%s", (int)(p - fmt), fmt, arg, p + 2);
}

static void count_seen(char *base, size_t seen)
{
    if (seen)
        (*(int *)(void *)(base + seen - 1))++;
}

/* Apply argv[*i] (and its value) as option o of group g. */
static int apply(const cli_spec *s, const cli_group *g, const cli_opt *o, int how, const char *val, int argc,
                 char **argv, int *i, char *args)
{
    if (takes_value(o) && how == 1) {
        if (o->optval)
            val = o->optval;
        else if (*i + 1 < argc)
            val = argv[++*i];
        else
            return cli_usage(s->cmd, "%s", o->err);
    }
    char *base = args + g->base;
    char msg[512] = "";
    int r = set_value(o, base + o->off, val, msg, sizeof msg);
    if (r == -2) {
        fprintf(stderr, "longpole %s: out of memory\n", s->cmd);
        return LP_EXIT_NOMEM;
    }
    if (r)
        return msg[0] ? cli_usage(s->cmd, "%s", msg) : bad_value(s, o, val);
    if (o->raw)
        *(const char **)(void *)(base + o->raw - 1) = val;
    count_seen(base, o->seen);
    count_seen(args, g->seen);
    return 0;
}

int cli_parse_seen(const cli_spec *s, int argc, char **argv, void *args, cli_args *a, cli_opt_seen_fn fn, void *ctx)
{
    memset(args, 0, s->size);
    if (s->init)
        s->init(args);
    a->n = 0;
    a->operands = lp_calloc((size_t)argc + 1, sizeof *a->operands);
    if (!a->operands)
        return LP_EXIT_NOMEM;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *arg = argv[i], *val = NULL;
        const cli_group *g = NULL;
        const cli_opt *o = find(s, arg, &g, &val);
        if (o) {
            int first = i, how = val ? 2 : 1;
            if (!(rc = apply(s, g, o, how, val, argc, argv, &i, args)) && fn)
                rc = fn(ctx, g, o, argv, first, i);
        } else if (arg[0] == '-' && arg[1] != '\0') {
            rc = unknown(s, arg);
        } else if (s->operands == CLI_NO_OPERANDS || (s->operands == CLI_STDIN_ONLY && strcmp(arg, "-") != 0)) {
            rc = unknown(s, arg);
        } else if (s->operands == CLI_OPERANDS) {
            a->operands[a->n++] = argv[i];
        }
    }
    if (rc)
        cli_args_release(s, args, a);
    return rc;
}

int cli_parse(const cli_spec *s, int argc, char **argv, void *args, cli_args *a)
{
    return cli_parse_seen(s, argc, argv, args, a, NULL, NULL);
}

void cli_args_release(const cli_spec *s, void *args, cli_args *a)
{
    for (const cli_group *g = s->groups; g < s->groups + CLI_MAXGROUPS && g->opts; g++)
        for (const cli_opt *o = g->opts; o->name; o++)
            if (o->kind == CLI_LIST) {
                cli_list *l = (cli_list *)(void *)((char *)args + g->base + o->off);
                lp_free(l->v);
                memset(l, 0, sizeof *l);
            }
    if (a) {
        lp_free(a->operands);
        a->operands = NULL;
        a->n = 0;
    }
}

int cli_has(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
            return argv[i][n] ? 2 : 1;
    return 0;
}

/* ---- help ---------------------------------------------------------------------------- */

size_t cli_opt_spelling(const cli_opt *o, int all, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s%s%s", o->name, all && o->alias ? ", " : "", all && o->alias ? o->alias : "");
    if (o->arg && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, o->optval ? "[=%s]" : " %s", o->arg);
    return k < 0 ? 0 : (size_t)k;
}

#define HELP_COL 17 /* the options' help starts at 2 + HELP_COL + 1 */

/* One option's lines: `spell` padded to the column, then its help split at '\n'; a
 * spelling that would push the help far right gets a line of its own. */
static void print_opt(FILE *out, const char *spell, const char *help)
{
    if (strlen(spell) > HELP_COL + 4)
        fprintf(out, "  %s\n  %-*s", spell, HELP_COL, "");
    else
        fprintf(out, "  %-*s", HELP_COL, spell);
    for (const char *p = help;;) {
        const char *e = strchr(p, '\n');
        int len = e ? (int)(e - p) : (int)strlen(p);
        fprintf(out, " %.*s\n", len, p);
        if (!e || !e[1])
            break;
        p = e + 1;
        fprintf(out, "  %-*s", HELP_COL, "");
    }
}

static void print_group(FILE *out, const cli_group *g)
{
    char spell[256];
    size_t k = 0; /* spellings waiting for their line (options documented together) */
    if (g->title)
        fprintf(out, "\n%s\n", g->title);
    for (const cli_opt *o = g->opts; o->name; o++) {
        if (k && k + 1 < sizeof spell)
            spell[k++] = ' ';
        k += cli_opt_spelling(o, 1, spell + k, sizeof spell - k);
        if (k >= sizeof spell)
            k = sizeof spell - 1;
        if (o->help && !o->help[0])
            continue;
        print_opt(out, spell, o->help ? o->help : "");
        k = 0;
    }
}

void cli_spec_print(FILE *out, const cli_spec *s)
{
    if (s->usage)
        fputs(s->usage, out);
    if (s->about)
        fprintf(out, "\n%s", s->about);
    for (const cli_group *g = s->groups; g < s->groups + CLI_MAXGROUPS && g->opts; g++)
        print_group(out, g);
    if (s->notes)
        fprintf(out, "\n%s", s->notes);
}

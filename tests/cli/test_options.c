/* test_options.c: every command's option tables (cli/opt.h), for every form of every
 * command in the table of commands: the help and the parser agree, both ways.
 *  - each option's spellings are printed in `longpole help COMMAND`, and every option
 *    spelling printed in the help's option lines is one the parser accepts;
 *  - no spelling appears twice in a form; every option with a value has a value name,
 *    a usage message and an example; ranges are well-formed; help lines fit 100 columns;
 *  - each option parses once with its example, as "--name value" and "--name=value"
 *    (and its other spelling), leaving no operand behind; a bare option with a value
 *    missing is a usage error (exit 2) printing its message; a flag given "=1" and an
 *    unknown option are usage errors.
 * The parser is the commands' own (cli_parse on the form's args), run in-process with
 * stderr captured. */
#include "cli.h"
#include "distcli.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char errbuf[4096];

/* Parse argv with s into fresh args; stderr captured in errbuf. */
static int parse(const cli_spec *s, int argc, char **argv, int *noperands)
{
    void *args = calloc(1, s->size ? s->size : 1);
    cli_args rest;
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    int rc = cli_parse(s, argc, argv, args, &rest);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(errbuf, 1, sizeof errbuf - 1, tmp);
    errbuf[n] = '\0';
    fclose(tmp);
    *noperands = rc ? -1 : rest.n;
    if (!rc)
        cli_args_release(s, args, &rest);
    free(args);
    return rc;
}

static int takes_value(const cli_opt *o) { return o->kind != CLI_FLAG && o->kind != CLI_SET && o->kind != CLI_ACTION; }

static int range_ok(const char *r)
{
    size_t n = strlen(r);
    return n >= 3 && (r[0] == '[' || r[0] == '(') && (r[n - 1] == ']' || r[n - 1] == ')') && strchr(r, ',');
}

/* The form's option named `spell` (either spelling). */
static const cli_opt *find(const cli_spec *s, const char *spell)
{
    for (int g = 0; g < CLI_MAXGROUPS && s->groups[g].opts; g++)
        for (const cli_opt *o = s->groups[g].opts; o->name; o++)
            if (strcmp(o->name, spell) == 0 || (o->alias && strcmp(o->alias, spell) == 0))
                return o;
    return NULL;
}

/* The table's own rules, for one form. */
static void check_table(const cli_command *c, const cli_spec *s)
{
    const char *seen[256];
    int nseen = 0;
    for (int g = 0; g < CLI_MAXGROUPS && s->groups[g].opts; g++)
        for (const cli_opt *o = s->groups[g].opts; o->name; o++) {
            const char *sp[2] = {o->name, o->alias};
            for (int k = 0; k < 2 && sp[k]; k++) {
                for (int i = 0; i < nseen; i++)
                    if (strcmp(seen[i], sp[k]) == 0) {
                        fprintf(stderr, "%s: %s declared twice\n", c->name, sp[k]);
                        CHECK(0);
                    }
                if (nseen < 256)
                    seen[nseen++] = sp[k];
                CHECK(sp[k][0] == '-' && sp[k][1]);
            }
            CHECK(o->help != NULL);
            if (takes_value(o)) {
                if (!o->arg || !o->err || !o->example)
                    fprintf(stderr, "%s %s: a value needs arg, err and example\n", c->name, o->name);
                CHECK(o->arg && o->err && o->example);
            } else {
                CHECK(!o->arg && !o->err && !o->optval);
            }
            if (o->range)
                CHECK(range_ok(o->range));
            if (o->kind == CLI_FN || o->kind == CLI_ACTION)
                CHECK(o->fn != NULL);
            if (o->kind == CLI_CHOICE)
                CHECK(o->choices && o->choices[0]);
        }
}

/* Each option parses with its example in every spelling; a missing value is a usage error. */
static void check_parse(const cli_command *c, const cli_spec *s)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "%s", s->cmd);
    for (int g = 0; g < CLI_MAXGROUPS && s->groups[g].opts; g++)
        for (const cli_opt *o = s->groups[g].opts; o->name; o++) {
            const char *sp[2] = {o->name, o->alias};
            for (int k = 0; k < 2 && sp[k]; k++) {
                char a1[256], a2[256], joined[512];
                snprintf(a1, sizeof a1, "%s", sp[k]);
                snprintf(a2, sizeof a2, "%s", o->example ? o->example : "");
                char *argv[3] = {cmd, a1, a2};
                int nop, rc;
                if (!takes_value(o) || o->optval) { /* bare */
                    rc = parse(s, 2, argv, &nop);
                    if (rc || nop)
                        fprintf(stderr, "%s: '%s' alone: exit %d, %d operands: %s\n", c->name, a1, rc, nop, errbuf);
                    CHECK_EQ_I(rc, 0);
                    CHECK_EQ_I(nop, 0);
                }
                if (!takes_value(o)) { /* a flag takes no "=value" */
                    snprintf(joined, sizeof joined, "%s=1", sp[k]);
                    char *av[2] = {cmd, joined};
                    CHECK_EQ_I(parse(s, 2, av, &nop), LP_EXIT_USAGE);
                    continue;
                }
                if (!o->optval) { /* "--name value" */
                    rc = parse(s, 3, argv, &nop);
                    if (rc || nop)
                        fprintf(stderr, "%s: '%s %s': exit %d, %d operands: %s\n", c->name, a1, a2, rc, nop, errbuf);
                    CHECK_EQ_I(rc, 0);
                    CHECK_EQ_I(nop, 0);
                    /* value missing: the option's message */
                    rc = parse(s, 2, argv, &nop);
                    CHECK_EQ_I(rc, LP_EXIT_USAGE);
                    if (!strstr(errbuf, o->err))
                        fprintf(stderr, "%s: '%s' without a value printed: %s\n", c->name, a1, errbuf);
                    CHECK(strstr(errbuf, o->err) != NULL);
                }
                snprintf(joined, sizeof joined, "%s=%s", sp[k], o->example);
                char *av[2] = {cmd, joined};
                rc = parse(s, 2, av, &nop);
                if (rc || nop)
                    fprintf(stderr, "%s: '%s': exit %d, %d operands: %s\n", c->name, joined, rc, nop, errbuf);
                CHECK_EQ_I(rc, 0);
                CHECK_EQ_I(nop, 0);
            }
        }
    char bogus[] = "--no-such-option-here", *argv[2] = {cmd, bogus};
    int nop;
    CHECK_EQ_I(parse(s, 2, argv, &nop), LP_EXIT_USAGE);
    CHECK(strstr(errbuf, "--no-such-option-here") != NULL);
}

/* The command's help: every spelling of every form is in it; every spelling in its
 * option lines is an option of one of its forms; lines fit. */
static void check_help(const cli_command *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cli_command_help(f, c);
    fclose(f);
    char usage[128];
    snprintf(usage, sizeof usage, "usage: longpole %s", c->name);
    CHECK(strncmp(text, usage, strlen(usage)) == 0);
    for (int k = 0; k < 4 && c->specs[k]; k++)
        for (int g = 0; g < CLI_MAXGROUPS && c->specs[k]->groups[g].opts; g++)
            for (const cli_opt *o = c->specs[k]->groups[g].opts; o->name; o++) {
                char spell[256];
                cli_opt_spelling(o, 1, spell, sizeof spell);
                if (!strstr(text, spell))
                    fprintf(stderr, "%s: '%s' is not in the help\n", c->name, spell);
                CHECK(strstr(text, spell) != NULL);
            }
    /* option lines: "  -x..." up to the help column; every token starting with '-' */
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if ((int)strlen(line) > 100)
            fprintf(stderr, "%s: help line longer than 100 columns: %s\n", c->name, line);
        CHECK(strlen(line) <= 100);
        if (strncmp(line, "  -", 3) != 0)
            continue;
        /* the spellings: words starting with '-', and their value names, until the help */
        char buf[256];
        snprintf(buf, sizeof buf, "%s", line + 2);
        for (char *save = NULL, *tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
            char *br = strchr(tok, '[');
            if (br)
                *br = '\0'; /* --name[=N] */
            if (tok[0] != '-') {
                if (strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789|:_.") == strlen(tok) || strchr(tok, '|'))
                    continue; /* a value's name */
                break;
            }
            const cli_opt *o = NULL;
            for (int k = 0; k < 4 && c->specs[k] && !o; k++)
                o = find(c->specs[k], tok);
            for (const cli_dist_command *d = cli_dist_commands; c->run == cmd_dist && d->name && !o; d++)
                o = find(d->spec, tok); /* `dist`: its subcommands' options */
            if (!o)
                fprintf(stderr, "%s: the help documents '%s', which no form of the command parses\n", c->name, tok);
            CHECK(o != NULL);
        }
    }
    free(text);
}

int main(void)
{
    int ncommands = 0;
    for (const cli_command *c = cli_commands; c->name; c++, ncommands++) {
        CHECK(c->specs[0] != NULL);
        for (int k = 0; k < 4 && c->specs[k]; k++) {
            check_table(c, c->specs[k]);
            check_parse(c, c->specs[k]);
        }
        check_help(c);
    }
    for (const cli_dist_command *d = cli_dist_commands; d->name; d++) { /* `dist`'s subcommands */
        for (const cli_command *c = cli_commands; c->name; c++)
            if (c->run == cmd_dist) {
                check_table(c, d->spec);
                check_parse(c, d->spec);
            }
    }
    CHECK(ncommands >= 16);
    return t_done("test_options");
}

/* opt.h: the options of the longpole commands, declared once in tables that both parse
 * the command line and print `longpole help COMMAND`, so the help and the parser cannot
 * drift apart.
 *
 * A command's options live in one struct of its own (its "args"). A table (cli_opt[])
 * says, per option: its spellings, the kind of value, where the value goes (an offset
 * into a struct: CLI_AT), the usage message for a missing or bad value, and its help
 * line. Tables are grouped (cli_group: a table and the offset of the struct it
 * writes, within the args), so an option set shared by several commands (loading,
 * request logs, the report's views, the summaries) is one table that every command
 * reuses with the offset of its copy of that struct. A command (cli_spec) is its
 * usage line, prose, groups and notes; `longpole help` prints exactly that, with the
 * option lines generated from the groups.
 *
 * Spellings: "--name value" and "--name=value" for options with a value (the value
 * may start with '-'); flags only bare; an option with `optval` takes a value only as
 * "--name=value" and means `optval` bare. The value is checked as the kind says
 * (within `range`) and stored; a missing or bad one prints "longpole CMD: MESSAGE" and
 * the hint (cli_usage) and the parse returns LP_EXIT_USAGE. Other arguments starting
 * with '-' (but "-" alone) are unknown options; the rest are operands, kept in order.
 * The first error stops the parse; options are applied in command-line order (a later
 * one overrides, CLI_FN options may build on earlier ones).
 *
 * Invariants (checked by tests/cli/test_options.c for every command): no spelling
 * appears twice in a command; every option with a value has a usage message, a value
 * name and an example that parses; every option is printed in the help.
 */
#ifndef LP_CLI_OPT_H
#define LP_CLI_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind {
    CLI_FLAG,    /* no value: the field (an integer of any width) is set to 1 */
    CLI_SET,     /* no value: the field is set to `ival` */
    CLI_ACTION,  /* no value: `fn` is called with a NULL value (e.g. a preset of many fields) */
    CLI_STR,     /* text: a const char * into argv */
    CLI_TIME,    /* a time T: a const char * (the command resolves "+T" against its trace) */
    CLI_DUR,     /* a duration (cli_parse_dur): int64_t ns, within `range` */
    CLI_COUNT,   /* a count with k/M/G (cli_parse_count): an unsigned field of any width, in `range` */
    CLI_DOUBLE,  /* a number: double, within `range` */
    CLI_CHOICE,  /* one of `choices`: an int, its index */
    CLI_LIST,    /* text, repeatable: appended to a cli_list */
    CLI_FN       /* parsed by `fn` */
} cli_kind;

/* A repeatable option's values (CLI_LIST), pointing into argv; freed by cli_args_release. */
typedef struct cli_list {
    const char **v;
    uint32_t n, cap;
} cli_list;

/* Parse `val` into dst (the option's field); 0 if good, else -1 with a message in msg
 * (or msg left empty: the option's `bad` or `err` message is printed). */
typedef int (*cli_parse_fn)(void *dst, const char *val, char *msg, size_t msgn);

typedef struct cli_opt {
    const char *name;            /* "--window", "-o" */
    const char *alias;           /* another spelling ("--output", "--quiet"), or NULL */
    cli_kind kind;
    const char *arg;             /* the value's name in help ("D", "N|all"); NULL for flags */
    size_t off, size;            /* the field: CLI_AT(T, member) */
    const char *range;           /* DUR, COUNT, DOUBLE: "[1,1000]", "(0,1)", "(0,)", "[1,)"; NULL: any */
    const char *const *choices;  /* CLI_CHOICE: NULL-terminated */
    int ival;                    /* CLI_SET: the value stored */
    const char *optval;          /* taken bare (then only "--name=value" gives a value) */
    cli_parse_fn fn;             /* CLI_FN, CLI_ACTION */
    const char *err;             /* usage message for a missing (or bad) value */
    const char *bad;             /* usage message for a bad value, "%s" = the value (default: err) */
    size_t raw;                  /* CLI_RAW(T, member): also keep the value as given */
    size_t seen;                 /* CLI_SEEN(T, member): an int counting the times it was given */
    const char *example;         /* a good value (the tests parse every option with it) */
    const char *help;            /* help text, lines split by '\n'; "" = printed with the next option */
} cli_opt;

/* Where an option's value goes: a member (nested members allowed) of the group's struct T. */
#define CLI_AT(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define CLI_WHOLE(T) .off = 0, .size = sizeof(T) /* the group's whole struct (CLI_FN, CLI_ACTION) */
#define CLI_RAW(T, m) .raw = offsetof(T, m) + 1
#define CLI_SEEN(T, m) .seen = offsetof(T, m) + 1
#define CLI_END {.name = NULL}

typedef struct cli_group {
    const char *title;           /* heading of its help section; NULL: the section above goes on */
    const cli_opt *opts;         /* ends with CLI_END */
    size_t base;                 /* offset of the struct it writes within the command's args */
    size_t seen;                 /* 0, or offset + 1 of an int counting its options given */
} cli_group;

/* A group writing the struct at member m of the command's args T; one writing the args
 * themselves (the command's own options). */
#define CLI_GROUP(title, opts, T, m) {(title), (opts), offsetof(T, m), 0}
#define CLI_OWN(title, opts) {(title), (opts), 0, 0}
/* A group whose options given are counted in the int at member c of the args. */
#define CLI_GROUP_SEEN(title, opts, T, m, c) {(title), (opts), offsetof(T, m), offsetof(T, c) + 1}

enum { CLI_OPERANDS = 0, CLI_NO_OPERANDS = 1, CLI_STDIN_ONLY = 2 };

#define CLI_MAXGROUPS 10

/* One command line form: a command, or a mode of one (`stream --emit`). */
typedef struct cli_spec {
    const char *cmd;             /* the command's name, in messages */
    const char *usage;           /* usage line(s), "\n"-terminated; NULL for a mode */
    const char *about;           /* prose before the options, "\n"-terminated, or NULL */
    cli_group groups[CLI_MAXGROUPS]; /* in help order; ends with an entry without opts */
    const char *notes;           /* prose after the options, or NULL */
    int operands;                /* CLI_OPERANDS; CLI_NO_OPERANDS (any is an unknown option);
                                  * CLI_STDIN_ONLY (only "-", which is dropped) */
    const char *unknown;         /* message for an unknown option, "%s" = it (default
                                  * "unknown option '%s'") */
    size_t size;                 /* sizeof the args */
    void (*init)(void *args);    /* their defaults (NULL: all zero) */
} cli_spec;

/* What is left of a command line once its options are parsed. */
typedef struct cli_args {
    char **operands;             /* in order, pointing into argv */
    int n;
} cli_args;

/* Called after each option is applied, with argv[first..last] its arguments as given;
 * a non-zero return stops the parse and is returned. */
typedef int (*cli_opt_seen_fn)(void *ctx, const cli_group *g, const cli_opt *o, char **argv, int first, int last);

/* Initialise args (spec->init) and parse argv[1..argc) into them. Returns 0, or an exit
 * status after printing the message (LP_EXIT_USAGE, LP_EXIT_NOMEM); on failure nothing
 * is left to release. On success the caller releases with cli_args_release. */
int cli_parse(const cli_spec *s, int argc, char **argv, void *args, cli_args *a);
int cli_parse_seen(const cli_spec *s, int argc, char **argv, void *args, cli_args *a, cli_opt_seen_fn fn,
                   void *ctx);
/* Free the operands and every CLI_LIST of args. */
void cli_args_release(const cli_spec *s, void *args, cli_args *a);

/* Whether argv[1..argc) holds `name`: 1 bare, 2 as "name=..." (the first one), 0 not:
 * selects a mode before parsing (`stream --emit`, `export --sqlite`). */
int cli_has(int argc, char **argv, const char *name);

/* Print a spec's help: usage, prose, the option sections, notes. */
void cli_spec_print(FILE *out, const cli_spec *s);
/* "--name, --alias ARG" as printed in help (the first spelling only if !all). */
size_t cli_opt_spelling(const cli_opt *o, int all, char *buf, size_t n);

#endif

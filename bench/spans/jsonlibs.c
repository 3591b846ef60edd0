/* jsonlibs.c: the measurement behind src/codec/json.c's "why not a library": the JSON
 * parsers Debian 12 packages for C (jansson, json-c, yajl) against lp_json_reader,
 * in the shape the importers need: the elements of {"data":[...]} one at a time,
 * each walked as a tree (every node visited, string lengths summed, so all do the
 * same work after parsing).
 *
 * usage: jsonlibs FILE [REPEAT]   prints one line per parser: name, MB per CPU second,
 * and checksums (nodes, string bytes).
 * The file is read into memory first, so the libraries get their best case (no I/O);
 * lp_json_reader still goes through lp_input (a copy per MiB). jansson and json-c
 * build each element from its first byte (json_loadb with JSON_DISABLE_EOF_CHECK,
 * json_tokener_parse_ex), which is how a streaming importer would have to use them;
 * yajl is event-driven: "yajl" only counts events (a lower bound for its cost, not a
 * usable importer), "yajl+tree" builds each element's tree from the events, copying
 * strings (yajl's buffers are transient), which is what an importer on it would do.
 */
#include "longpole/longpole.h"
#include "longpole/codec/json.h"

#include "jsonlibs.h"
#include <yajl/yajl_parse.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: robust to other load */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- yajl (events only) ---- */
static int y_null(void *c) { ((sums *)c)->nodes++; return 1; }
static int y_bool(void *c, int v) { (void)v; ((sums *)c)->nodes++; return 1; }
static int y_num(void *c, const char *v, size_t k) { (void)v; (void)k; ((sums *)c)->nodes++; return 1; }
static int y_str(void *c, const unsigned char *v, size_t k) { (void)v; ((sums *)c)->nodes++; ((sums *)c)->bytes += k; return 1; }
static int y_key(void *c, const unsigned char *v, size_t k) { (void)v; ((sums *)c)->bytes += k; return 1; }
static int y_open(void *c) { ((sums *)c)->nodes++; return 1; }
static int y_close(void *c) { (void)c; return 1; }
static sums run_yajl(const char *b, size_t n)
{
    sums s = {0, 0};
    yajl_callbacks cb = {y_null, y_bool, NULL, NULL, y_num, y_str, y_open, y_key, y_close, y_open, y_close};
    yajl_handle h = yajl_alloc(&cb, NULL, &s);
    for (size_t i = 0; i < n; i += (size_t)1 << 20) {
        size_t k = n - i < ((size_t)1 << 20) ? n - i : (size_t)1 << 20;
        if (yajl_parse(h, (const unsigned char *)b + i, k) != yajl_status_ok) {
            fprintf(stderr, "yajl: parse error\n");
            break;
        }
    }
    yajl_complete_parse(h);
    yajl_free(h);
    return s;
}


/* ---- yajl building a tree per element (the shape the importers need) ---- */
typedef struct ynode {
    int type;            /* 0 scalar, 1 string, 2 container */
    size_t klen, len;    /* key length, string length */
    char *key, *str;     /* copies (yajl's buffers are transient) */
    size_t nkids;
} ynode;
typedef struct ytree {
    ynode *n;
    size_t nn, capn;
    char *arena;
    size_t used, cap;
    int depth;
    char *pkey;          /* key waiting for its value */
    size_t pklen;
    size_t stack[512];   /* open containers */
    int sp;
    sums s;
} ytree;
static char *ycopy(ytree *t, const unsigned char *v, size_t k)
{
    if (t->used + k + 1 > t->cap) {
        /* arena chunks are never moved while an element is built: grow by re-basing pointers */
        size_t ncap = (t->cap ? t->cap * 2 : 1 << 20) + k;
        char *old = t->arena, *na = malloc(ncap);
        memcpy(na, old, t->used);
        for (size_t i = 0; i < t->nn; i++) {
            if (t->n[i].key)
                t->n[i].key = na + (t->n[i].key - old);
            if (t->n[i].str)
                t->n[i].str = na + (t->n[i].str - old);
        }
        if (t->pkey)
            t->pkey = na + (t->pkey - old);
        free(old);
        t->arena = na;
        t->cap = ncap;
    }
    char *p = t->arena + t->used;
    memcpy(p, v, k);
    p[k] = 0;
    t->used += k + 1;
    return p;
}
static ynode *ypush(ytree *t, int type)
{
    if (t->nn == t->capn) {
        t->capn = t->capn ? t->capn * 2 : 4096;
        t->n = realloc(t->n, t->capn * sizeof(ynode));
    }
    ynode *x = &t->n[t->nn++];
    memset(x, 0, sizeof *x);
    x->type = type;
    x->key = t->pkey;
    x->klen = t->pklen;
    t->pkey = NULL;
    if (t->sp > 0)
        t->n[t->stack[t->sp - 1]].nkids++;
    return x;
}
static void ywalk_done(ytree *t)
{
    for (size_t i = 0; i < t->nn; i++) {
        t->s.nodes++;
        t->s.bytes += t->n[i].klen + t->n[i].len;
    }
    t->nn = 0;
    t->used = 0;
}
static int yt_scalar(void *c) { ytree *t = c; if (t->depth >= 2) ypush(t, 0); return 1; }
static int yt_bool(void *c, int v) { (void)v; return yt_scalar(c); }
static int yt_num(void *c, const char *v, size_t k) { (void)v; (void)k; return yt_scalar(c); }
static int yt_str(void *c, const unsigned char *v, size_t k)
{
    ytree *t = c;
    if (t->depth >= 2) {
        ynode *x = ypush(t, 1);
        x->str = ycopy(t, v, k);
        x->len = k;
    }
    return 1;
}
static int yt_key(void *c, const unsigned char *v, size_t k)
{
    ytree *t = c;
    if (t->depth >= 3) {
        t->pkey = ycopy(t, v, k);
        t->pklen = k;
    }
    return 1;
}
static int yt_open(void *c)
{
    ytree *t = c;
    if (t->depth >= 2) {
        ypush(t, 2);
        t->stack[t->sp++] = t->nn - 1;
    }
    t->depth++;
    return 1;
}
static int yt_close(void *c)
{
    ytree *t = c;
    t->depth--;
    if (t->depth >= 2) {
        t->sp--;
        if (t->depth == 2)
            ywalk_done(t); /* an element of "data" is complete */
    }
    return 1;
}
static sums run_yajl_tree(const char *b, size_t n)
{
    ytree t;
    memset(&t, 0, sizeof t);
    yajl_callbacks cb = {yt_scalar, yt_bool, NULL, NULL, yt_num, yt_str, yt_open, yt_key, yt_close, yt_open, yt_close};
    yajl_handle h = yajl_alloc(&cb, NULL, &t);
    for (size_t i = 0; i < n; i += (size_t)1 << 20) {
        size_t k = n - i < ((size_t)1 << 20) ? n - i : (size_t)1 << 20;
        if (yajl_parse(h, (const unsigned char *)b + i, k) != yajl_status_ok) {
            fprintf(stderr, "yajl: parse error\n");
            break;
        }
    }
    yajl_complete_parse(h);
    yajl_free(h);
    free(t.n);
    free(t.arena);
    return t.s;
}

/* ---- lp_json_reader ---- */
static void walk_lp(const lp_json *v, sums *s)
{
    s->nodes++;
    if (v->key)
        s->bytes += v->klen;
    if (v->type == LP_JSON_STRING)
        s->bytes += v->len;
    for (const lp_json *c = lp_json_first(v); c; c = lp_json_next_sibling(c))
        walk_lp(c, s);
}
static sums run_lp(const char *b, size_t n)
{
    sums s = {0, 0};
    lp_input *in;
    lp_error err;
    if (lp_input_open_mem(&in, b, n, "mem", &err))
        return s;
    static const char *const keys[] = {"data", NULL};
    lp_json_opts o = {.stream_keys = keys};
    lp_json_reader *r;
    if (lp_json_reader_new(&r, in, &o, &err)) {
        lp_input_close(in);
        return s;
    }
    lp_json_ev ev;
    while (lp_json_next(r, &ev, &err) == LP_OK) {
        if (ev.kind == LP_JSON_EV_ELEMENT)
            walk_lp(ev.tree, &s);
        else if (ev.kind == LP_JSON_EV_BAD) {
            fprintf(stderr, "lp_json: %s\n", ev.msg);
            break;
        }
    }
    lp_json_reader_free(r);
    lp_input_close(in);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: jsonlibs FILE [REPEAT]\n");
        return 2;
    }
    int rep = argc > 2 ? atoi(argv[2]) : 3;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n + 1);
    if (!b || fread(b, 1, n, f) != n) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    b[n] = '\0';
    fclose(f);
    struct {
        const char *name;
        sums (*fn)(const char *, size_t);
    } runs[] = {{"jansson", run_jansson}, {"json-c", run_jsonc}, {"yajl", run_yajl}, {"yajl+tree", run_yajl_tree}, {"lp_json", run_lp}};
    printf("%-10s %10s %14s %14s\n", "parser", "MB/s", "nodes", "string bytes");
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        double best = 1e30;
        sums s = {0, 0};
        for (int i = 0; i < rep; i++) {
            double t = now();
            s = runs[k].fn(b, n);
            t = now() - t;
            if (t < best)
                best = t;
        }
        printf("%-10s %10.1f %14llu %14llu\n", runs[k].name, (double)n / 1e6 / best, (unsigned long long)s.nodes,
               (unsigned long long)s.bytes);
    }
    free(b);
    return 0;
}

/* sniff.c: what an input that no reader recognises looks like (load.h,
 * lp_input_sniff), so that the refusal can name it: a CTF trace (its metadata or a
 * stream file, by their magic numbers), longpole's own --json output, deeply nested
 * JSON, other JSON, other text, binary data. Only the first bytes the loader peeked at
 * are looked at (at most 64): O(n), no allocation. */
#include "longpole/load/load.h"

#include <stdio.h>
#include <string.h>

static int has(const unsigned char *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, s, k) == 0)
            return 1;
    return 0;
}

int lp_input_is_ctf(const void *head, size_t n)
{
    const unsigned char *p = head;
    static const unsigned char stream_le[4] = {0xc1, 0x1f, 0xfc, 0xc1}, stream_be[4] = {0xc1, 0xfc, 0x1f, 0xc1};
    static const unsigned char meta_le[4] = {0x57, 0x1d, 0xd1, 0x75}, meta_be[4] = {0x75, 0xd1, 0x1d, 0x57};
    if (n >= 6 && memcmp(p, "/* CTF", 6) == 0)
        return 1;
    return n >= 4 && (memcmp(p, stream_le, 4) == 0 || memcmp(p, stream_be, 4) == 0 || memcmp(p, meta_le, 4) == 0 ||
                      memcmp(p, meta_be, 4) == 0);
}

/* Text: printable ASCII, white space or UTF-8 bytes only (a cut sequence at the end
 * is fine). */
static int is_text(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
            return 0;
    return 1;
}

const char *lp_input_sniff(const void *head_, size_t n, char *buf, size_t nbuf)
{
    const unsigned char *head = head_;
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    const unsigned char *p = head + i;
    size_t m = n - i;
    if (lp_input_is_ctf(head, n))
        snprintf(buf, nbuf, "it looks like part of a CTF trace (LTTng); kernel traces are read by "
                            "`longpole cp --thread TID|NAME DIR`");
    else if (m == 0)
        return NULL; /* empty: not for this function */
    else if (p[0] == '{' && has(p, m, "\"longpole\"") && has(p, m, "\"command\""))
        snprintf(buf, nbuf, "it looks like longpole's own --json output (an analysis result, not a trace)");
    else if (p[0] == '{' || p[0] == '[') {
        size_t depth = 0;
        while (depth < m && (p[depth] == '[' || p[depth] == '{' || p[depth] == ' ' || p[depth] == '\n'))
            depth++;
        if (depth >= 16)
            snprintf(buf, nbuf, "it looks like JSON nested %s%zu levels deep, which no trace format is",
                     depth == m ? "at least " : "", depth);
        else
            snprintf(buf, nbuf, "it is JSON, but none of the JSON formats longpole reads (Chrome trace events, "
                                "Jaeger, Zipkin, OTLP, Spark event log, SnailTrail: `longpole help formats`)");
    } else if (is_text(p, m))
        snprintf(buf, nbuf, "it is text, but neither native .lpt records nor a format longpole reads "
                            "(`longpole help formats`)");
    else
        snprintf(buf, nbuf, "it looks like binary data of no format longpole reads (`longpole help formats`)");
    return buf;
}

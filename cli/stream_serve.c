/* stream_serve.c: `longpole stream --serve`: a live web view of the windows of a stream
 * (docs/serve.md): a page that draws the summaries as windows close (its scripts and
 * styles allowed by a fresh nonce per response), server-sent events of the stream's
 * JSON lines at /api/stream/events (summary's window objects, the stream-window
 * objects, the totals at the end), and every window so far at /api/stream/windows.
 * The events are kept in a hub (lp_server_hub) so late clients and reconnections
 * (Last-Event-ID) get what they missed. */
#define _GNU_SOURCE
#include "streamcli.h"
#include "longpole/serve/serve.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define JSON "application/json; charset=utf-8"
#define NDJSON "application/x-ndjson; charset=utf-8"

static void nonce(char out[25])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)rand();
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 5; i++) {
        uint32_t v = (uint32_t)b[3 * i] << 16 | (uint32_t)b[3 * i + 1] << 8 | b[3 * i + 2];
        out[4 * i] = a[v >> 18 & 63], out[4 * i + 1] = a[v >> 12 & 63], out[4 * i + 2] = a[v >> 6 & 63],
                out[4 * i + 3] = a[v & 63];
    }
    out[20] = a[b[15] >> 2];
    out[21] = a[(b[15] & 3) << 4];
    out[22] = out[23] = '=';
    out[24] = '\0';
}

static const char live_page[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>longpole stream: live</title>\n<style nonce=\"@NONCE@\">\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#1d1d1f;background:#fff}\n"
    "h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .3em}\n"
    ".st{color:#555}.chart{overflow-x:auto}.legend span{display:inline-block;margin:0 1em .2em 0}\n"
    ".sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}\n"
    "table{border-collapse:collapse;margin:.3em 0}td,th{padding:.1em .7em;text-align:right}"
    "td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f4f4f6}\n"
    "</style>\n</head>\n<body>\n<h1>longpole stream: live critical participation</h1>\n"
    "<p class=\"st\" id=\"st\">connecting&hellip;</p>\n"
    "<p class=\"st\">Each bar is one window (the latest on the right): how the critical participation (CP, "
    "SnailTrail &sect;3.2) of the window divides among the keys of each summary. Server-sent events: "
    "<code>/api/stream/events</code>; every window so far: <code>/api/stream/windows</code>.</p>\n"
    "<div id=\"charts\"></div>\n<h2 id=\"lh\">Latest window</h2>\n<div id=\"latest\"></div>\n"
    "<script nonce=\"@NONCE@\">\n"
    "(function(){'use strict';\n"
    "var KINDS=['activity','worker','operator','comm'],TITLE={activity:'Activity summary: CP by activity type',"
    "worker:'Straggler summary: CP by worker',operator:'Operator summary: CP by operator',"
    "comm:'Communication summary: CP by sender \\u2192 receiver'};\n"
    "var MAXW=120,TOP=8,SVG='http://www.w3.org/2000/svg',wins=[],count=0,ended=false,pending=false;\n"
    "var st=document.getElementById('st'),charts=document.getElementById('charts'),"
    "latest=document.getElementById('latest'),lh=document.getElementById('lh');\n"
    "function E(t,a,txt,ns){var e=ns?document.createElementNS(SVG,t):document.createElement(t);"
    "for(var k in a)e.setAttribute(k,a[k]);if(txt!==undefined)e.textContent=String(txt);return e;}\n"
    "function color(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;"
    "return 'hsl('+(h%360)+',55%,'+(45+(h>>9)%20)+'%)';}\n"
    "function pct(x){return x==null?'-':(x*100).toFixed(1)+'%';}\n"
    "function chart(kind,ws){var top={},sum={};ws.forEach(function(w){var s=w.summaries[kind];"
    "if(!s)return;s.rows.forEach(function(r){sum[r.key]=(sum[r.key]||0)+r.cp;});});\n"
    "var keys=Object.keys(sum).sort(function(a,b){return sum[b]-sum[a];}).slice(0,TOP);"
    "keys.forEach(function(k){top[k]=1;});\n"
    "var W=Math.max(600,Math.min(1200,ws.length*10)),H=180,bw=W/Math.max(ws.length,1),"
    "svg=E('svg',{width:W,height:H+20,viewBox:'0 0 '+W+' '+(H+20),role:'img'},undefined,1);\n"
    "ws.forEach(function(w,i){var s=w.summaries[kind];if(!s)return;var y=H,other=0;"
    "s.rows.forEach(function(r){if(!top[r.key]){other+=r.cp;return;}var h=r.cp*H;y-=h;"
    "var re=E('rect',{x:i*bw,y:y,width:Math.max(bw-1,1),height:Math.max(h,0),fill:color(r.key)},undefined,1);"
    "re.appendChild(E('title',{},'window '+w.index+': '+r.key+' '+pct(r.cp),1));svg.appendChild(re);});\n"
    "if(other>0){var h=other*H;y-=h;var re=E('rect',{x:i*bw,y:y,width:Math.max(bw-1,1),height:h,fill:'#bbb'},"
    "undefined,1);re.appendChild(E('title',{},'window '+w.index+': other '+pct(other),1));svg.appendChild(re);}});\n"
    "svg.appendChild(E('line',{x1:0,y1:H,x2:W,y2:H,stroke:'#888'},undefined,1));\n"
    "var d=E('div',{'class':'chart'});d.appendChild(E('h2',{},TITLE[kind]));d.appendChild(svg);"
    "var lg=E('div',{'class':'legend'});keys.concat(['other']).forEach(function(k){var sp=E('span',{});"
    "var sw=E('span',{'class':'sw'});sw.appendChild(E('svg',{width:12,height:12},undefined,1)).appendChild("
    "E('rect',{width:12,height:12,fill:k==='other'?'#bbb':color(k)},undefined,1));"
    "sp.appendChild(sw);sp.appendChild(document.createTextNode(k));lg.appendChild(sp);});"
    "d.appendChild(lg);return d;}\n"
    "function table(w){var d=E('div',{});KINDS.forEach(function(kind){var s=w.summaries[kind];if(!s)return;"
    "d.appendChild(E('h2',{},TITLE[kind]));var t=E('table',{}),h=E('tr',{});"
    "['key','CP','profile','1 path'].forEach(function(c){h.appendChild(E('th',{},c));});t.appendChild(h);"
    "s.rows.slice(0,15).forEach(function(r){var tr=E('tr',{});[r.key,pct(r.cp),pct(r.profile_share),"
    "pct(r.path_share)].forEach(function(c){tr.appendChild(E('td',{},c));});t.appendChild(tr);});"
    "d.appendChild(t);});return d;}\n"
    "function render(){pending=false;var ws=wins.slice(-MAXW),w=ws[ws.length-1];"
    "st.textContent=count+' window'+(count===1?'':'s')+' received'+(ended?'; the stream has ended':'; live')+"
    "(w?'; latest ['+w.ts+', '+w.te+'] ns, N = '+w.paths.approx+' transient critical paths':'');\n"
    "charts.textContent='';if(w)KINDS.forEach(function(k){if(w.summaries[k])charts.appendChild(chart(k,ws));});\n"
    "latest.textContent='';if(w){lh.textContent='Latest window: '+w.index;latest.appendChild(table(w));}}\n"
    "function later(){if(!pending){pending=true;setTimeout(render,100);}}\n"
    "var es=new EventSource('/api/stream/events');\n"
    "es.addEventListener('window',function(e){wins.push(JSON.parse(e.data));count++;"
    "if(wins.length>4*MAXW)wins.splice(0,wins.length-MAXW);later();});\n"
    "es.addEventListener('end',function(){ended=true;es.close();later();});\n"
    "es.onerror=function(){if(!ended)st.textContent='connection lost; retrying\\u2026';};\n"
    "})();\n</script>\n</body>\n</html>\n";

static struct {
    lp_server *server;
    lp_server_hub *hub;
    cli_sumfmt fmt;          /* the stream's, with json on */
} live;

static void live_page_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    char n[25];
    nonce(n);
    /* the page with its nonce in place of every @NONCE@ (a fresh one per response) */
    size_t cap = sizeof live_page + 4 * 24, o = 0;
    char *page = lp_malloc(cap);
    if (!page) {
        lp_server_resp_error(r, 500, "out of memory");
        return;
    }
    for (const char *p = live_page;;) {
        const char *at = strstr(p, "@NONCE@");
        size_t k = at ? (size_t)(at - p) : strlen(p);
        memcpy(page + o, p, k);
        o += k;
        if (!at)
            break;
        memcpy(page + o, n, 24);
        o += 24;
        p = at + 7;
    }
    page[o] = '\0';
    r->body = lp_server_buf_take(page, o);
    r->status = r->body ? 200 : 500;
    r->type = "text/html; charset=utf-8";
    snprintf(r->csp_buf, sizeof r->csp_buf,
             "default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; img-src data:; "
             "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
             n, n);
    r->csp = r->csp_buf;
}

static void live_windows_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    lp_error err;
    lp_server_buf *b = NULL;
    if (lp_server_hub_dump(live.hub, "window", &b, &err)) {
        lp_server_resp_error(r, 500, err.msg);
        return;
    }
    r->status = 200;
    r->type = NDJSON;
    r->body = b;
}

static void live_index_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    static const char idx[] =
        "{\"longpole\":\"" LONGPOLE_VERSION "\",\"mode\":\"stream\",\"endpoints\":["
        "{\"path\":\"/api/stream/events\",\"content_type\":\"text/event-stream\",\"events\":[\"window\","
        "\"stream-window\",\"overall\",\"end\"]},"
        "{\"path\":\"/api/stream/windows\",\"content_type\":\"application/x-ndjson\"}]}\n";
    lp_server_resp_set(r, 200, JSON, idx, sizeof idx - 1);
}

/* Publish what `fn` writes to a memory stream (one JSON line, its newline dropped). */
static void live_publish(const char *event, void (*fn)(FILE *f, const void *a, const void *b), const void *a,
                         const void *b)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f)
        return;
    fn(f, a, b);
    if (fclose(f) == 0) {
        while (len && data[len - 1] == '\n')
            len--;
        lp_error err;
        if (lp_server_hub_publish(live.hub, event, data, len, &err))
            fprintf(stderr, "longpole stream: --serve: %s\n", err.msg);
    }
    free(data);
}

static void write_window(FILE *f, const void *a, const void *b)
{
    (void)b;
    cli_winres_print(f, a, &live.fmt);
}

/* The stream-window object, as `stream --json` prints it after each window. */
static void write_winfo(FILE *f, const void *a, const void *b)
{
    cli_stream_winfo_json(f, a, b);
}

static void write_overall(FILE *f, const void *a, const void *b)
{
    (void)b;
    cli_sumtotal_print(f, (cli_sumtotal *)a, &live.fmt);
}

int cli_stream_serve_start(const char *listen, const cli_sumfmt *fmt)
{
    char spec[300];
    if (!strchr(listen, ':'))
        snprintf(spec, sizeof spec, "127.0.0.1:%s", listen);
    else
        snprintf(spec, sizeof spec, "%s", listen);
    live.fmt = *fmt;
    live.fmt.json = 1;
    live.fmt.compact = 0;
    lp_server_opts so;
    lp_server_opts_init(&so);
    so.listen = spec;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_server_hub_new(&live.hub, 100000, (size_t)256 << 20, &err);
    if (!st)
        st = lp_server_new(&live.server, &so, &err);
    if (!st)
        st = lp_server_route(live.server, "/", 0, live_page_handler, NULL, &err);
    if (!st)
        st = lp_server_route(live.server, "/api", 0, live_index_handler, NULL, &err);
    if (!st)
        st = lp_server_route_events(live.server, "/api/stream/events", live.hub, &err);
    if (!st)
        st = lp_server_route(live.server, "/api/stream/windows", 0, live_windows_handler, NULL, &err);
    if (!st)
        st = lp_server_start(live.server, &err);
    if (st) {
        lp_server_free(live.server);
        lp_server_hub_free(live.hub);
        memset(&live, 0, sizeof live);
        lp_error_push(&err, "--serve %s", listen);
        return cli_fail("stream", &err);
    }
    signal(SIGPIPE, SIG_IGN);
    const char *host = lp_server_host(live.server);
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "longpole stream: serving the windows at http://%s%s%s:%u/\n", v6 ? "[" : "", host, v6 ? "]" : "",
            lp_server_port(live.server));
    return 0;
}

void cli_stream_serve_window(const lp_winres *r, const lp_stream_winfo *wi)
{
    if (!live.server)
        return;
    live_publish("window", write_window, r, NULL);
    live_publish("stream-window", write_winfo, r, wi);
}

void cli_stream_serve_stop(cli_sumtotal *tot)
{
    if (!live.server)
        return;
    if (tot)
        live_publish("overall", write_overall, tot, NULL);
    lp_error err;
    lp_server_hub_publish(live.hub, "end", "{}", 2, &err);
    lp_server_free(live.server); /* ends the event streams (after their last events) */
    lp_server_hub_free(live.hub);
    memset(&live, 0, sizeof live);
}

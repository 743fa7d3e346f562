/* pool_server.c: the pooling study's server under test, on carriers (pool_server.h). */
#include "pool_server.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "carriers.h"
#include "gt_stats.h"
#include "hist.h"
#include "http.h"
#include "http_client.h"
#include "metrics.h"

/* Words of locals in each frame of the warm-up's call path: 256 bytes. */
#define FRAME_WORDS 32

/* Connections a carrier's server takes past the clients expected: stragglers of the
 * last phase, a probe. */
#define SPARE_CONNECTIONS 64

enum command { CMD_NONE, CMD_STATS, CMD_PHASE, CMD_STOP };

typedef struct carrier carrier;

/* A request in hand, from its arrival to its answer. It lives on the heap, since
 * others reach it while its thread is parked, which a copy-mode stack forbids. */
typedef struct task {
    carrier *c;
    ld_http_request *req;
    int64_t t0;
    ld_gt *thread; /* the thread serving it, while it waits for a backend slot */
    struct task *next;
} task;

/* A pooled thread, idle or serving. */
typedef struct worker {
    carrier *c;
    ld_gt *thread;
    task *handed; /* a request handed to it while it was idle */
    struct worker *next;
} worker;

/* A FIFO of tasks or workers, by their next links. */
#define QUEUE(type)                                                                      \
    struct {                                                                             \
        type *head, *tail;                                                               \
    }
#define QUEUE_PUSH(q, x)                                                                 \
    do {                                                                                 \
        (x)->next = NULL;                                                                \
        if ((q).tail)                                                                    \
            (q).tail->next = (x);                                                        \
        else                                                                             \
            (q).head = (x);                                                              \
        (q).tail = (x);                                                                  \
    } while (0)
#define QUEUE_POP(q, out)                                                                \
    do {                                                                                 \
        (out) = (q).head;                                                                \
        if (out) {                                                                       \
            (q).head = (out)->next;                                                      \
            if (!(q).head)                                                               \
                (q).tail = NULL;                                                         \
        }                                                                                \
    } while (0)

/* What a carrier counted, as the control handler copies it out. */
typedef struct counts {
    uint64_t requests, errors, peak_open;
    ld_hist latency;
    ld_gt_stack_stats stacks;
} counts;

struct carrier {
    ld_pool_server *srv;
    ld_sched *sched;
    ld_http_server *http;
    ld_http_conns *backend;
    uv_async_t control;
    uint64_t seen;  /* the last command handled */
    uint64_t slots; /* backend calls this carrier may still start */
    QUEUE(task) slot_waits;
    QUEUE(task) queue; /* pooled: requests no thread has taken yet */
    QUEUE(worker) idle;
    worker *workers; /* pooled: this carrier's share */
    size_t nworkers;
    uint64_t live; /* green threads */
    int closing, finished;
    uint64_t requests, errors, checksum;
    ld_hist latency;
    counts snap;
};

struct ld_pool_server {
    ld_pool_server_config cfg;
    char target[64]; /* "/think?ms=30" */
    char host[32];
    unsigned n;
    carrier *cs;
    pthread_t runner;
    int run_rc;
    atomic_int warm; /* requests take the warm-up's path */
    int64_t phase_t0;
    uint64_t minor0, major0;
    /* Start-up and commands: one lock for the few moments they wait. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int port; /* the first carrier's, which the others bind too */
    unsigned listening, acks;
    int start_rc;
    atomic_uint_fast64_t seq;
    atomic_int cmd;
};

/* --- A request's path ------------------------------------------------------------ */

/* In a green thread: wait for one of the carrier's backend slots, in arrival order. */
static void slot_take(task *t)
{
    carrier *c = t->c;
    if (c->slots > 0) {
        c->slots--;
        return;
    }
    t->thread = ld_gt_self();
    QUEUE_PUSH(c->slot_waits, t);
    ld_gt_park(); /* slot_give hands its slot over */
}

static void slot_give(carrier *c)
{
    task *next;
    QUEUE_POP(c->slot_waits, next);
    if (next)
        ld_gt_unpark(next->thread);
    else
        c->slots++;
}

/* The blocking call every request makes, within the carrier's share of slots. */
static int backend_call(task *t, ld_http_reply *reply)
{
    slot_take(t);
    int rc = ld_http_conns_get(t->c->backend, t->c->srv->target, reply);
    slot_give(t->c);
    return rc;
}

/* One frame of the warm-up's path: locals written before the call below and read
 * after it, so they live in the frame while the thread is parked at the bottom. */
__attribute__((noinline)) static uint64_t deep_call(task *t, unsigned depth,
                                                    ld_http_reply *reply, int *rc)
{
    uint64_t local[FRAME_WORDS];
    for (unsigned i = 0; i < FRAME_WORDS; i++)
        local[i] = (uint64_t)(uintptr_t)t * (i + 1) ^ depth;
    uint64_t sum = 0;
    if (depth == 0)
        *rc = backend_call(t, reply);
    else
        sum = deep_call(t, depth - 1, reply, rc);
    for (unsigned i = 0; i < FRAME_WORDS; i++)
        sum += local[i] * (i | 1);
    return sum;
}

/* Call the backend, by the deep path during the warm-up, and answer the client. */
static void serve(task *t)
{
    carrier *c = t->c;
    ld_http_reply reply;
    int rc = 0;
    if (atomic_load_explicit(&c->srv->warm, memory_order_relaxed))
        c->checksum += deep_call(t, c->srv->cfg.warmup_depth, &reply, &rc);
    else
        rc = backend_call(t, &reply);
    int sent = rc == 0 ? ld_http_respond(t->req, 200, NULL, reply.body, reply.len)
                       : ld_http_respond(t->req, 502, NULL, "backend failed\n", 15);
    if (rc == 0 && sent == 0) {
        c->requests++;
        ld_hist_add(&c->latency, (uint64_t)(ld_now_ns() - t->t0));
    } else {
        c->errors++;
    }
}

/* A green thread ends: the last one, once the carrier closes, lets it finish. */
static void thread_done(carrier *c)
{
    if (--c->live == 0 && c->closing)
        uv_async_send(&c->control);
}

static void fresh_main(void *arg)
{
    task *t = arg;
    carrier *c = t->c;
    serve(t);
    free(t);
    thread_done(c);
}

/* A pooled thread: the request handed to it, else the queue's next, else wait idle. */
static void worker_main(void *arg)
{
    worker *w = arg;
    carrier *c = w->c;
    w->thread = ld_gt_self();
    for (;;) {
        task *t = w->handed;
        w->handed = NULL;
        if (!t)
            QUEUE_POP(c->queue, t);
        if (t) {
            serve(t);
            free(t);
            continue;
        }
        if (c->closing)
            break;
        QUEUE_PUSH(c->idle, w);
        ld_gt_park();
    }
    thread_done(c);
}

/* On the carrier's loop: a request read whole goes to a thread. */
static void on_request(ld_http_request *req, void *ctx)
{
    carrier *c = ctx;
    task *t = malloc(sizeof *t);
    if (!t) {
        c->errors++;
        ld_http_respond(req, 503, NULL, "out of memory\n", 14);
        return;
    }
    *t = (task){.c = c, .req = req, .t0 = ld_now_ns()};
    if (c->srv->cfg.mode == LD_POOL_FRESH) {
        if (c->live < c->srv->cfg.connections + SPARE_CONNECTIONS &&
            ld_gt_spawn(c->sched, fresh_main, t, NULL) == 0) {
            c->live++;
            return;
        }
        free(t);
        c->errors++;
        ld_http_respond(req, 503, NULL, "no green thread\n", 16);
        return;
    }
    worker *w;
    QUEUE_POP(c->idle, w);
    if (w) {
        w->handed = t;
        ld_gt_unpark(w->thread);
    } else {
        QUEUE_PUSH(c->queue, t);
    }
}

/* --- Control ------------------------------------------------------------------------ */

/* Every green thread gone: the backend's connections and the control handle go too,
 * and the scheduler runs out. */
static void carrier_finish(carrier *c)
{
    c->finished = 1;
    ld_http_conns_close(c->backend);
    uv_close((uv_handle_t *)&c->control, NULL);
}

static void carrier_close(carrier *c)
{
    c->closing = 1;
    ld_http_server_close(c->http);
    for (;;) {
        worker *w;
        QUEUE_POP(c->idle, w);
        if (!w)
            break;
        ld_gt_unpark(w->thread);
    }
}

/* A copy of the counts, then a fresh start for a new phase. */
static void carrier_snapshot(carrier *c, int phase)
{
    ld_http_server_stats hs;
    ld_http_server_stats_get(c->http, &hs);
    c->snap.requests = c->requests;
    c->snap.errors = c->errors;
    c->snap.peak_open = hs.peak_open;
    c->snap.latency = c->latency;
    ld_sched_stack_stats(c->sched, &c->snap.stacks);
    if (!phase)
        return;
    c->requests = c->errors = 0;
    ld_hist_reset(&c->latency);
    ld_sched_stack_stats_reset(c->sched);
}

static void on_control(uv_async_t *a)
{
    carrier *c = a->data;
    ld_pool_server *srv = c->srv;
    uint64_t seq = atomic_load(&srv->seq);
    if (seq != c->seen) {
        int cmd = atomic_load(&srv->cmd);
        c->seen = seq;
        if (cmd == CMD_STOP && !c->closing)
            carrier_close(c);
        else
            carrier_snapshot(c, cmd == CMD_PHASE);
        pthread_mutex_lock(&srv->lock);
        srv->acks++;
        pthread_cond_broadcast(&srv->cond);
        pthread_mutex_unlock(&srv->lock);
    }
    if (c->closing && c->live == 0 && !c->finished)
        carrier_finish(c);
}

/* Send cmd to every carrier and wait until each has handled it. */
static void command(ld_pool_server *srv, int cmd)
{
    pthread_mutex_lock(&srv->lock);
    srv->acks = 0;
    atomic_store(&srv->cmd, cmd);
    atomic_fetch_add(&srv->seq, 1);
    for (unsigned i = 0; i < srv->n; i++)
        uv_async_send(&srv->cs[i].control);
    while (srv->acks < srv->n)
        pthread_cond_wait(&srv->cond, &srv->lock);
    pthread_mutex_unlock(&srv->lock);
}

/* --- Start-up ---------------------------------------------------------------------- */

/* The first carrier takes the port; the others wait for it and bind it too. */
static int carrier_listen(carrier *c, unsigned index)
{
    ld_pool_server *srv = c->srv;
    struct sockaddr_in addr = srv->cfg.listen;
    ld_http_limits limits = {.connections =
                                 (uint32_t)srv->cfg.connections + SPARE_CONNECTIONS,
                             .requests = UINT32_MAX};
    pthread_mutex_lock(&srv->lock);
    while (index > 0 && srv->port == 0 && srv->start_rc == 0)
        pthread_cond_wait(&srv->cond, &srv->lock);
    int rc = srv->start_rc;
    if (index > 0)
        addr.sin_port = htons((uint16_t)srv->port);
    pthread_mutex_unlock(&srv->lock);
    if (rc == 0)
        rc = ld_http_server_open_shared(&c->http, ld_sched_loop(c->sched),
                                        (const struct sockaddr *)&addr, &limits,
                                        on_request, c);
    pthread_mutex_lock(&srv->lock);
    if (rc == 0 && index == 0)
        srv->port = ld_http_server_port(c->http);
    srv->start_rc = srv->start_rc ? srv->start_rc : rc;
    srv->listening += rc == 0;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->lock);
    return rc;
}

/* pooled: the carrier's share of `connections` threads, born before any request. */
static int spawn_workers(carrier *c, unsigned index)
{
    ld_pool_server *srv = c->srv;
    uint64_t share =
        srv->cfg.connections / srv->n + (index < srv->cfg.connections % srv->n);
    c->workers = calloc(share ? share : 1, sizeof *c->workers);
    if (!c->workers)
        return -ENOMEM;
    for (; c->nworkers < share; c->nworkers++) {
        worker *w = &c->workers[c->nworkers];
        w->c = c;
        int rc = ld_gt_spawn(c->sched, worker_main, w, NULL);
        if (rc != 0)
            return rc;
        c->live++;
    }
    return 0;
}

/* A carrier that cannot start says so to start, which is waiting. */
static void start_failed(ld_pool_server *srv, int rc)
{
    pthread_mutex_lock(&srv->lock);
    srv->start_rc = srv->start_rc ? srv->start_rc : rc;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->lock);
}

/* The backend's connections, the control handle, the pooled threads, then the
 * listener. */
static int carrier_body(unsigned index, ld_sched *s, void *ctx)
{
    ld_pool_server *srv = ctx;
    carrier *c = &srv->cs[index];
    c->srv = srv;
    c->sched = s;
    c->slots =
        srv->cfg.backend_conns / srv->n + (index < srv->cfg.backend_conns % srv->n);
    c->control.data = c;
    /* A backend call may take its think time and a default timeout more. */
    uint64_t timeout = (uint64_t)(srv->cfg.think_ms * 1e6) + LD_HTTP_TIMEOUT_NS;
    int rc = ld_http_conns_open(&c->backend, (const struct sockaddr *)&srv->cfg.backend,
                                srv->host, timeout);
    if (rc == 0)
        rc = uv_async_init(ld_sched_loop(s), &c->control, on_control);
    if (rc == 0 && srv->cfg.mode != LD_POOL_FRESH)
        rc = spawn_workers(c, index);
    if (rc == 0)
        return carrier_listen(c, index);
    start_failed(srv, rc);
    return rc;
}

static void *runner_main(void *arg)
{
    ld_pool_server *srv = arg;
    srv->run_rc = ld_carriers_run(&srv->cfg.carriers, carrier_body, srv);
    pthread_mutex_lock(&srv->lock);
    srv->start_rc = srv->start_rc ? srv->start_rc
                    : srv->run_rc ? srv->run_rc
                                  : -ECANCELED;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

static void phase_begin(ld_pool_server *srv)
{
    ld_pool_stats p;
    ld_pool_stats_process(&p);
    srv->minor0 = p.minor_faults;
    srv->major0 = p.major_faults;
    srv->phase_t0 = ld_now_ns();
    ld_pool_stats_reset_peak();
}

int ld_pool_server_start(ld_pool_server **out, const ld_pool_server_config *cfg)
{
    ld_pool_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return -ENOMEM;
    srv->cfg = *cfg;
    srv->cfg.carriers.trim_after = cfg->mode == LD_POOL_POOLED_TRIM ? cfg->trim_after : 0;
    srv->n = ld_carriers_count(&srv->cfg.carriers);
    snprintf(srv->target, sizeof srv->target, "/think?ms=%.17g", cfg->think_ms);
    uv_ip4_name(&cfg->backend, srv->host, sizeof srv->host);
    atomic_init(&srv->warm, 1);
    pthread_mutex_init(&srv->lock, NULL);
    pthread_cond_init(&srv->cond, NULL);
    srv->cs = calloc(srv->n, sizeof *srv->cs);
    int rc = srv->cs ? -pthread_create(&srv->runner, NULL, runner_main, srv) : -ENOMEM;
    if (rc != 0) {
        free(srv->cs);
        free(srv);
        return rc;
    }
    pthread_mutex_lock(&srv->lock);
    while (srv->listening < srv->n && srv->start_rc == 0)
        pthread_cond_wait(&srv->cond, &srv->lock);
    rc = srv->start_rc;
    pthread_mutex_unlock(&srv->lock);
    phase_begin(srv);
    *out = rc == 0 ? srv : NULL;
    return rc;
}

int ld_pool_server_port(const ld_pool_server *s)
{
    return s->port;
}

/* The carriers' snapshots, summed, with the process's counts over the phase. */
static void gather(ld_pool_server *srv, ld_pool_stats *out)
{
    ld_hist latency, capacity, frozen;
    ld_hist_reset(&latency);
    ld_hist_reset(&capacity);
    ld_hist_reset(&frozen);
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < srv->n; i++) {
        const counts *k = &srv->cs[i].snap;
        out->requests += k->requests;
        out->errors += k->errors;
        out->peak_open += k->peak_open;
        out->freezes += k->stacks.freezes;
        out->chunk_allocs += k->stacks.chunk_allocs;
        out->chunk_reuses += k->stacks.chunk_reuses;
        out->chunk_grows += k->stacks.chunk_grows;
        out->chunk_trims += k->stacks.chunk_trims;
        out->stack_allocated += k->stacks.bytes_allocated;
        out->stack_resident += k->stacks.bytes_resident;
        ld_hist_merge(&latency, &k->latency);
        ld_hist_merge(&capacity, &k->stacks.capacity);
        ld_hist_merge(&frozen, &k->stacks.frozen);
    }
    out->latency_p50_ns = ld_hist_quantile(&latency, 0.50);
    out->latency_p99_ns = ld_hist_quantile(&latency, 0.99);
    out->latency_max_ns = ld_hist_max(&latency);
    out->capacity_mean = (uint64_t)ld_hist_mean(&capacity);
    out->capacity_p99 = ld_hist_quantile(&capacity, 0.99);
    out->frozen_mean = (uint64_t)ld_hist_mean(&frozen);
    out->frozen_p99 = ld_hist_quantile(&frozen, 0.99);
    ld_pool_stats_process(out);
    out->minor_faults -= srv->minor0;
    out->major_faults -= srv->major0;
    out->seconds = (double)(ld_now_ns() - srv->phase_t0) / 1e9;
}

int ld_pool_server_phase(ld_pool_server *s, ld_pool_stats *ended)
{
    atomic_store(&s->warm, 0);
    command(s, CMD_PHASE);
    gather(s, ended);
    phase_begin(s);
    return 0;
}

int ld_pool_server_stats(ld_pool_server *s, ld_pool_stats *out)
{
    command(s, CMD_STATS);
    gather(s, out);
    return 0;
}

int ld_pool_server_stop(ld_pool_server *s)
{
    command(s, CMD_STOP);
    pthread_join(s->runner, NULL);
    int rc = s->run_rc;
    for (unsigned i = 0; i < s->n; i++)
        free(s->cs[i].workers);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s->cs);
    free(s);
    return rc;
}

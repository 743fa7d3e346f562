/* carriers.c: carrier threads for the green and stackless strategies, kept between
 * runs when the config holds them.
 *
 * A carrier thread pins itself, makes its scheduler once, and then serves rounds: it
 * waits for the round counter to move, runs the round's body and its scheduler to the
 * end, and counts itself out. A run without kept carriers is one round of carriers made
 * for it, so both kinds of run take the same path.
 */
#include "carriers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "census.h"
#include "cpus.h"
#include "watchdog.h"

typedef struct carrier {
    pthread_t thread;
    unsigned index;
    int cpu;
    int rc; /* its set-up's error, then its last round's */
    ld_carriers *crew;
} carrier;

struct ld_carriers {
    pthread_mutex_t lock;
    pthread_cond_t go;   /* the round counter moved, or the crew ends */
    pthread_cond_t done; /* the last carrier of a round (or of the set-up) is out */
    carrier *cs;
    unsigned n;     /* carriers alive; 0 before the first run */
    unsigned left;  /* carriers still in the round */
    uint64_t round; /* rounds started */
    bool ending;
    ld_carrier_body body; /* the round's */
    void *ctx;
    ld_watchdog *watchdog; /* the round's; NULL unless --trace-pinning */
    ld_sched_config sc;    /* what every carrier's scheduler was made with */
    ld_census_crew census; /* every carrier lives until the last is made */
};

unsigned ld_carriers_count(const ld_job_config *cfg)
{
    if (cfg->carriers)
        return cfg->carriers;
    return cfg->cpus && cfg->cpus->n ? cfg->cpus->n : 1;
}

/* In copy mode a spawner starts all its threads before any runs: nothing sleeps
 * before the first has run, so there is no one to wake on time, and a spawner that
 * yielded would queue its later threads behind the early ones' wake-ups (a million
 * settle trades: the last started half a second late, makespan 2.15-2.37x the critical
 * path with a yield every 64 spawns, 1.82-1.98x without). With stacks of their own it
 * yields every 64: a thread's first run then finds the stack page its spawn wrote
 * still in cache, which outweighs the late starts (a million trades: 3.4-3.8 s of CPU
 * with the yields, 4.3-5.6 s without). */
size_t ld_carriers_spawn_batch(const ld_job_config *cfg)
{
    return cfg->stack_mode == LD_STACK_OWN ? 64 : SIZE_MAX;
}

static int carrier_cpu(const ld_job_config *cfg, unsigned i)
{
    return cfg->cpus && cfg->cpus->n ? cfg->cpus->id[i % cfg->cpus->n] : -1;
}

/* This carrier is out of the round; the last one out wakes the runner. */
static void carrier_out(ld_carriers *k)
{
    pthread_mutex_lock(&k->lock);
    if (--k->left == 0)
        pthread_cond_signal(&k->done);
    pthread_mutex_unlock(&k->lock);
}

/* The next round after `seen`, or false when the crew ends. */
static bool carrier_wait(ld_carriers *k, uint64_t *seen, ld_carrier_body *body,
                         void **ctx, ld_watchdog **watchdog)
{
    pthread_mutex_lock(&k->lock);
    while (k->round == *seen && !k->ending)
        pthread_cond_wait(&k->go, &k->lock);
    bool go = !k->ending;
    *seen = k->round;
    *body = k->body;
    *ctx = k->ctx;
    *watchdog = k->watchdog;
    pthread_mutex_unlock(&k->lock);
    return go;
}

/* One round on this carrier: the body spawns, the scheduler runs it all out. */
static int carrier_round(carrier *c, ld_sched *s, ld_carrier_body body, void *ctx,
                         ld_watchdog *watchdog)
{
    int slot = watchdog ? ld_watchdog_watch(watchdog, s, c->index) : -1;
    int rc = body(c->index, s, ctx);
    int run_rc = ld_sched_run(s);
    if (watchdog)
        ld_watchdog_forget(watchdog, slot);
    return rc ? rc : run_rc;
}

/* One carrier's life: pin, make the scheduler, say it is ready, serve rounds. */
static void *carrier_main(void *arg)
{
    carrier *c = arg;
    ld_carriers *k = c->crew;
    ld_sched *s = NULL;
    if (c->cpu >= 0)
        c->rc = ld_cpus_pin_self(c->cpu);
    if (c->rc == 0)
        c->rc = ld_sched_create(&s, &k->sc);
    carrier_out(k);
    uint64_t seen = 0;
    ld_carrier_body body;
    void *ctx;
    ld_watchdog *watchdog;
    while (carrier_wait(k, &seen, &body, &ctx, &watchdog)) {
        if (s)
            c->rc = carrier_round(c, s, body, ctx, watchdog);
        carrier_out(k);
    }
    if (s)
        ld_sched_destroy(s);
    return NULL;
}

/* Start the next round (the set-up is round 0) and wait until every carrier is out;
 * the first carrier error. Called with the lock held. */
static int crew_round_locked(ld_carriers *k, ld_carrier_body body, void *ctx,
                             ld_watchdog *watchdog)
{
    k->body = body;
    k->ctx = ctx;
    k->watchdog = watchdog;
    k->left = k->n;
    k->round++;
    pthread_cond_broadcast(&k->go);
    while (k->left != 0)
        pthread_cond_wait(&k->done, &k->lock);
    for (unsigned i = 0; i < k->n; i++)
        if (k->cs[i].rc)
            return k->cs[i].rc;
    return 0;
}

/* Join every carrier; the holder is empty again. */
static void crew_stop(ld_carriers *k)
{
    pthread_mutex_lock(&k->lock);
    k->ending = true;
    pthread_cond_broadcast(&k->go);
    pthread_mutex_unlock(&k->lock);
    for (unsigned i = 0; i < k->n; i++)
        pthread_join(k->cs[i].thread, NULL);
    if (k->cs)
        ld_census_crew_destroy(&k->census);
    free(k->cs);
    k->cs = NULL;
    k->n = 0;
    k->round = 0;
    k->ending = false;
}

static ld_sched_config crew_sched_config(const ld_job_config *cfg)
{
    return (ld_sched_config){.stack_size = cfg->stack_size,
                             .mode = cfg->stack_mode,
                             .depot = cfg->stacks,
                             .trim_after = cfg->trim_after};
}

/* Whether the carriers alive are the ones cfg asks for. */
static bool crew_fits(const ld_carriers *k, const ld_job_config *cfg)
{
    ld_sched_config sc = crew_sched_config(cfg);
    if (k->n != ld_carriers_count(cfg) || sc.stack_size != k->sc.stack_size ||
        sc.mode != k->sc.mode || sc.depot != k->sc.depot ||
        sc.trim_after != k->sc.trim_after)
        return false;
    for (unsigned i = 0; i < k->n; i++)
        if (k->cs[i].cpu != carrier_cpu(cfg, i))
            return false;
    return true;
}

/* Make cfg's carriers and wait until each has its scheduler; on an error none is
 * left alive. */
static int crew_start(ld_carriers *k, const ld_job_config *cfg)
{
    unsigned n = ld_carriers_count(cfg);
    k->cs = calloc(n, sizeof *k->cs);
    if (!k->cs)
        return -ENOMEM;
    k->sc = crew_sched_config(cfg);
    ld_census_crew_init(&k->census);
    pthread_mutex_lock(&k->lock);
    int rc = 0;
    k->left = n;
    for (unsigned i = 0; i < n; i++) {
        k->cs[i] = (carrier){.index = i, .cpu = carrier_cpu(cfg, i), .crew = k};
        int err =
            ld_census_spawn(&k->census, &k->cs[i].thread, NULL, carrier_main, &k->cs[i]);
        if (err) {
            rc = -err;
            k->left -= n - i;
            break;
        }
        k->n++;
    }
    ld_census_crew_complete(&k->census);
    while (k->left != 0)
        pthread_cond_wait(&k->done, &k->lock);
    for (unsigned i = 0; rc == 0 && i < k->n; i++)
        rc = k->cs[i].rc;
    pthread_mutex_unlock(&k->lock);
    if (rc)
        crew_stop(k);
    return rc;
}

int ld_carriers_keep(ld_carriers **out)
{
    ld_carriers *k = calloc(1, sizeof *k);
    if (!k)
        return -ENOMEM;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->go, NULL);
    pthread_cond_init(&k->done, NULL);
    *out = k;
    return 0;
}

void ld_carriers_end(ld_carriers *k)
{
    if (!k)
        return;
    crew_stop(k);
    pthread_cond_destroy(&k->done);
    pthread_cond_destroy(&k->go);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* The kept carriers when they fit, others made in their place when not. */
static int crew_ready(ld_carriers *k, const ld_job_config *cfg)
{
    if (k->n && crew_fits(k, cfg))
        return 0;
    if (k->n)
        crew_stop(k);
    return crew_start(k, cfg);
}

int ld_carriers_run(const ld_job_config *cfg, ld_carrier_body body, void *ctx)
{
    ld_carriers *k = cfg->kept, *own = NULL;
    int rc = k ? 0 : ld_carriers_keep(&own);
    if (own)
        k = own;
    if (rc == 0)
        rc = crew_ready(k, cfg);
    ld_watchdog *watchdog = NULL;
    if (rc == 0 && cfg->trace_pinning_ns)
        rc = ld_watchdog_start(&watchdog, cfg->trace_pinning_ns, stderr);
    if (rc == 0) {
        pthread_mutex_lock(&k->lock);
        rc = crew_round_locked(k, body, ctx, watchdog);
        pthread_mutex_unlock(&k->lock);
    }
    if (watchdog)
        ld_watchdog_stop(watchdog);
    ld_carriers_end(own);
    return rc;
}

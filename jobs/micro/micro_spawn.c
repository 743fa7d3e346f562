/* micro_spawn.c: spawn plus join of an empty green thread, with its stack cached,
 * against pthread_create plus pthread_join of an empty OS thread. */
#include "metrics.h"
#include "micro.h"

#include <pthread.h>

#define SPAWN_GREEN 200000L
#define SPAWN_OS 2000L
#define SPAWN_REPS 3

static void green_empty(void *arg)
{
    (void)arg;
}

static void *os_empty(void *arg)
{
    return arg;
}

typedef struct spawn_loop {
    int64_t ns;
    int rc;
} spawn_loop;

/* The first spawn maps a stack; every later one finds it in the cache. */
static void green_spawns(ld_sched *s, void *arg)
{
    spawn_loop *l = arg;
    int64_t t0 = ld_now_ns();
    for (long i = 0; i < SPAWN_GREEN && l->rc == 0; i++) {
        ld_gt *g;
        l->rc = ld_gt_spawn(s, green_empty, NULL, &g);
        if (l->rc == 0)
            l->rc = ld_gt_join(g);
    }
    l->ns = ld_now_ns() - t0;
}

static int os_spawns(int64_t *ns)
{
    int64_t t0 = ld_now_ns();
    for (long i = 0; i < SPAWN_OS; i++) {
        pthread_t t;
        int err = pthread_create(&t, NULL, os_empty, NULL);
        if (err)
            return -err;
        pthread_join(t, NULL);
    }
    *ns = ld_now_ns() - t0;
    return 0;
}

int ld_micro_spawn(const ld_job_input *in)
{
    int64_t green = INT64_MAX, os = INT64_MAX;
    for (int r = 0; r < SPAWN_REPS; r++) {
        spawn_loop l = {0, 0};
        int rc = ld_micro_run_green(NULL, green_spawns, &l);
        if (rc || l.rc)
            return rc ? rc : l.rc;
        int64_t o = INT64_MAX;
        if ((rc = os_spawns(&o)) != 0)
            return rc;
        green = l.ns < green ? l.ns : green;
        os = o < os ? o : os;
    }
    double g_ns = (double)green / SPAWN_GREEN, o_ns = (double)os / SPAWN_OS;
    ld_figure_add(in->figures, "green_ns", g_ns, "ns");
    ld_figure_add(in->figures, "pthread_ns", o_ns, "ns");
    ld_figure_add(in->figures, "speedup", o_ns / g_ns, "x");
    return 0;
}

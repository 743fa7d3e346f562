/* watchdog.c: a sampling watchdog for blocked carriers, with backtraces taken on the
 * blocked carrier by a signal. */
#include "watchdog.h"

#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"

#define LD_WATCH_SLOTS 1024
#define LD_WATCH_FRAMES 32
#define LD_WATCH_SIGNAL SIGURG /* ignored by default, unused by MPI */

typedef struct watch_slot {
    const ld_sched *sched; /* NULL: free */
    pthread_t thread;
    pid_t tid; /* the carrier's kernel thread id, to read its scheduling state */
    unsigned index;
    uint64_t last_id, last_switches;
    int64_t since_ns;  /* when the carrier was first seen in this state */
    int signalled;     /* a backtrace was asked for in this block */
    atomic_int frames; /* written by the signal handler, -1 until then */
    void *frame[LD_WATCH_FRAMES];
} watch_slot;

struct ld_watchdog {
    pthread_t thread;
    pthread_mutex_t lock; /* guards the slots against watch and forget */
    atomic_int stop;
    int64_t threshold_ns;
    FILE *out;
    int reports;
    watch_slot slot[LD_WATCH_SLOTS];
};

/* The slot the signal handler fills: set before pthread_kill, cleared after. A signal
 * handler has no argument to carry it, so this is the one process-wide variable. */
static _Atomic(watch_slot *) pending_slot;

/* Runs on the blocked carrier, on the green thread's stack: the backtrace is the green
 * thread's own. backtrace() was called once at start, so it does not allocate here. */
static void take_backtrace(int sig)
{
    (void)sig;
    watch_slot *s = atomic_load(&pending_slot);
    if (s)
        atomic_store(&s->frames, backtrace(s->frame, LD_WATCH_FRAMES));
}

static void report(ld_watchdog *w, watch_slot *s, int64_t blocked_ns)
{
    fprintf(w->out, "loomdist: carrier %u pinned by green thread %llu for %.1f ms at:\n",
            s->index, (unsigned long long)s->last_id, (double)blocked_ns / 1e6);
    /* The first two frames are the signal handler and the kernel's signal trampoline. */
    int n = atomic_load(&s->frames) - 2;
    fflush(w->out);
    if (n > 0)
        backtrace_symbols_fd(s->frame + 2, n, fileno(w->out));
    else
        fprintf(w->out, "    (no backtrace: the carrier did not answer in time)\n");
    if (w->reports++ == 0)
        fprintf(w->out,
                "    (resolve +0x offsets with: addr2line -f -e BINARY OFFSET)\n");
}

/* Ask the blocked carrier for its backtrace and wait briefly for the answer. */
static void request_backtrace(watch_slot *s)
{
    atomic_store(&s->frames, -1);
    atomic_store(&pending_slot, s);
    pthread_kill(s->thread, LD_WATCH_SIGNAL);
    struct timespec tick = {0, 100000};
    for (int i = 0; i < 100 && atomic_load(&s->frames) < 0; i++)
        nanosleep(&tick, NULL);
    atomic_store(&pending_slot, NULL);
    s->signalled = 1;
}

/* Is the carrier asleep in the kernel? A carrier that made no progress but is
 * runnable was preempted (a busy machine), not blocked, and is no pinning. */
static int carrier_sleeping(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *state = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return state && state[1] == ' ' && (state[2] == 'S' || state[2] == 'D');
}

/* One look at one carrier: a change ends any block (and reports it if it was long). */
static void look(ld_watchdog *w, watch_slot *s, int64_t now)
{
    uint64_t id, switches;
    ld_sched_observe(s->sched, &id, &switches);
    if (id != s->last_id || switches != s->last_switches) {
        if (s->signalled)
            report(w, s, now - s->since_ns);
        s->last_id = id, s->last_switches = switches;
        s->since_ns = now, s->signalled = 0;
        return;
    }
    if (id != 0 && !s->signalled && now - s->since_ns >= w->threshold_ns &&
        carrier_sleeping(s->tid))
        request_backtrace(s);
}

static void *watchdog_main(void *arg)
{
    ld_watchdog *w = arg;
    int64_t period = w->threshold_ns / 4 > 1000000 ? w->threshold_ns / 4 : 1000000;
    struct timespec tick = {period / 1000000000, period % 1000000000};
    while (!atomic_load(&w->stop)) {
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&w->lock);
        int64_t now = ld_now_ns();
        for (int i = 0; i < LD_WATCH_SLOTS; i++)
            if (w->slot[i].sched)
                look(w, &w->slot[i], now);
        pthread_mutex_unlock(&w->lock);
    }
    return NULL;
}

int ld_watchdog_start(ld_watchdog **out, int64_t threshold_ns, FILE *report_to)
{
    void *warm[1];
    backtrace(warm, 1); /* loads the unwinder now, not in the signal handler */
    struct sigaction sa = {.sa_handler = take_backtrace, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(LD_WATCH_SIGNAL, &sa, NULL) != 0)
        return -errno;
    ld_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->threshold_ns = threshold_ns;
    w->out = report_to;
    pthread_mutex_init(&w->lock, NULL);
    int rc = pthread_create(&w->thread, NULL, watchdog_main, w);
    if (rc) {
        free(w);
        return -rc;
    }
    *out = w;
    return 0;
}

int ld_watchdog_watch(ld_watchdog *w, const ld_sched *s, unsigned index)
{
    pthread_mutex_lock(&w->lock);
    int slot = 0;
    while (slot < LD_WATCH_SLOTS && w->slot[slot].sched)
        slot++;
    if (slot < LD_WATCH_SLOTS) {
        watch_slot *ws = &w->slot[slot];
        memset(ws, 0, sizeof *ws);
        ws->sched = s, ws->thread = pthread_self(), ws->index = index;
        ws->tid = (pid_t)syscall(SYS_gettid);
        ws->since_ns = ld_now_ns();
    }
    pthread_mutex_unlock(&w->lock);
    return slot < LD_WATCH_SLOTS ? slot : -ENOSPC;
}

void ld_watchdog_forget(ld_watchdog *w, int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&w->lock);
    watch_slot *s = &w->slot[slot];
    if (s->signalled)
        report(w, s, ld_now_ns() - s->since_ns);
    s->sched = NULL;
    pthread_mutex_unlock(&w->lock);
}

int ld_watchdog_stop(ld_watchdog *w)
{
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    int reports = w->reports;
    pthread_mutex_destroy(&w->lock);
    free(w);
    return reports;
}

/* metrics.c: time, thread count, peak RSS and CPU of one strategy run. */
#include "metrics.h"

#include "census.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct ld_probe {
    pthread_t sampler;
    atomic_int stop;
    unsigned period_us;
    int peak_threads; /* written by the sampler only, read after the join */
    struct rusage ru0;
    int64_t t0;
};

const ld_metric_desc ld_metrics_fields[LD_METRICS_N] = {
    {"wall_ns", "ns", "the rank's wall time of the iteration"},
    {"peak_threads", "threads",
     "OS threads at once, the sampler excluded: the larger of the sampled peak and 1 + "
     "the threads the strategy made and held"},
    {"peak_rss_kib", "KiB", "peak resident set (VmHWM, reset at the start)"},
    {"utime_us", "us", "user CPU time"},
    {"stime_us", "us", "system CPU time"},
    {"nvcsw", "switches", "voluntary context switches"},
    {"nivcsw", "switches", "involuntary context switches"},
};

int64_t ld_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A file of /proc/self in buf, NUL-terminated, by one read(2): a proc file is made
 * whole at each read, and one read keeps the sampler cheap enough to run every
 * millisecond. 0, or -1 if it cannot be read. */
static int proc_read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t len = read(fd, buf, size - 1);
    close(fd);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    return 0;
}

/* Read one "Name:   value" line of /proc/self/status; -1 when absent. */
static int64_t proc_status_field(const char *name)
{
    char buf[4096];
    if (proc_read("/proc/self/status", buf, sizeof buf) != 0)
        return -1;
    size_t nlen = strlen(name);
    for (char *line = buf; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, name, nlen) == 0 && line[nlen] == ':')
            return strtoll(line + nlen + 1, NULL, 10);
    }
    return -1;
}

/* The thread count is the 20th field of /proc/self/stat, one short line: the sampler
 * reads it every millisecond, and on a rank of one CPU it takes that CPU from the run
 * while it parses. The 2nd field, the command in parentheses, may hold spaces, so the
 * count starts after its last ')'. */
int ld_proc_threads(void)
{
    char buf[1024];
    if (proc_read("/proc/self/stat", buf, sizeof buf) != 0)
        return -1;
    const char *at = strrchr(buf, ')');
    for (int field = 2; at && field < 20; field++)
        at = strchr(at + 1, ' ');
    return at ? (int)strtol(at + 1, NULL, 10) : -1;
}

int64_t ld_proc_rss_kib(void)
{
    return proc_status_field("VmRSS");
}

long ld_proc_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    long n = 0;
    int c;
    if (!f)
        return -1;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0 and later), so
 * the peak we read afterwards belongs to this strategy, not to an earlier one. */
static void reset_peak_rss(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    /* On an old kernel the write fails and the peak covers the process so far: still an
     * upper bound, so it is not an error. */
    ssize_t written = write(fd, "5", 1);
    (void)written;
    close(fd);
}

/* The sampler counts threads until told to stop. It is itself one of them, so it
 * subtracts one from every sample. */
static void *sampler_main(void *arg)
{
    ld_probe *p = arg;
    struct timespec period = {.tv_sec = p->period_us / 1000000,
                              .tv_nsec = (long)(p->period_us % 1000000) * 1000};
    while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
        int n = ld_proc_threads() - 1;
        if (n > p->peak_threads)
            p->peak_threads = n;
        nanosleep(&period, NULL);
    }
    return NULL;
}

int ld_probe_start(ld_probe **out, unsigned period_us)
{
    ld_probe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->period_us = period_us ? period_us : 1000;
    p->peak_threads = ld_proc_threads();
    atomic_init(&p->stop, 0);
    reset_peak_rss();
    ld_census_reset();
    int rc = pthread_create(&p->sampler, NULL, sampler_main, p);
    if (rc != 0) {
        free(p);
        return -rc;
    }
    getrusage(RUSAGE_SELF, &p->ru0);
    p->t0 = ld_now_ns();
    *out = p;
    return 0;
}

/* The larger of two lower bounds on the threads alive at once: what the sampler saw,
 * and the strategy's counted threads plus the one that runs the strategy and stops the
 * probe. The count is exact where samples miss a short run; the samples add what only
 * they see, such as libuv's and MPI's own threads. */
static int64_t peak_threads(const ld_probe *p, int last)
{
    int sampled = last > p->peak_threads ? last : p->peak_threads;
    int counted = 1 + ld_census_peak();
    return sampled > counted ? sampled : counted;
}

static int64_t tv_us(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

int ld_probe_stop(ld_probe *p, ld_metrics *m)
{
    m->wall_ns = ld_now_ns() - p->t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* One last sample before the sampler goes, so a run shorter than the period still
     * sees its threads. */
    int last = ld_proc_threads() - 1;
    atomic_store(&p->stop, 1);
    pthread_join(p->sampler, NULL);
    m->peak_threads = peak_threads(p, last);
    m->peak_rss_kib = proc_status_field("VmHWM");
    m->utime_us = tv_us(ru.ru_utime) - tv_us(p->ru0.ru_utime);
    m->stime_us = tv_us(ru.ru_stime) - tv_us(p->ru0.ru_stime);
    m->nvcsw = ru.ru_nvcsw - p->ru0.ru_nvcsw;
    m->nivcsw = ru.ru_nivcsw - p->ru0.ru_nivcsw;
    free(p);
    return 0;
}

/* The 0-based index of the nearest-rank q-th percentile of n values. */
static size_t nearest_rank(size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return (rank < 1 ? 1 : rank > n ? n : rank) - 1;
}

/* The percentiles are found a digit of this many bits at a time. */
#define PCT_DIGIT 16
#define PCT_DIGITS (1u << PCT_DIGIT)

/* u's bits from `from` up: 0 when from is 64. */
static uint64_t bits_from(uint64_t u, int from)
{
    return from >= 64 ? 0 : u >> from;
}

/* One digit of each wanted value, the bits [shift, shift + width) of its distance from
 * lo: the values whose higher bits are those found so far (known[k]) are counted by
 * digit, and the digit where rank[k] falls is the wanted one's. rank[k] becomes its
 * rank among the values that share the digit. */
static void pct_digit(size_t n, ld_value_fn get, const void *ctx, uint64_t lo, int shift,
                      int width, uint64_t known[2], size_t rank[2], size_t *count)
{
    memset(count, 0, 2 * PCT_DIGITS * sizeof *count);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)get(ctx, i) - lo;
        unsigned digit = (unsigned)(u >> shift) & ((1u << width) - 1);
        for (int k = 0; k < 2; k++)
            if (bits_from(u, shift + width) == known[k])
                count[k * PCT_DIGITS + digit]++;
    }
    for (int k = 0; k < 2; k++) {
        const size_t *c = count + k * PCT_DIGITS;
        unsigned d = 0;
        while (rank[k] >= c[d])
            rank[k] -= c[d++];
        known[k] = known[k] << width | d;
    }
}

/* A radix selection: one pass for the least and the largest value, then one a digit
 * of their distance's bits, from the top, for the median and the 99th percentile at
 * once; latencies of under 4 s take two. The values are read where they lie, and
 * never copied: at a million trades a copy was the largest thing the process held
 * after its run. */
int ld_percentiles(size_t n, ld_value_fn get, const void *ctx, ld_pct3 *out)
{
    *out = (ld_pct3){0, 0, 0};
    if (n == 0)
        return 0;
    size_t *count = malloc(2 * PCT_DIGITS * sizeof *count);
    if (count == NULL)
        return -ENOMEM;
    int64_t lo = get(ctx, 0), hi = lo;
    for (size_t i = 1; i < n; i++) {
        int64_t v = get(ctx, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo, known[2] = {0, 0};
    size_t rank[2] = {nearest_rank(n, 0.50), nearest_rank(n, 0.99)};
    int top = range == 0 ? 0 : 64 - __builtin_clzll(range);
    for (int shift = top; shift > 0;) {
        int width = shift < PCT_DIGIT ? shift : PCT_DIGIT;
        shift -= width;
        pct_digit(n, get, ctx, (uint64_t)lo, shift, width, known, rank, count);
    }
    free(count);
    out->p50 = (int64_t)((uint64_t)lo + known[0]);
    out->p99 = (int64_t)((uint64_t)lo + known[1]);
    out->max = hi;
    return 0;
}

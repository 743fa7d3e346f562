/* micro_counters.c: instructions and cycles in user space, from perf_event_open, for
 * the micro figures that can show them. Many virtual machines and containers expose
 * no hardware counters (perf stat then says "<not supported>"), and a
 * perf_event_paranoid above 2 refuses them: the open fails, and the caller says so. */
#include "micro.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One hardware counter of the calling thread, user space only (what paranoid level 2
 * allows), counting from now; with inherit, of the threads it creates from now on
 * too, whose counts join its own as they exit. */
static int counter_open(uint64_t config, int inherit)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.inherit = inherit != 0;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

int ld_micro_counters_open(ld_micro_counters *c, int inherit)
{
    c->fd[0] = counter_open(PERF_COUNT_HW_INSTRUCTIONS, inherit);
    c->fd[1] = c->fd[0] < 0 ? c->fd[0] : counter_open(PERF_COUNT_HW_CPU_CYCLES, inherit);
    if (c->fd[1] < 0) {
        int rc = c->fd[1];
        ld_micro_counters_close(c);
        return rc;
    }
    return 0;
}

/* Zeros for counters that are not open, or that a read refuses. */
void ld_micro_counters_read(const ld_micro_counters *c, uint64_t *instructions,
                            uint64_t *cycles)
{
    uint64_t v[2] = {0, 0};

    for (int i = 0; i < 2; i++)
        if (c->fd[i] >= 0 && read(c->fd[i], &v[i], sizeof v[i]) != sizeof v[i])
            v[i] = 0;
    *instructions = v[0];
    *cycles = v[1];
}

void ld_micro_counters_close(ld_micro_counters *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->fd[i] >= 0)
            close(c->fd[i]);
        c->fd[i] = -1;
    }
}

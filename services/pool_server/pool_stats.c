/* pool_stats.c: the pooling server's counts as one line, and the process's own. */
#include "pool_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Every field but seconds is a whole number: one table names them all. */
#define FIELD(f)                                                                         \
    {                                                                                    \
#f, offsetof(ld_pool_stats, f)                                                   \
    }
static const struct {
    const char *key;
    size_t offset;
} fields[] = {
    FIELD(requests),
    FIELD(errors),
    FIELD(latency_p50_ns),
    FIELD(latency_p99_ns),
    FIELD(latency_max_ns),
    FIELD(peak_open),
    FIELD(freezes),
    FIELD(chunk_allocs),
    FIELD(chunk_reuses),
    FIELD(chunk_grows),
    FIELD(chunk_trims),
    FIELD(stack_allocated),
    FIELD(stack_resident),
    FIELD(capacity_mean),
    FIELD(capacity_p99),
    FIELD(frozen_mean),
    FIELD(frozen_p99),
    FIELD(minor_faults),
    FIELD(major_faults),
    FIELD(rss_peak),
    FIELD(cgroup_peak),
    FIELD(limit_hits),
    FIELD(oom),
    FIELD(oom_kills),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static uint64_t *field_at(ld_pool_stats *s, size_t k)
{
    return (uint64_t *)((char *)s + fields[k].offset);
}

int ld_pool_stats_format(const ld_pool_stats *s, char *buf, size_t size)
{
    int len = snprintf(buf, size, "seconds=%.6f", s->seconds);
    for (size_t k = 0; k < NFIELDS && len >= 0 && (size_t)len < size; k++)
        len += snprintf(buf + len, size - (size_t)len, " %s=%" PRIu64, fields[k].key,
                        *field_at((ld_pool_stats *)s, k));
    return len >= 0 && (size_t)len < size ? len : -ENOSPC;
}

/* One "key=value" pair into s. */
static int parse_pair(const char *key, size_t klen, const char *value, ld_pool_stats *s)
{
    char *end;
    errno = 0;
    if (klen == 7 && strncmp(key, "seconds", 7) == 0) {
        s->seconds = strtod(value, &end);
        return end == value || errno ? -EINVAL : 0;
    }
    for (size_t k = 0; k < NFIELDS; k++) {
        if (strlen(fields[k].key) == klen && strncmp(fields[k].key, key, klen) == 0) {
            *field_at(s, k) = strtoull(value, &end, 10);
            return end == value || errno ? -EINVAL : 0;
        }
    }
    return -EINVAL;
}

int ld_pool_stats_parse(const char *line, ld_pool_stats *s)
{
    memset(s, 0, sizeof *s);
    for (const char *at = line; *at;) {
        at += strspn(at, " \n");
        const char *eq = strchr(at, '=');
        if (*at == '\0')
            break;
        if (!eq || parse_pair(at, (size_t)(eq - at), eq + 1, s) != 0)
            return -EINVAL;
        at = eq + 1 + strcspn(eq + 1, " \n");
    }
    return 0;
}

/* VmHWM from /proc/self/status, in bytes; 0 where it cannot be read. */
static uint64_t vm_hwm(void)
{
    char line[256];
    uint64_t kib = 0;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %" SCNu64, &kib) == 1)
            break;
    fclose(f);
    return kib * 1024;
}

void ld_pool_stats_process(ld_pool_stats *s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->minor_faults = (uint64_t)ru.ru_minflt;
    s->major_faults = (uint64_t)ru.ru_majflt;
    s->rss_peak = vm_hwm();
}

/* Writing 5 to clear_refs resets the peak resident set to the current one. */
void ld_pool_stats_reset_peak(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = write(fd, "5", 1);
    (void)n; /* an older kernel refuses it: the peak then covers the whole run */
    close(fd);
}

/* confine.c: granting a resource profile, an affinity mask and a memory cgroup.
 *
 * The process's memory group is found as the kernel states it: /proc/self/cgroup
 * names the group within its hierarchy, /proc/self/mountinfo where that hierarchy is
 * mounted. A v1 hierarchy with the memory controller is taken first, since a machine
 * that mounts one keeps memory out of the v2 tree; otherwise the v2 tree, where the
 * child needs the memory controller enabled for it.
 */
#include "confine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The limit file and the peak file of each cgroup version, indexed by it. */
static const char *const limit_file[3] = {NULL, "memory.limit_in_bytes", "memory.max"};
static const char *const peak_file[3] = {NULL, "memory.max_usage_in_bytes",
                                         "memory.peak"};

/* The calling thread's affinity mask, as the CPUs in it. */
static int profile_read_mask(ld_cpus *out)
{
    cpu_set_t mask;
    int rc = pthread_getaffinity_np(pthread_self(), sizeof mask, &mask);
    if (rc != 0)
        return -rc;
    out->n = 0;
    for (int c = 0; c < CPU_SETSIZE && out->n < LD_CPUS_MAX; c++)
        if (CPU_ISSET(c, &mask))
            out->id[out->n++] = c;
    return out->n ? 0 : -ENOENT;
}

/* Write text into dir/name, as one write(2), since a cgroup file takes one value per
 * write. */
static int profile_write(const char *dir, const char *name, const char *text)
{
    char path[LD_CONFINE_PATH + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int rc = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return rc;
}

/* The number dir/name holds, or at key's line of it when key is not NULL ("max" is
 * UINT64_MAX, as v2 writes no limit). */
static int profile_read_u64(const char *dir, const char *name, const char *key,
                            uint64_t *out)
{
    char path[LD_CONFINE_PATH + 64], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int rc = -ENOENT;
    size_t klen = key ? strlen(key) : 0;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        const char *v = line;
        if (key && (strncmp(line, key, klen) != 0 || line[klen] != ' '))
            continue;
        v += key ? klen + 1 : 0;
        *out = strncmp(v, "max", 3) == 0 ? UINT64_MAX : strtoull(v, NULL, 10);
        rc = 0;
    }
    fclose(f);
    return rc;
}

/* Whether the comma-separated list holds word. */
static int profile_listed(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *at = list; at; at = strchr(at, ',')) {
        at += *at == ',';
        if (strncmp(at, word, len) == 0 &&
            (at[len] == ',' || at[len] == '\0' || at[len] == '\n' || at[len] == ' '))
            return 1;
    }
    return 0;
}

/* The path within its hierarchy of the process's group of cgroup version v: v1, the
 * hierarchy whose controllers list memory; v2, the unified one ("0::"). */
static int profile_group_path(int v, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -errno;
    char line[LD_CONFINE_PATH + 64];
    int rc = -ENOENT;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path)
            continue;
        *ctl++ = '\0';
        *path++ = '\0';
        path[strcspn(path, "\n")] = '\0';
        int unified = strcmp(line, "0") == 0 && *ctl == '\0';
        if (v == 2 ? unified : !unified && profile_listed(ctl, "memory")) {
            snprintf(out, len, "%s", path);
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

/* Where the hierarchy of version v is mounted, and the group of the hierarchy that
 * mount shows as its root. mountinfo's fields: id parent dev root mountpoint options
 * [optional...] - fstype source superoptions. */
static int profile_mount(int v, char *mount, char *root, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -errno;
    char line[2048], fs_root[LD_CONFINE_PATH], point[LD_CONFINE_PATH];
    int rc = -ENOENT;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        char *dash = strstr(line, " - "), fstype[32], super[512] = "";
        if (!dash || sscanf(dash, " - %31s %*s %511s", fstype, super) < 1 ||
            sscanf(line, "%*s %*s %*s %511s %511s", fs_root, point) != 2)
            continue;
        if (v == 2 ? strcmp(fstype, "cgroup2") == 0
                   : strcmp(fstype, "cgroup") == 0 && profile_listed(super, "memory")) {
            snprintf(mount, len, "%s", point);
            snprintf(root, len, "%s", fs_root);
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

/* Whether LOOMDIST_CGROUP lets cgroup version v be tried: "v1" or "v2" alone, "none"
 * neither; unset, both. */
static int profile_version_allowed(int v)
{
    const char *only = getenv("LOOMDIST_CGROUP");
    if (!only || !*only)
        return 1;
    return (v == 1 && strcmp(only, "v1") == 0) || (v == 2 && strcmp(only, "v2") == 0);
}

/* The folder of the process's memory group and its cgroup version, or -ENOENT. */
static int profile_home(char *home, size_t len, int *version)
{
    char path[LD_CONFINE_PATH], mount[LD_CONFINE_PATH], root[LD_CONFINE_PATH];
    for (int v = 1; v <= 2; v++) {
        if (!profile_version_allowed(v) ||
            profile_group_path(v, path, sizeof path) != 0 ||
            profile_mount(v, mount, root, sizeof mount) != 0)
            continue;
        size_t rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
        const char *rel = strncmp(path, root, rlen) == 0 ? path + rlen : path;
        if (snprintf(home, len, "%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel) >=
            (int)len)
            return -ENAMETOOLONG;
        *version = v;
        return 0;
    }
    return -ENOENT;
}

/* The most memory a group under home can be given: the machine's, or less where home
 * or a group above it is limited (v1 states the nearest limit as
 * hierarchical_memory_limit; v2, home's own memory.max). */
static uint64_t profile_mem_available(const char *home, int version)
{
    uint64_t machine =
        (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t limit = UINT64_MAX;
    if (version == 1)
        profile_read_u64(home, "memory.stat", "hierarchical_memory_limit", &limit);
    else
        profile_read_u64(home, "memory.max", NULL, &limit);
    return limit < machine ? limit : machine;
}

/* The first `want` CPUs of those offered (0: all), clamped to what is offered. */
static void profile_grant_cpus(ld_confine *p, const ld_cpus *offered, unsigned want)
{
    unsigned n = want == 0 || want > offered->n ? offered->n : want;
    if (want > offered->n)
        p->clamped |= LD_CONFINE_CLAMPED_CPUS;
    p->cpus.n = n;
    memcpy(p->cpus.id, offered->id, n * sizeof offered->id[0]);
}

/* A process the OOM killer ended inside its group could not remove it: remove the
 * groups under home of loomdist processes that no longer exist. */
static void profile_sweep(const char *home)
{
    DIR *d = opendir(home);
    if (!d)
        return;
    for (const struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        if (strncmp(e->d_name, "loomdist-", 9) != 0)
            continue;
        long pid = strtol(e->d_name + 9, &end, 10);
        if (*end != '\0' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char group[LD_CONFINE_PATH + 300];
        snprintf(group, sizeof group, "%s/%s", home, e->d_name);
        rmdir(group);
    }
    closedir(d);
}

/* Make the child group, limit it and move the process in. A v2 child has the memory
 * controller only where home enables it for its children: ask for it, since that is
 * allowed where home holds no process of its own. */
static int profile_cgroup_enter(ld_confine *p, uint64_t limit)
{
    if (snprintf(p->group, sizeof p->group, "%s/loomdist-%ld", p->home, (long)getpid()) >=
        (int)sizeof p->group)
        return -ENAMETOOLONG;
    profile_sweep(p->home);
    if (p->cgroup_version == 2)
        profile_write(p->home, "cgroup.subtree_control", "+memory");
    if (mkdir(p->group, 0755) != 0 &&
        (errno != EEXIST || rmdir(p->group) != 0 || mkdir(p->group, 0755) != 0))
        return -errno;
    char text[32], pid[32];
    snprintf(text, sizeof text, "%" PRIu64, limit);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    int rc = profile_write(p->group, limit_file[p->cgroup_version], text);
    if (rc == 0)
        rc = profile_write(p->group, "cgroup.procs", pid);
    if (rc != 0) {
        rmdir(p->group);
        p->group[0] = '\0';
    }
    return rc;
}

/* The memory half: a limit where a group can be made, else none, said as a clamp. */
static void profile_grant_memory(ld_confine *p, uint64_t want)
{
    if (want == 0)
        return;
    int version = 0;
    uint64_t grant = 0;
    if (profile_home(p->home, sizeof p->home, &version) == 0) {
        uint64_t avail = profile_mem_available(p->home, version);
        grant = want < avail ? want : avail;
        p->cgroup_version = version;
        if (profile_cgroup_enter(p, grant) != 0) {
            p->cgroup_version = 0;
            grant = 0;
        }
    }
    p->mem_limit = grant;
    if (grant < want)
        p->clamped |= LD_CONFINE_CLAMPED_MEMORY;
}

int ld_confine_enter(ld_confine *p, const ld_cpus *offered, unsigned cpus,
                     uint64_t mem_bytes)
{
    if (!p || !offered || offered->n == 0 || offered->n > LD_CPUS_MAX)
        return -EINVAL;
    memset(p, 0, sizeof *p);
    p->cpus_asked = cpus;
    p->mem_asked = mem_bytes;
    int rc = profile_read_mask(&p->saved);
    if (rc != 0)
        return rc;
    profile_grant_cpus(p, offered, cpus);
    if ((rc = ld_cpus_bind_self(&p->cpus)) != 0)
        return rc;
    profile_grant_memory(p, mem_bytes);
    return 0;
}

uint64_t ld_confine_mem_peak(const ld_confine *p)
{
    uint64_t peak = 0;
    if (p->group[0])
        profile_read_u64(p->group, peak_file[p->cgroup_version], NULL, &peak);
    return peak;
}

/* A group's counters at the limit, from the files its version keeps them in. */
static void profile_group_events(const char *group, int version, ld_confine_events *out)
{
    *out = (ld_confine_events){0};
    if (version == 1) {
        profile_read_u64(group, "memory.failcnt", NULL, &out->limit_hits);
        profile_read_u64(group, "memory.oom_control", "under_oom", &out->oom);
        profile_read_u64(group, "memory.oom_control", "oom_kill", &out->oom_kills);
    } else if (version == 2) {
        profile_read_u64(group, "memory.events", "max", &out->limit_hits);
        profile_read_u64(group, "memory.events", "oom", &out->oom);
        profile_read_u64(group, "memory.events", "oom_kill", &out->oom_kills);
    }
}

void ld_confine_mem_events(const ld_confine *p, ld_confine_events *out)
{
    profile_group_events(p->group, p->group[0] ? p->cgroup_version : 0, out);
}

/* Threads that have just exited can hold a v1 group for a moment after the move:
 * rmdir is retried for up to about 100 ms. */
static int profile_remove_group(const char *group)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 2000000};
    for (int tries = 0; tries < 50; tries++) {
        if (rmdir(group) == 0)
            return 0;
        if (errno != EBUSY)
            return -errno;
        nanosleep(&pause, NULL);
    }
    return -EBUSY;
}

int ld_confine_leave(ld_confine *p)
{
    int rc = ld_cpus_bind_self(&p->saved);
    if (p->group[0]) {
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        int moved = profile_write(p->home, "cgroup.procs", pid);
        int removed = moved == 0 ? profile_remove_group(p->group) : moved;
        rc = rc ? rc : removed;
        p->group[0] = '\0';
    }
    return rc;
}

int ld_confine_reap(long pid, ld_confine_events *events, uint64_t *peak)
{
    char home[LD_CONFINE_PATH], group[LD_CONFINE_PATH + 32];
    int version = 0, rc = profile_home(home, sizeof home, &version);
    if (rc != 0)
        return rc;
    snprintf(group, sizeof group, "%s/loomdist-%ld", home, pid);
    if (access(group, F_OK) != 0)
        return -ENOENT;
    profile_group_events(group, version, events);
    *peak = 0;
    profile_read_u64(group, peak_file[version], NULL, peak);
    return profile_remove_group(group);
}

/* spawn_child.c: posix_spawn with piped stdin and stdout, bounded reads of the child's
 * output, and a bounded wait (spawn_child.h).
 */
#include "spawn_child.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* --- Starting ---------------------------------------------------------------------- */

/* The child's descriptors: the pipes (or /dev/null) as 0 and 1, nothing above 2. */
static int child_fds(posix_spawn_file_actions_t *fa, int in_read, int out_write)
{
    int rc = in_read >= 0
                 ? posix_spawn_file_actions_adddup2(fa, in_read, 0)
                 : posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(fa, out_write, 1);
    if (rc == 0)
        rc = posix_spawn_file_actions_addclosefrom_np(fa, 3);
    return rc;
}

/* The child starts with no signal blocked and SIGPIPE, SIGINT and SIGTERM at their
 * defaults, whatever this thread blocks or this process ignores. */
static int child_signals(posix_spawnattr_t *attr)
{
    sigset_t none, defaults;

    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    int rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(attr, &defaults);
    if (rc == 0)
        rc = posix_spawnattr_setflags(attr,
                                      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return rc;
}

/* posix_spawnp with the descriptors and signals above; a positive errno. */
static int spawn_with(pid_t *pid, char *const argv[], int in_read, int out_write)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);

    if (rc != 0)
        return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc == 0) {
        rc = child_fds(&fa, in_read, out_write);
        if (rc == 0)
            rc = child_signals(&attr);
        if (rc == 0)
            rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

int ld_child_spawn(ld_child *c, char *const argv[], int want_stdin)
{
    int out[2], in[2] = {-1, -1};

    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->in_fd = c->out_fd = -1;
    if (!argv || !argv[0] || !argv[0][0])
        return -EINVAL;
    if (pipe2(out, O_CLOEXEC) != 0)
        return -errno;
    if (want_stdin && pipe2(in, O_CLOEXEC) != 0) {
        int rc = -errno;
        close(out[0]);
        close(out[1]);
        return rc;
    }
    int rc = -spawn_with(&c->pid, argv, in[0], out[1]);
    close(out[1]);
    close_fd(&in[0]);
    if (rc != 0) {
        close(out[0]);
        close_fd(&in[1]);
        c->pid = -1;
        return rc;
    }
    c->out_fd = out[0];
    c->in_fd = in[1];
    return 0;
}

/* --- Reading ----------------------------------------------------------------------- */

/* Wait until fd is readable or deadline (ms, monotonic) passes: 0 or -ETIMEDOUT. */
static int wait_readable(int fd, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0)
            return -ETIMEDOUT;
        int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

/* Read into to[0..room) before deadline: the bytes read, 0 at the end, or an errno. */
static ssize_t read_before(int fd, char *to, size_t room, int64_t deadline)
{
    for (;;) {
        int rc = wait_readable(fd, deadline);
        if (rc != 0)
            return rc;
        ssize_t n = read(fd, to, room);
        if (n >= 0)
            return n;
        if (errno != EINTR && errno != EAGAIN)
            return -errno;
    }
}

/* More of the child's output into its buffer, after what is not yet handed out. */
static ssize_t fill(ld_child *c, int64_t deadline)
{
    if (c->out_fd < 0)
        return 0;
    if (c->off > 0) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    ssize_t n = read_before(c->out_fd, c->buf + c->len, sizeof c->buf - c->len, deadline);
    if (n > 0)
        c->len += (size_t)n;
    return n;
}

/* Hand out buf[off..off+n) as a line into out[0..size), and step past `skip` more. */
static int take_line(ld_child *c, size_t n, size_t skip, char *out, size_t size)
{
    size_t keep = n < size - 1 ? n : size - 1;

    memcpy(out, c->buf + c->off, keep);
    out[keep] = '\0';
    c->off += n + skip;
    return (int)keep;
}

/* A line fills at most the whole buffer: one longer comes in pieces of that size. A
 * last line with no newline is a line too. */
int ld_child_read_line(ld_child *c, char *buf, size_t size, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;

    if (size == 0)
        return -EINVAL;
    for (;;) {
        size_t have = c->len - c->off;
        const char *nl = memchr(c->buf + c->off, '\n', have);
        if (nl)
            return take_line(c, (size_t)(nl - (c->buf + c->off)), 1, buf, size);
        if (have == sizeof c->buf)
            return take_line(c, have, 0, buf, size);
        ssize_t n = fill(c, deadline);
        if (n == 0)
            return have > 0 ? take_line(c, have, 0, buf, size) : -EPIPE;
        if (n < 0)
            return (int)n;
    }
}

/* Keep what fits of from[0..n) after out[0..*kept), below size - 1. */
static void keep_some(char *out, size_t size, size_t *kept, const char *from, size_t n)
{
    size_t room = size - 1 - *kept;
    size_t k = n < room ? n : room;

    memcpy(out + *kept, from, k);
    *kept += k;
}

int ld_child_read_all(ld_child *c, char *buf, size_t size, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    size_t kept = 0;
    char chunk[4096];

    if (size == 0)
        return -EINVAL;
    keep_some(buf, size, &kept, c->buf + c->off, c->len - c->off);
    c->off = c->len = 0;
    for (ssize_t n = 1; n != 0 && c->out_fd >= 0;) {
        n = read_before(c->out_fd, chunk, sizeof chunk, deadline);
        if (n < 0) {
            buf[kept] = '\0';
            return (int)n;
        }
        keep_some(buf, size, &kept, chunk, (size_t)n);
    }
    buf[kept] = '\0';
    return kept > INT_MAX ? INT_MAX : (int)kept;
}

/* --- Writing ----------------------------------------------------------------------- */

/* write(2) all of data with SIGPIPE blocked in this thread; a SIGPIPE the write raised
 * is taken back before the mask is restored, so it is never delivered. */
int ld_child_write(ld_child *c, const char *text)
{
    sigset_t pipe_set, old, pending;
    size_t len = strlen(text);
    int rc = 0;

    if (c->in_fd < 0)
        return -EBADF;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    while (len > 0 && rc == 0) {
        ssize_t n = write(c->in_fd, text, len);
        if (n >= 0) {
            text += n;
            len -= (size_t)n;
        } else if (errno != EINTR) {
            rc = -errno;
        }
    }
    if (rc == -EPIPE && !was_pending) {
        const struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* --- Ending ------------------------------------------------------------------------ */

/* waitpid, without EINTR: the pid, 0 while it runs, or an errno. */
static pid_t reap(pid_t pid, int *status, int flags)
{
    for (;;) {
        pid_t r = waitpid(pid, status, flags);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return -errno;
    }
}

/* Polls the child with growing naps, 1 ms up to 50 ms, so a quick child is reaped
 * quickly and a slow one costs little. */
int ld_child_wait(ld_child *c, int timeout_ms, int *status)
{
    int64_t deadline = now_ms() + timeout_ms;
    int st = 0;
    long nap_ms = 1;

    close_fd(&c->in_fd);
    close_fd(&c->out_fd);
    c->off = c->len = 0;
    if (c->pid <= 0)
        return -ECHILD;
    pid_t r;
    while ((r = reap(c->pid, &st, WNOHANG)) == 0 && now_ms() < deadline) {
        struct timespec ts = {0, nap_ms * 1000000};
        nanosleep(&ts, NULL);
        nap_ms = nap_ms < 50 ? nap_ms * 2 : 50;
    }
    int rc = r < 0 ? (int)r : 0;
    if (r == 0) {
        kill(c->pid, SIGKILL);
        reap(c->pid, &st, 0);
        rc = -ETIMEDOUT;
    }
    c->pid = -1;
    if (status)
        *status = st;
    return rc;
}

int ld_sibling_path(const char *name, char *out, size_t size)
{
    char exe[PATH_MAX];
    struct stat sb;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (n < 0)
        return -errno;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash || strchr(name, '/') || !name[0])
        return -ENOENT;
    *slash = '\0';
    int len = snprintf(out, size, "%s/%s", exe, name);
    if (len < 0 || (size_t)len >= size)
        return -ENAMETOOLONG;
    if (stat(out, &sb) != 0 || !S_ISREG(sb.st_mode) || access(out, X_OK) != 0)
        return -ENOENT;
    return 0;
}

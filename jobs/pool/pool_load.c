/* pool_load.c: wrk or loomdist-load as a child, and their output read back
 * (pool_load.h).
 */
#include "pool_load.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_child.h"

#define LOAD_BUILTIN_NAME "loomdist-load"
#define LOAD_OUTPUT_MAX 65536
/* Past the seconds asked for: start-up, the drain (up to the longest latency plus 5 s,
 * and a request times out after 10 s) and the report. */
#define LOAD_MARGIN_S 30
#define LOAD_EXIT_WAIT_MS 5000

/* One line of why into err[0..errlen), and rc back. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int rc,
                                                      const char *fmt, ...)
{
    va_list ap;

    if (errlen == 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* --- Finding the tools ------------------------------------------------------------- */

/* name in a folder of $PATH, as posix_spawnp will find it. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    char file[PATH_MAX];
    struct stat sb;

    for (const char *at = path ? path : ""; *at;) {
        size_t len = strcspn(at, ":");
        int n = snprintf(file, sizeof file, "%.*s/%s", (int)len, at, name);
        if (len > 0 && n > 0 && (size_t)n < sizeof file && stat(file, &sb) == 0 &&
            S_ISREG(sb.st_mode) && access(file, X_OK) == 0)
            return 1;
        at += len + (at[len] == ':');
    }
    return 0;
}

int ld_load_available(enum ld_load_tool t)
{
    char path[PATH_MAX];

    if (t == LD_LOAD_WRK)
        return on_path("wrk");
    return ld_sibling_path(LOAD_BUILTIN_NAME, path, sizeof path) == 0;
}

/* --- Reading wrk ------------------------------------------------------------------- */

/* A time as wrk prints it ("850.00us", "31.20ms", "1.00s", "2.00m") in ns: never
 * negative, NaN or past what an int64_t of ns holds, none of which wrk prints. */
static int wrk_time(double v, const char *unit, int64_t *ns)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};

    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        double t = v * units[i].ns;
        if (strcmp(unit, units[i].unit) == 0) {
            if (!(t >= 0 && t < 0x1p63))
                return -EPROTO;
            *ns = llround(t);
            return 0;
        }
    }
    return -EPROTO;
}

/* The time after the first occurrence of `label` in text. */
static int wrk_time_after(const char *text, const char *label, int64_t *ns)
{
    const char *at = strstr(text, label);
    double v;
    char unit[8];

    if (!at || sscanf(at + strlen(label), "%lf%7[a-z]", &v, unit) != 2)
        return -EPROTO;
    return wrk_time(v, unit, ns);
}

/* "N requests in Xs" and the Max of the Latency line ("Latency AVG STDEV MAX ..."). */
static int wrk_totals(const char *text, ld_load_result *out)
{
    const char *at = strstr(text, " requests in ");
    char unit[3][8];
    double v[3];
    int64_t ns;

    if (!at)
        return -EPROTO;
    while (at > text && at[-1] >= '0' && at[-1] <= '9')
        at--;
    if (sscanf(at, "%" SCNu64 " requests in %lf%7[a-z]", &out->requests, &v[0],
               unit[0]) != 3 ||
        wrk_time(v[0], unit[0], &ns) != 0)
        return -EPROTO;
    out->seconds = (double)ns / 1e9;
    at = strstr(text, "    Latency ");
    if (!at || sscanf(at, " Latency %lf%7[a-z] %lf%7[a-z] %lf%7[a-z]", &v[0], unit[0],
                      &v[1], unit[1], &v[2], unit[2]) != 6)
        return -EPROTO;
    return wrk_time(v[2], unit[2], &out->max_ns);
}

/* Socket errors and non-2xx/3xx responses, each absent when there were none. */
static int wrk_errors(const char *text, ld_load_result *out)
{
    const char *at = strstr(text, "Socket errors:");
    uint64_t connect = 0, rd = 0, wr = 0, timeout = 0, non2xx = 0;

    if (at && sscanf(at,
                     "Socket errors: connect %" SCNu64 ", read %" SCNu64
                     ", write %" SCNu64 ", timeout %" SCNu64,
                     &connect, &rd, &wr, &timeout) != 4)
        return -EPROTO;
    at = strstr(text, "Non-2xx or 3xx responses:");
    if (at && sscanf(at, "Non-2xx or 3xx responses: %" SCNu64, &non2xx) != 1)
        return -EPROTO;
    out->errors = connect + rd + wr + timeout + non2xx;
    return 0;
}

static int parse_wrk(const char *text, ld_load_result *out)
{
    const char *dist = strstr(text, "Latency Distribution");

    if (!dist || wrk_time_after(dist, " 50% ", &out->p50_ns) != 0 ||
        wrk_time_after(dist, " 90% ", &out->p90_ns) != 0 ||
        wrk_time_after(dist, " 99% ", &out->p99_ns) != 0)
        return -EPROTO;
    int rc = wrk_totals(text, out);
    return rc == 0 ? wrk_errors(text, out) : rc;
}

/* --- Reading loomdist-load --------------------------------------------------------- */

static int parse_builtin(const char *text, ld_load_result *out)
{
    const char *at = strstr(text, "requests=");

    if (!at || (at > text && at[-1] != '\n'))
        return -EPROTO;
    if (sscanf(at,
               "requests=%" SCNu64 " errors=%" SCNu64 " seconds=%lf p50_ns=%" SCNd64
               " p90_ns=%" SCNd64 " p99_ns=%" SCNd64 " max_ns=%" SCNd64,
               &out->requests, &out->errors, &out->seconds, &out->p50_ns, &out->p90_ns,
               &out->p99_ns, &out->max_ns) != 7)
        return -EPROTO;
    /* what loomdist-load never prints: a window NaN, infinite or negative, or a
     * negative latency */
    if (!(out->seconds >= 0 && isfinite(out->seconds)) || out->p50_ns < 0 ||
        out->p90_ns < 0 || out->p99_ns < 0 || out->max_ns < 0)
        return -EPROTO;
    return 0;
}

int ld_load_parse(enum ld_load_tool t, const char *text, ld_load_result *out)
{
    memset(out, 0, sizeof *out);
    return t == LD_LOAD_WRK ? parse_wrk(text, out) : parse_builtin(text, out);
}

/* --- Running ----------------------------------------------------------------------- */

/* The command line of spec's tool and the words it is made of. */
typedef struct load_argv {
    char *argv[16];
    char program[PATH_MAX];
    char threads[32], conns[32], seconds[40], target[1024];
} load_argv;

/* wrk's -d is whole seconds: the seconds asked for, rounded up. */
static int wrk_argv(const ld_load_spec *s, load_argv *a, const char *host)
{
    int n =
        snprintf(a->target, sizeof a->target, "http://%s:%d%s", host, s->port, s->path);

    snprintf(a->threads, sizeof a->threads, "-t%u", s->threads);
    snprintf(a->conns, sizeof a->conns, "-c%" PRIu64, s->connections);
    snprintf(a->seconds, sizeof a->seconds, "-d%.0fs", ceil(s->seconds));
    char *words[] = {a->program,  a->threads, a->conns,  a->seconds, "--latency",
                     "--timeout", "10s",      a->target, NULL};
    memcpy(a->argv, words, sizeof words);
    return n > 0 && (size_t)n < sizeof a->target ? 0 : -EINVAL;
}

static int builtin_argv(const ld_load_spec *s, load_argv *a, const char *host)
{
    int n = snprintf(a->target, sizeof a->target, "%s:%d", host, s->port);

    snprintf(a->threads, sizeof a->threads, "%u", s->threads);
    snprintf(a->conns, sizeof a->conns, "%" PRIu64, s->connections);
    snprintf(a->seconds, sizeof a->seconds, "%.17g", s->seconds);
    char *words[] = {a->program,
                     "--connections",
                     a->conns,
                     "--threads",
                     a->threads,
                     "--duration",
                     a->seconds,
                     "--path",
                     (char *)s->path,
                     "--timeout",
                     "10",
                     "--quiet",
                     a->target,
                     NULL};
    memcpy(a->argv, words, sizeof words);
    return n > 0 && (size_t)n < sizeof a->target ? 0 : -EINVAL;
}

/* The program to run and its arguments; a message when there is none. */
static int load_command(const ld_load_spec *s, load_argv *a, char *err, size_t errlen)
{
    char host[300];
    int rc = 0;

    if (!s->host || !s->host[0] || !s->path || s->path[0] != '/' || s->port < 1 ||
        s->port > 65535 || s->threads < 1 || s->connections < s->threads ||
        !(s->seconds > 0 && s->seconds <= 1e6))
        return fail(err, errlen, -EINVAL, "load: a spec out of range");
    snprintf(host, sizeof host, strchr(s->host, ':') ? "[%s]" : "%s", s->host);
    if (s->program)
        snprintf(a->program, sizeof a->program, "%s", s->program);
    else if (s->tool == LD_LOAD_WRK)
        snprintf(a->program, sizeof a->program, "wrk");
    else
        rc = ld_sibling_path(LOAD_BUILTIN_NAME, a->program, sizeof a->program);
    if (rc != 0)
        return fail(err, errlen, rc,
                    "load: no " LOAD_BUILTIN_NAME " beside this program");
    rc = s->tool == LD_LOAD_WRK ? wrk_argv(s, a, host) : builtin_argv(s, a, host);
    return rc == 0 ? 0 : fail(err, errlen, rc, "load: the target is too long");
}

/* The child's output whole, then its exit: 0 only for a clean exit 0. */
static int load_collect(ld_child *c, const char *name, const ld_load_spec *s, char *text,
                        char *err, size_t errlen)
{
    int wait_ms = (int)((ceil(s->seconds) + LOAD_MARGIN_S) * 1000);
    int status = 0;
    int rc = ld_child_read_all(c, text, LOAD_OUTPUT_MAX, wait_ms);
    int wrc = ld_child_wait(c, rc < 0 ? 0 : LOAD_EXIT_WAIT_MS, &status);

    if (rc < 0 || wrc < 0)
        return fail(err, errlen, -ETIMEDOUT, "load: %s did not finish within %d s", name,
                    wait_ms / 1000);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail(err, errlen, -ECHILD, "load: %s failed (%s %d)", name,
                    WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 0;
}

int ld_load_run(const ld_load_spec *spec, ld_load_result *out, char *err, size_t errlen)
{
    load_argv a;
    ld_child c;

    if (errlen > 0)
        err[0] = '\0';
    int rc = load_command(spec, &a, err, errlen);
    if (rc != 0)
        return rc;
    rc = ld_child_spawn(&c, a.argv, 0);
    if (rc != 0)
        return fail(err, errlen, rc, "load: cannot run %s: %s", a.program, strerror(-rc));
    char *text = malloc(LOAD_OUTPUT_MAX);
    if (!text) {
        ld_child_wait(&c, 0, NULL);
        return fail(err, errlen, -ENOMEM, "load: out of memory");
    }
    rc = load_collect(&c, a.program, spec, text, err, errlen);
    if (rc == 0 && ld_load_parse(spec->tool, text, out) != 0)
        rc = fail(err, errlen, -EPROTO, "load: %s printed no result: %.80s", a.program,
                  text);
    free(text);
    return rc;
}

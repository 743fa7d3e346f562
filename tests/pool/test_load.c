/* test_load.c: the pool job's load, in three cases.
 *
 *   spawn        children (spawn_child.h): pipes both ways, no descriptor leaked in,
 *                a missing program refused at the spawn, bounded reads and waits, a
 *                write to a child that has gone is -EPIPE and no SIGPIPE
 *   parse DIR    wrk's output captured from real runs (DIR/wrk-*.txt) and
 *                loomdist-load's line read back, and broken output refused
 *   live LOAD    loomdist-load (path LOAD) and wrk, when it is installed, against a
 *                clearinghouse on a thread of this process: the built-in's count of
 *                completed requests equals the served count of the clearinghouse, to
 *                the request; wrk's is no more than it
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "clearinghouse.h"
#include "pool_load.h"
#include "spawn_child.h"

#define WAIT_MS 5000

/* --- spawn ----------------------------------------------------------------------- */

/* cat echoes lines back; closing its stdin ends it with status 0. */
static void spawn_echo(void)
{
    char *argv[] = {"cat", NULL};
    ld_child c;
    char line[64];
    int status = -1;

    CHECK(ld_child_spawn(&c, argv, 1) == 0, "cat did not start");
    CHECK(ld_child_write(&c, "hello\nworld\n") == 0, "write to cat");
    CHECK(ld_child_read_line(&c, line, sizeof line, WAIT_MS) == 5 &&
              strcmp(line, "hello") == 0,
          "first line '%s'", line);
    CHECK(ld_child_read_line(&c, line, sizeof line, WAIT_MS) == 5 &&
              strcmp(line, "world") == 0,
          "second line '%s'", line);
    CHECK(ld_child_read_line(&c, line, sizeof line, 100) == -ETIMEDOUT,
          "a line that never comes");
    CHECK(ld_child_wait(&c, WAIT_MS, &status) == 0 && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "cat's status %d", status);
}

/* Descriptors open without close-on-exec here (the lowest free one, and 50) are not
 * open in the child: of 0-5 and 50 it has 0, 1 and 2 alone. Its shell tests each with
 * [ -e ], which opens nothing. */
static void spawn_no_leak(void)
{
    char *argv[] = {"/bin/sh", "-c",
                    "for fd in 0 1 2 3 4 5 50; do [ -e /proc/$$/fd/$fd ] && echo $fd; "
                    "done; true",
                    NULL};
    int leak = open("/dev/null", O_RDONLY);
    int high = leak >= 0 ? dup2(leak, 50) : -1;
    ld_child c;
    char out[256];

    CHECK(leak > 2 && high == 50, "open /dev/null");
    CHECK(ld_child_spawn(&c, argv, 0) == 0, "sh did not start");
    int n = ld_child_read_all(&c, out, sizeof out, WAIT_MS);
    CHECK(n > 0 && strcmp(out, "0\n1\n2\n") == 0, "the child's descriptors: %s", out);
    CHECK(ld_child_wait(&c, WAIT_MS, NULL) == 0, "sh did not exit");
    close(leak);
    close(high);
}

/* A missing program fails the spawn itself, with or without a path. */
static void spawn_missing(void)
{
    char *bare[] = {"no-such-program-loomdist", NULL};
    char *path[] = {"/nonexistent/program", NULL};
    ld_child c;

    CHECK(ld_child_spawn(&c, bare, 0) == -ENOENT, "a program not on PATH");
    CHECK(ld_child_spawn(&c, path, 1) == -ENOENT, "a path that does not exist");
    CHECK(c.in_fd == -1 && c.out_fd == -1, "descriptors left after a failed spawn");
}

/* A child that outlives the wait is killed and reaped. */
static void spawn_timeout(void)
{
    char *argv[] = {"sleep", "30", NULL};
    ld_child c;
    int status = 0;

    CHECK(ld_child_spawn(&c, argv, 0) == 0, "sleep did not start");
    CHECK(ld_child_wait(&c, 100, &status) == -ETIMEDOUT, "the wait was not bounded");
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
    CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child left unreaped");
}

/* The end of a child's output is -EPIPE; a write to its closed stdin is too, and no
 * SIGPIPE (at its default here, which would kill the test) is delivered. */
static void spawn_gone(void)
{
    char *argv[] = {"true", NULL};
    char big[70000], line[16];
    ld_child c;

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    signal(SIGPIPE, SIG_DFL);
    CHECK(ld_child_spawn(&c, argv, 1) == 0, "true did not start");
    CHECK(ld_child_read_line(&c, line, sizeof line, WAIT_MS) == -EPIPE, "no end");
    CHECK(ld_child_write(&c, big) == -EPIPE, "a write to a child that has gone");
    CHECK(ld_child_wait(&c, WAIT_MS, NULL) == 0, "true did not exit");
}

/* read_all keeps what fits; a long line comes cut to the caller's buffer. */
static void spawn_truncate(void)
{
    char *all[] = {"printf", "0123456789", NULL};
    char *lines[] = {"printf", "abcdefgh\\nlast", NULL};
    char buf[5];
    ld_child c;

    CHECK(ld_child_spawn(&c, all, 0) == 0, "printf did not start");
    CHECK(ld_child_read_all(&c, buf, sizeof buf, WAIT_MS) == 4 &&
              strcmp(buf, "0123") == 0,
          "read_all kept '%s'", buf);
    ld_child_wait(&c, WAIT_MS, NULL);
    CHECK(ld_child_spawn(&c, lines, 0) == 0, "printf did not start");
    CHECK(ld_child_read_line(&c, buf, sizeof buf, WAIT_MS) == 4 &&
              strcmp(buf, "abcd") == 0,
          "a cut line '%s'", buf);
    CHECK(ld_child_read_line(&c, buf, sizeof buf, WAIT_MS) == 4 &&
              strcmp(buf, "last") == 0,
          "a last line with no newline '%s'", buf);
    CHECK(ld_child_read_line(&c, buf, sizeof buf, WAIT_MS) == -EPIPE, "no end");
    ld_child_wait(&c, WAIT_MS, NULL);
}

/* This test's own name is beside itself; a made-up one is not. */
static void sibling(const char *argv0)
{
    const char *name = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
    char path[PATH_MAX];

    CHECK(ld_sibling_path(name, path, sizeof path) == 0 && access(path, X_OK) == 0,
          "%s beside itself", name);
    CHECK(ld_sibling_path("no-such-sibling", path, sizeof path) == -ENOENT, "a sibling");
    CHECK(ld_sibling_path(name, path, 4) == -ENAMETOOLONG, "a path past its buffer");
}

static void test_spawn(const char *argv0)
{
    spawn_echo();
    spawn_no_leak();
    spawn_missing();
    spawn_timeout();
    spawn_gone();
    spawn_truncate();
    sibling(argv0);
}

/* --- parse ----------------------------------------------------------------------- */

static int read_file(const char *dir, const char *name, char *buf, size_t size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

typedef struct wrk_case {
    const char *file;
    ld_load_result want;
} wrk_case;

/* Captured with wrk 4.1.0 against loomdist-clearinghouse: /think?ms=5 (clean),
 * /elsewhere (every answer 404) and /think?ms=1500 under --timeout 1s (every request
 * a timeout, with no latency recorded). */
static const wrk_case wrk_cases[] = {
    {"wrk-think.txt", {16283, 0, 2.01, 5820000, 6430000, 9450000, 12620000}},
    {"wrk-404.txt", {87279, 87279, 1.10, 170000, 1060000, 3950000, 8820000}},
    {"wrk-timeout.txt", {40, 40, 3.02, 0, 0, 0, 0}},
};

static void check_result(const char *what, const ld_load_result *got,
                         const ld_load_result *want)
{
    CHECK(got->requests == want->requests && got->errors == want->errors,
          "%s: %llu requests %llu errors", what, (unsigned long long)got->requests,
          (unsigned long long)got->errors);
    CHECK(got->seconds > want->seconds - 1e-9 && got->seconds < want->seconds + 1e-9,
          "%s: %g s", what, got->seconds);
    CHECK(got->p50_ns == want->p50_ns && got->p90_ns == want->p90_ns &&
              got->p99_ns == want->p99_ns && got->max_ns == want->max_ns,
          "%s: p50 %lld p90 %lld p99 %lld max %lld", what, (long long)got->p50_ns,
          (long long)got->p90_ns, (long long)got->p99_ns, (long long)got->max_ns);
}

static void test_parse(const char *dir)
{
    static char text[65536];
    ld_load_result got;

    for (size_t i = 0; i < sizeof wrk_cases / sizeof wrk_cases[0]; i++) {
        const wrk_case *k = &wrk_cases[i];
        CHECK(read_file(dir, k->file, text, sizeof text) == 0, "no %s", k->file);
        CHECK(ld_load_parse(LD_LOAD_WRK, text, &got) == 0, "%s refused", k->file);
        check_result(k->file, &got, &k->want);
        /* Without its distribution (run without --latency) it is refused. */
        char *dist = strstr(text, "Latency Distribution");
        if (dist)
            *dist = '\0';
        CHECK(ld_load_parse(LD_LOAD_WRK, text, &got) == -EPROTO, "%s cut", k->file);
    }
    const char *line = "requests=30143 errors=2 seconds=2.012203 p50_ns=32243711 "
                       "p90_ns=36175871 p99_ns=44040191 max_ns=55100987\n";
    ld_load_result want = {30143, 2, 2.012203, 32243711, 36175871, 44040191, 55100987};
    CHECK(ld_load_parse(LD_LOAD_BUILTIN, line, &got) == 0, "the builtin's line");
    check_result("builtin", &got, &want);
    CHECK(ld_load_parse(LD_LOAD_BUILTIN, "requests=1 errors=0\n", &got) == -EPROTO,
          "a line cut short");
    CHECK(ld_load_parse(LD_LOAD_BUILTIN, "", &got) == -EPROTO, "nothing");
    CHECK(ld_load_parse(LD_LOAD_WRK, "unable to connect\n", &got) == -EPROTO, "no run");
}

/* --- live ------------------------------------------------------------------------ */

/* One run of tool against the clearinghouse, and what it served in that run. */
static int live_run(ld_clearinghouse_thread *t, ld_load_spec *spec, ld_load_result *r,
                    ld_clearinghouse_stats *st)
{
    char err[256];

    ld_clearinghouse_thread_window(t, st);
    int rc = ld_load_run(spec, r, err, sizeof err);
    CHECK(rc == 0, "%s: %s", spec->tool == LD_LOAD_WRK ? "wrk" : "builtin", err);
    ld_clearinghouse_thread_window(t, st);
    return rc;
}

static void test_live(const char *load)
{
    struct sockaddr_in addr;
    ld_clearinghouse_thread *t;
    ld_clearinghouse_stats st;
    ld_load_result r;
    char err[256];

    uv_ip4_addr("127.0.0.1", 0, &addr);
    if (ld_clearinghouse_start(&t, (struct sockaddr *)&addr, NULL, 0) != 0) {
        CHECK(0, "the clearinghouse did not start");
        return;
    }
    ld_load_spec spec = {LD_LOAD_BUILTIN,
                         "127.0.0.1",
                         ld_clearinghouse_thread_port(t),
                         "/think?ms=20",
                         60,
                         2,
                         1.5,
                         load};
    if (live_run(t, &spec, &r, &st) == 0) {
        CHECK(r.requests > 0 && r.requests == st.served,
              "the builtin completed %llu requests, the clearinghouse served %llu",
              (unsigned long long)r.requests, (unsigned long long)st.served);
        CHECK(r.errors == 0 && st.abandoned == 0, "%llu errors, %llu abandoned",
              (unsigned long long)r.errors, (unsigned long long)st.abandoned);
        CHECK(r.p50_ns >= 20000000 && r.max_ns >= r.p99_ns && r.p99_ns >= r.p50_ns,
              "latencies p50 %lld p99 %lld max %lld", (long long)r.p50_ns,
              (long long)r.p99_ns, (long long)r.max_ns);
    }
    spec.tool = LD_LOAD_WRK;
    spec.program = NULL;
    spec.seconds = 1;
    if (ld_load_available(LD_LOAD_WRK) && live_run(t, &spec, &r, &st) == 0)
        CHECK(r.requests > 0 && r.requests <= st.served && r.errors == 0,
              "wrk completed %llu requests, the clearinghouse served %llu",
              (unsigned long long)r.requests, (unsigned long long)st.served);
    spec.tool = LD_LOAD_BUILTIN;
    spec.program = "/nonexistent/loomdist-load";
    CHECK(ld_load_run(&spec, &r, err, sizeof err) == -ENOENT && err[0], "no program");
    spec.connections = 1;
    CHECK(ld_load_run(&spec, &r, err, sizeof err) == -EINVAL && err[0], "a bad spec");
    ld_clearinghouse_stop(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "spawn") == 0)
        test_spawn(argv[0]);
    else if (argc >= 3 && strcmp(argv[1], "parse") == 0)
        test_parse(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "live") == 0)
        test_live(argv[2]);
    else {
        fprintf(stderr, "usage: test_load spawn | parse DIR | live LOAD\n");
        return 2;
    }
    return failures != 0;
}

/* pool_load.h: the pool job's load, from wrk or from loomdist-load, run as a child
 * process (spawn_child.h) and read back from what it prints.
 *
 * wrk runs as `wrk -tT -cC -dDs --latency --timeout 10s URL`; its -d takes whole
 * seconds, so D is the seconds asked for, rounded up. It stops at the end and does not
 * wait for the requests in flight, so its count may be a little below what the server
 * answered. loomdist-load runs with the same connections, threads and seconds (as a
 * real number) and drains, so its count is the server's exactly (http_load.h).
 *
 * Functions return 0 or a negative errno.
 */
#ifndef LD_POOL_LOAD_H
#define LD_POOL_LOAD_H

#include <stddef.h>
#include <stdint.h>

enum ld_load_tool { LD_LOAD_WRK, LD_LOAD_BUILTIN };

typedef struct ld_load_spec {
    enum ld_load_tool tool;
    const char *host; /* a name, an IPv4 address or an IPv6 one (unbracketed) */
    int port;
    const char *path; /* the target: "/think?ms=30" */
    uint64_t connections;
    unsigned threads; /* <= connections */
    double seconds;
    const char *program; /* the generator's path; NULL: wrk on PATH, or loomdist-load
                            beside the running executable */
} ld_load_spec;

typedef struct ld_load_result {
    uint64_t requests, errors; /* errors: wrk's socket errors and non-2xx/3xx */
    double seconds;            /* the tool's own window */
    int64_t p50_ns, p90_ns, p99_ns, max_ns;
} ld_load_result;

/* 1 when tool t can run: wrk on PATH; loomdist-load beside the executable. */
int ld_load_available(enum ld_load_tool t);

/* Run the tool on spec, wait for it (the seconds and a margin) and read its result.
 * On failure, one line of why in err[0..errlen): -ENOENT (no such tool), -EINVAL (a
 * spec out of range), -ETIMEDOUT, -ECHILD (it failed; its exit status said), -EPROTO
 * (output that is not its result). */
int ld_load_run(const ld_load_spec *spec, ld_load_result *out, char *err, size_t errlen);

/* Read what tool t printed on stdout: wrk's "N requests in Xs", its --latency
 * distribution (50%, 90%, 99%), the Max of its Latency line, "Socket errors" and
 * "Non-2xx or 3xx responses"; loomdist-load's line. 0, or -EPROTO when a part is
 * missing. */
int ld_load_parse(enum ld_load_tool t, const char *text, ld_load_result *out);

#endif

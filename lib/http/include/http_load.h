/* http_load.h: a closed-loop HTTP/1.1 load generator on libuv, as wrk makes load.
 *
 * `connections` keep-alive connections to one server, spread over `threads` OS threads
 * that each run a uv_loop. Every connection is opened at the start and sends
 * `GET path` again as soon as the previous response is read whole, so the load is the
 * server's own pace: at most one request per connection in flight, no pipelining.
 * A connect that fails is tried again, up to LD_LOAD_CONNECT_TRIES times with a
 * doubling pause (a server's accept queue may be shorter than the connections); a
 * connection the server ends (Connection: close, an error) is opened afresh.
 *
 * Drain. After `seconds` nothing more is sent, and every request in flight is waited
 * for, up to the drain bound; so `requests` is exactly what the server answered while
 * the run lasted. A request unanswered at the drain's end counts as a timeout.
 *
 * Latency is from the request's write to its response read whole, in a hist.h histogram
 * within 1/64 of each value. A request unanswered for `timeout_s` is a timeout: its
 * connection is closed and, while the run lasts, opened again.
 *
 * The request is formatted once; no allocation is made per request.
 * SIGPIPE is the program's to ignore (http.h). Functions return 0 or a negative errno.
 */
#ifndef LD_HTTP_LOAD_H
#define LD_HTTP_LOAD_H

#include <stdint.h>
#include <sys/socket.h>

/* Tries of one connect before the connection is given up. */
#define LD_LOAD_CONNECT_TRIES 6

/* Descriptors a run needs beyond one per connection (loops, pipes, stdio). */
#define LD_LOAD_SPARE_FDS 64

typedef struct ld_http_load_config {
    const struct sockaddr *addr; /* IPv4 or IPv6 */
    const char *host;            /* the Host header: one word, "HOST:PORT" */
    const char *path;            /* the target: "/think?ms=30" */
    uint64_t connections;        /* >= threads */
    unsigned threads;            /* >= 1 */
    double seconds;              /* of sending */
    double timeout_s;            /* a request's longest wait; 0: 10 s */
    double drain_s; /* the longest drain; 0: the longest latency seen + 5 s */
} ld_http_load_config;

typedef struct ld_http_load_report {
    uint64_t requests;       /* responses read whole, whatever their status */
    uint64_t errors;         /* the sum of the five below */
    uint64_t connect_errors; /* connects that failed, each try */
    uint64_t read_errors;    /* a read that failed, bytes that are not a response, or
                                the connection's end in the middle of one */
    uint64_t resets;         /* ECONNRESET or EPIPE, reading or writing */
    uint64_t non_2xx;        /* responses with a status outside 200-299 */
    uint64_t timeouts;       /* past timeout_s, or unanswered at the drain's end */
    uint64_t connected;      /* connections ever made */
    double seconds; /* the window: the first request's write to the last response */
    int64_t p50_ns, p90_ns, p99_ns, max_ns; /* 0 with no response */
} ld_http_load_report;

/* Run the load on `threads` threads of its own; returns once every one has drained.
 * -EINVAL for a config out of range, -ENOMEM, or an error starting a loop or a thread.
 * Failures of the traffic are counted, not returned. */
int ld_http_load_run(const ld_http_load_config *cfg, ld_http_load_report *out);

/* Raise this process's RLIMIT_NOFILE soft limit to its hard limit, and say whether
 * `connections` connections fit under it with LD_LOAD_SPARE_FDS to spare: 0, or
 * -EMFILE when they do not. *soft and *hard get the limits as they then are. */
int ld_http_load_fd_room(uint64_t connections, uint64_t *soft, uint64_t *hard);

#endif

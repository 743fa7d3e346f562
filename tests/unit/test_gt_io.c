/* test_gt_io.c: green-thread sockets (gt_io.h) on 127.0.0.1, in both stack modes.
 *
 * - Short reads: a read asks for more than was sent and gets what was, or for less
 *   and gets the rest at the next; the end reads 0, again and again; a half-closed
 *   stream still carries the other way.
 * - Partial writes: 16 MiB in one write to a peer that reads slowly parks the writer
 *   until the peer has drained it, every byte in order; 4 MiB echoed while one thread
 *   writes and another reads the same stream.
 * - A refused connect; timeouts of a read with no data (the stream goes on), an accept
 *   with nobody, a connect to a full queue and a write nobody reads (the write side
 *   breaks, reads go on), none early.
 * - A peer that resets, and one that closes mid-read: an error, or the bytes then the
 *   end, to that stream's thread alone, while an echo beside it goes on.
 * - A listener's own queue: connections past a full one are held and accepted later;
 *   those never handed out are closed with the listener.
 * - A close cancels the threads parked in the object (a read, a write, an accept); a
 *   second reader is refused, also while the first has been woken and has yet to run; a
 * call from outside a green thread is refused, open streams do not keep the scheduler
 * running, and they can be closed after it.
 * - Writes to a peer that has closed fail with -EPIPE; SIGPIPE does not kill.
 * - 1,000 green threads on one carrier, each with its own connection to a server of
 *   green threads on the same carrier, echo messages of their own.
 * Every wait has a timeout or a bound, and an alarm turns a hang into a failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "gt.h"
#include "gt_io.h"

#include "check.h"
#include "mode.h"

#define MS 1000000ull
#define SEC (1000 * MS)
#define PATIENCE (5 * SEC) /* for what should take no time at all */
/* For each of the echo's connects, made all at once on one carrier: under TSan on a
 * busy 2-CPU machine the thousand took over 5 s before the first could be seen done. */
#define ECHO_PATIENCE (60 * SEC)

#define BIG (16u << 20)   /* bytes of the slow reader's one write */
#define DUPLEX (4u << 20) /* bytes echoed while writing and reading at once */
#define ECHO_CLIENTS 1000 /* connections of the echo */
#define ECHO_ROUNDS 100   /* round trips of each */
#define ECHO_MAX 256      /* bytes of its longest message */
#define CONNECT_TRIES 16  /* connections to a full queue before one must time out */

static ld_sched *sched;    /* the scheduler of the case that runs */
static unsigned char *big; /* BIG bytes of big_byte() */

static unsigned char big_byte(size_t i)
{
    return (unsigned char)(i * 131u + (i >> 13));
}

/* --- helpers, in a green thread ---------------------------------------------------- */

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a;

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void go(ld_gt_fn fn, void *arg)
{
    int rc = ld_gt_spawn(sched, fn, arg, NULL);

    CHECK(rc == 0, "ld_gt_spawn: %d", rc);
}

/* A listener on 127.0.0.1 at a port the kernel picks. */
static ld_io_listener *listen_loopback(int backlog, int *port)
{
    struct sockaddr_in a = loopback(0);
    ld_io_listener *l = NULL;
    int rc = ld_io_listen((const struct sockaddr *)&a, backlog, &l);

    CHECK(rc == 0, "ld_io_listen: %d", rc);
    *port = rc == 0 ? ld_io_listener_port(l) : -1;
    CHECK(rc != 0 || *port > 0, "ld_io_listener_port: %d", *port);
    return rc == 0 ? l : NULL;
}

static ld_io_stream *dial_within(int port, uint64_t patience)
{
    struct sockaddr_in a = loopback(port);
    ld_io_stream *s = NULL;
    int rc = ld_io_connect((const struct sockaddr *)&a, patience, &s);

    CHECK(rc == 0, "ld_io_connect to port %d: %d", port, rc);
    return s;
}

static ld_io_stream *dial(int port)
{
    return dial_within(port, PATIENCE);
}

/* The next connection to l, which is closed after it. */
static ld_io_stream *take_one(ld_io_listener *l)
{
    ld_io_stream *s = NULL;
    int rc = ld_io_accept(l, PATIENCE, &s);

    CHECK(rc == 0, "ld_io_accept: %d", rc);
    ld_io_listener_close(l);
    return s;
}

/* Read exactly len bytes unless the stream ends or fails first: how many, or the
 * error. */
static ssize_t read_full(ld_io_stream *s, void *buf, size_t len)
{
    size_t have = 0;
    ssize_t n = 0;

    while (have < len &&
           (n = ld_io_read(s, (char *)buf + have, len - have, PATIENCE)) > 0)
        have += (size_t)n;
    return n < 0 ? n : (ssize_t)have;
}

static uint64_t since(uint64_t t0)
{
    return uv_hrtime() - t0;
}

/* Threads parked until it opens; on one carrier, so no lock. */
typedef struct gate {
    bool open;
    size_t n;
    ld_gt *waiting[ECHO_CLIENTS];
} gate;

static void gate_wait(gate *g)
{
    if (g->open)
        return;
    g->waiting[g->n++] = ld_gt_self();
    while (!g->open)
        ld_gt_park();
}

static void gate_open(gate *g)
{
    g->open = true;
    while (g->n > 0)
        ld_gt_unpark(g->waiting[--g->n]);
}

/* Echo what comes until the end, from a buffer on this thread's stack. */
static void echo_handler(void *arg)
{
    ld_io_stream *s = arg;
    char buf[512];
    ssize_t n;
    int rc = 0;

    while (rc == 0 && (n = ld_io_read(s, buf, sizeof buf, PATIENCE)) > 0)
        rc = ld_io_write(s, buf, (size_t)n, PATIENCE);
    CHECK(rc == 0 && n == 0, "echo: write %d, read %zd", rc, n);
    ld_io_close(s);
}

static void echo_one(void *arg)
{
    ld_io_stream *s = take_one(arg);

    if (s != NULL)
        echo_handler(s);
}

/* --- short reads, the end, half-close ----------------------------------------------- */

static void short_server(void *arg)
{
    ld_io_stream *s = take_one(arg);
    char buf[16];

    if (s == NULL)
        return;
    CHECK(ld_io_write(s, "hello", 5, PATIENCE) == 0, "write hello");
    CHECK(ld_io_read(s, buf, 1, PATIENCE) == 1, "the client's go-ahead");
    CHECK(ld_io_write(s, "0123456789", 10, PATIENCE) == 0, "write digits");
    CHECK(ld_io_shutdown(s, PATIENCE) == 0, "shutdown");
    CHECK(read_full(s, buf, 3) == 3 && memcmp(buf, "bye", 3) == 0,
          "a half-closed stream still reads");
    CHECK(ld_io_read(s, buf, sizeof buf, PATIENCE) == 0, "then the client's end");
    ld_io_close(s);
}

static void short_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char buf[4096], digits[10];
    size_t have = 0;
    ssize_t n;

    if (s == NULL)
        return;
    n = ld_io_read(s, buf, sizeof buf, PATIENCE);
    CHECK(n == 5 && memcmp(buf, "hello", 5) == 0, "asked for 4096, got %zd", n);
    CHECK(ld_io_write(s, "!", 1, PATIENCE) == 0, "write go-ahead");
    while (have < sizeof digits) {
        size_t want = sizeof digits - have < 3 ? sizeof digits - have : 3;
        n = ld_io_read(s, digits + have, want, PATIENCE);
        CHECK(n > 0 && (size_t)n <= want, "asked for %zu, got %zd", want, n);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    CHECK(have == 10 && memcmp(digits, "0123456789", 10) == 0, "digits: %zu", have);
    CHECK(ld_io_read(s, buf, sizeof buf, PATIENCE) == 0, "the end reads 0");
    CHECK(ld_io_read(s, buf, sizeof buf, PATIENCE) == 0, "and 0 again");
    CHECK(ld_io_write(s, "bye", 3, PATIENCE) == 0, "write after the peer's shutdown");
    ld_io_close(s);
}

static void case_short(void *arg)
{
    int port;
    ld_io_listener *l = listen_loopback(4, &port);

    (void)arg;
    if (l == NULL)
        return;
    go(short_server, l);
    go(short_client, (void *)(intptr_t)port);
}

/* --- partial writes ----------------------------------------------------------------- */

static struct {
    int port;
    size_t got;           /* bytes the slow reader has read */
    size_t got_at_return; /* of them, when the writer's one write returned */
    size_t bad_at;        /* the first byte out of order, or SIZE_MAX */
    bool duplex_ok;
    gate written;
} part;

static unsigned char chunk_buf[LD_IO_CHUNK]; /* the slow reader's, too big for a stack */

/* Reads a chunk a millisecond, after a late start, so the writer fills the socket. */
static void slow_reader(void *arg)
{
    ld_io_stream *s = take_one(arg);
    ssize_t n;

    if (s == NULL)
        return;
    ld_gt_sleep_ns(20 * MS);
    while ((n = ld_io_read(s, chunk_buf, sizeof chunk_buf, PATIENCE)) > 0) {
        for (ssize_t i = 0; i < n && part.bad_at == SIZE_MAX; i++)
            if (chunk_buf[i] != big_byte(part.got + (size_t)i))
                part.bad_at = part.got + (size_t)i;
        part.got += (size_t)n;
        ld_gt_sleep_ns(MS);
    }
    CHECK(n == 0, "slow reader: %zd after %zu bytes", n, part.got);
    ld_io_close(s);
}

static void big_writer(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    int rc;

    if (s == NULL)
        return;
    rc = ld_io_write(s, big, BIG, 0);
    part.got_at_return = part.got;
    CHECK(rc == 0, "16 MiB write: %d", rc);
    CHECK(ld_io_shutdown(s, PATIENCE) == 0, "shutdown");
    ld_io_close(s);
}

/* One thread writes the stream while another reads it back from the echo. */
static void duplex_writer(void *arg)
{
    ld_io_stream *s = arg;

    CHECK(ld_io_write(s, big, DUPLEX, PATIENCE) == 0, "duplex write");
    CHECK(ld_io_shutdown(s, PATIENCE) == 0, "duplex shutdown");
    gate_open(&part.written);
}

static void duplex_reader(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    unsigned char buf[1024];
    size_t got = 0;
    ssize_t n;

    if (s == NULL)
        return;
    go(duplex_writer, s);
    part.duplex_ok = true;
    while ((n = ld_io_read(s, buf, sizeof buf, PATIENCE)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            part.duplex_ok &= buf[i] == big_byte(got + (size_t)i);
        got += (size_t)n;
    }
    CHECK(n == 0 && got == DUPLEX, "duplex: %zd after %zu bytes", n, got);
    gate_wait(&part.written);
    ld_io_close(s);
}

static void case_partial(void *arg)
{
    int slow_port, echo_port;
    ld_io_listener *slow = listen_loopback(4, &slow_port);
    ld_io_listener *echo = listen_loopback(4, &echo_port);

    (void)arg;
    part.bad_at = SIZE_MAX;
    if (slow != NULL) {
        go(slow_reader, slow);
        go(big_writer, (void *)(intptr_t)slow_port);
    }
    if (echo != NULL) {
        go(echo_one, echo);
        go(duplex_reader, (void *)(intptr_t)echo_port);
    }
}

static void check_partial(void)
{
    CHECK(part.got == BIG, "the slow reader read %zu of %u bytes", part.got, BIG);
    CHECK(part.bad_at == SIZE_MAX, "byte %zu out of order", part.bad_at);
    CHECK(part.got_at_return > 0, "the write returned before the reader read at all");
    CHECK(part.duplex_ok, "the duplex echo came back changed");
}

/* --- refused, timeouts -------------------------------------------------------------- */

static void case_refused(void *arg)
{
    int port;
    ld_io_listener *l = listen_loopback(1, &port);
    struct sockaddr_in a;
    ld_io_stream *s = NULL;
    int rc;

    (void)arg;
    if (l == NULL)
        return;
    ld_io_listener_close(l);
    a = loopback(port);
    rc = ld_io_connect((const struct sockaddr *)&a, PATIENCE, &s);
    CHECK(rc == -ECONNREFUSED && s == NULL, "connect to a closed port: %d", rc);
}

static gate late_go, x_read;

/* Writes only once the client's read has timed out. */
static void late_server(void *arg)
{
    ld_io_stream *s = take_one(arg);
    char c;

    if (s == NULL)
        return;
    gate_wait(&late_go);
    CHECK(ld_io_write(s, "late", 4, PATIENCE) == 0, "write late");
    CHECK(ld_io_read(s, &c, 1, PATIENCE) == 0, "the client's end");
    ld_io_close(s);
}

static void read_timeout_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char buf[16];
    uint64_t t0 = uv_hrtime(), el;
    ssize_t n;

    if (s == NULL)
        return;
    n = ld_io_read(s, buf, sizeof buf, 30 * MS);
    el = since(t0);
    CHECK(n == -ETIMEDOUT, "a read with no data: %zd", n);
    CHECK(el >= 30 * MS && el < 2 * SEC, "timed out after %llu ns",
          (unsigned long long)el);
    gate_open(&late_go);
    n = ld_io_read(s, buf, sizeof buf, PATIENCE);
    CHECK(n == 4 && memcmp(buf, "late", 4) == 0, "after a timeout the stream reads: %zd",
          n);
    ld_io_close(s);
}

static void dial_and_close(void *arg)
{
    ld_io_close(dial((int)(intptr_t)arg));
}

static void accept_timeout(void)
{
    int port;
    ld_io_listener *l = listen_loopback(4, &port);
    ld_io_stream *s = NULL;
    uint64_t t0 = uv_hrtime(), el;
    int rc;

    if (l == NULL)
        return;
    rc = ld_io_accept(l, 20 * MS, &s);
    el = since(t0);
    CHECK(rc == -ETIMEDOUT && s == NULL, "accept with nobody: %d", rc);
    CHECK(el >= 20 * MS && el < 2 * SEC, "timed out after %llu ns",
          (unsigned long long)el);
    go(dial_and_close, (void *)(intptr_t)port);
    rc = ld_io_accept(l, PATIENCE, &s);
    CHECK(rc == 0, "after a timeout the listener accepts: %d", rc);
    ld_io_close(s);
    ld_io_listener_close(l);
}

/* A plain socket that listens with no room in its queue and never accepts: once the
 * kernel has queued what it will, it drops the next handshake, so a connect hangs. */
static int full_queue(int *port)
{
    struct sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 0) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        CHECK(0, "a plain listening socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void connect_timeout(void)
{
    ld_io_stream *held[CONNECT_TRIES];
    struct sockaddr_in a;
    uint64_t t0 = 0;
    int port, fd = full_queue(&port), n = 0, rc = 0;

    if (fd < 0)
        return;
    a = loopback(port);
    while (n < CONNECT_TRIES) {
        t0 = uv_hrtime();
        rc = ld_io_connect((const struct sockaddr *)&a, 100 * MS, &held[n]);
        if (rc != 0)
            break;
        n++;
    }
    CHECK(rc == -ETIMEDOUT, "connect %d to a full queue: %d", n + 1, rc);
    CHECK(rc != -ETIMEDOUT || since(t0) >= 100 * MS, "timed out after %llu ns",
          (unsigned long long)since(t0));
    while (n > 0)
        ld_io_close(held[--n]);
    close(fd);
}

/* Never reads; writes one byte once the client's write has timed out. */
static void deaf_server(void *arg)
{
    ld_io_stream *s = take_one(arg);

    if (s == NULL)
        return;
    gate_wait(&late_go);
    CHECK(ld_io_write(s, "x", 1, PATIENCE) == 0, "write x");
    gate_wait(&x_read);
    ld_io_close(s);
}

static void write_timeout_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    uint64_t t0 = uv_hrtime(), el;
    char c = 0;
    int rc;

    if (s == NULL)
        return;
    rc = ld_io_write(s, big, BIG, 50 * MS);
    el = since(t0);
    CHECK(rc == -ETIMEDOUT, "16 MiB to a peer that never reads: %d", rc);
    CHECK(el >= 50 * MS && el < 2 * SEC, "timed out after %llu ns",
          (unsigned long long)el);
    CHECK(ld_io_write(s, "y", 1, 0) == -ETIMEDOUT, "the write side is broken");
    CHECK(ld_io_shutdown(s, 0) == -ETIMEDOUT, "so is shutdown");
    gate_open(&late_go);
    CHECK(ld_io_read(s, &c, 1, PATIENCE) == 1 && c == 'x', "reads go on: %c", c);
    gate_open(&x_read);
    ld_io_close(s);
}

static void case_timeouts(void *arg)
{
    int port;
    ld_io_listener *l = listen_loopback(4, &port);

    (void)arg;
    if (l != NULL) {
        go(late_server, l);
        go(read_timeout_client, (void *)(intptr_t)port);
    }
    accept_timeout();
    connect_timeout();
}

static void case_write_timeout(void *arg)
{
    int port;
    ld_io_listener *l = listen_loopback(4, &port);

    (void)arg;
    late_go = (gate){0};
    if (l != NULL) {
        go(deaf_server, l);
        go(write_timeout_client, (void *)(intptr_t)port);
    }
}

/* --- peers that vanish -------------------------------------------------------------- */

static gate reset_sent;
static int echo_trips;

/* Closes with the client's bytes unread, so the kernel resets the connection. */
static void reset_server(void *arg)
{
    ld_io_stream *s = take_one(arg);

    gate_wait(&reset_sent);
    ld_io_close(s);
}

static void reset_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char buf[100];
    ssize_t n;
    int rc = 0, k;

    if (s == NULL)
        return;
    CHECK(ld_io_write(s, "unread now", 10, PATIENCE) == 0, "write");
    gate_open(&reset_sent);
    n = ld_io_read(s, buf, sizeof buf, PATIENCE);
    CHECK(n == -ECONNRESET, "a read when the peer resets: %zd", n);
    for (k = 0; k < 8 && rc == 0; k++)
        rc = ld_io_write(s, big, LD_IO_CHUNK, PATIENCE);
    CHECK(rc == -EPIPE || rc == -ECONNRESET, "a write to a peer that is gone: %d", rc);
    ld_io_close(s);
}

/* Writes to a peer that has closed: the first is taken, the peer's kernel answers it
 * with a reset, and the next get -ECONNRESET, then -EPIPE, where the process would die
 * of SIGPIPE if the runtime let it. */
static void write_to_gone(ld_io_stream *s)
{
    int k, rc = 0, errors = 0;

    for (k = 0; k < 8; k++) {
        rc = ld_io_write(s, "?", 1, PATIENCE);
        errors += rc != 0;
        ld_gt_sleep_ns(2 * MS);
    }
    CHECK(errors >= 2 && rc == -EPIPE, "writes to a closed peer: %d failed, last %d",
          errors, rc);
}

/* Sends a hundred bytes and closes while the client waits for more. */
static void fin_server(void *arg)
{
    ld_io_stream *s = take_one(arg);

    if (s == NULL)
        return;
    CHECK(ld_io_write(s, big, 100, PATIENCE) == 0, "write 100");
    ld_gt_sleep_ns(5 * MS);
    ld_io_close(s);
}

static void fin_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char buf[1000];
    ssize_t n;

    if (s == NULL)
        return;
    n = read_full(s, buf, sizeof buf);
    CHECK(n == 100 && memcmp(buf, big, 100) == 0, "the bytes before the end: %zd", n);
    CHECK(ld_io_read(s, buf, sizeof buf, PATIENCE) == 0, "then the end");
    write_to_gone(s);
    ld_io_close(s);
}

/* Round trips a millisecond apart, through the other connections' ends. */
static void steady_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char back[32];
    int r;

    if (s == NULL)
        return;
    for (r = 0; r < 50; r++) {
        if (ld_io_write(s, big + r, sizeof back, PATIENCE) != 0 ||
            read_full(s, back, sizeof back) != (ssize_t)sizeof back ||
            memcmp(back, big + r, sizeof back) != 0)
            break;
        echo_trips++;
        ld_gt_sleep_ns(MS);
    }
    ld_io_close(s);
}

static void case_vanish(void *arg)
{
    static const ld_gt_fn servers[] = {reset_server, fin_server, echo_one};
    static const ld_gt_fn clients[] = {reset_client, fin_client, steady_client};
    int port;

    (void)arg;
    for (size_t i = 0; i < sizeof servers / sizeof servers[0]; i++) {
        ld_io_listener *l = listen_loopback(4, &port);
        if (l == NULL)
            return;
        go(servers[i], l);
        go(clients[i], (void *)(intptr_t)port);
    }
}

/* --- one reader at a time ---------------------------------------------------------- */

static struct {
    ld_io_stream *s; /* the first reader's */
    bool done;       /* its read has returned */
    ssize_t got;     /* what it returned */
    int busy, other; /* what the eager reader's reads returned meanwhile */
} one;

static void first_reader(void *arg)
{
    char buf[16];

    one.s = dial((int)(intptr_t)arg);
    if (one.s == NULL)
        return;
    one.got = ld_io_read(one.s, buf, sizeof buf, PATIENCE);
    one.done = true;
    ld_io_close(one.s);
}

/* Reads and yields, over and over, from before the first reader's bytes come until it
 * has returned with them: the stream is the first reader's all along, also once it
 * has been woken and before it runs. */
static void eager_reader(void *arg)
{
    char buf[16];

    (void)arg;
    for (int k = 0; k < 1000000 && !one.done; k++) {
        if (one.s != NULL) {
            ssize_t n = ld_io_read(one.s, buf, sizeof buf, PATIENCE);
            one.busy += n == -EBUSY;
            one.other += n != -EBUSY;
        }
        ld_gt_yield();
    }
}

static void one_server(void *arg)
{
    ld_io_stream *s = take_one(arg);
    char c;

    if (s == NULL)
        return;
    ld_gt_sleep_ns(5 * MS);
    CHECK(ld_io_write(s, "m", 1, PATIENCE) == 0, "write m");
    CHECK(ld_io_read(s, &c, 1, PATIENCE) == 0, "the first reader's end");
    ld_io_close(s);
}

static void case_one_reader(void *arg)
{
    int port;
    ld_io_listener *l = listen_loopback(4, &port);

    (void)arg;
    if (l == NULL)
        return;
    go(one_server, l);
    go(first_reader, (void *)(intptr_t)port);
    go(eager_reader, NULL);
}

/* --- the accept queue ------------------------------------------------------------ */

/* For a backlog of 2: as many as the kernel queues at once, then two in the
 * listener's queue and one held. */
#define QUEUE_CLIENTS 3

static int queue_served, queue_ended;

static void queue_client(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    char c = 0;
    ssize_t n;

    if (s == NULL)
        return;
    n = ld_io_read(s, &c, 1, PATIENCE);
    queue_served += n == 1 && c == 'q';
    queue_ended += n == 0;
    ld_io_close(s);
}

/* Accepts only once the connections have filled the listener's queue and more. */
static void late_acceptor(void *arg)
{
    ld_io_stream *s;
    int i, rc = 0;

    ld_gt_sleep_ns(30 * MS);
    for (i = 0; i < QUEUE_CLIENTS && rc == 0; i++) {
        rc = ld_io_accept(arg, PATIENCE, &s);
        if (rc == 0)
            rc = ld_io_write(s, "q", 1, PATIENCE);
        if (rc == 0)
            ld_io_close(s);
    }
    CHECK(rc == 0, "accept %d past a full queue: %d", i, rc);
    ld_io_listener_close(arg);
}

/* Closes its listener with two connections accepted and never handed out. */
static void closer_of_queued(void *arg)
{
    ld_gt_sleep_ns(30 * MS);
    ld_io_listener_close(arg);
}

static void case_queue(void *arg)
{
    int port, queued_port, i;
    ld_io_listener *l = listen_loopback(2, &port);
    ld_io_listener *q = listen_loopback(4, &queued_port);

    (void)arg;
    if (l == NULL || q == NULL)
        return;
    go(late_acceptor, l);
    for (i = 0; i < QUEUE_CLIENTS; i++)
        go(queue_client, (void *)(intptr_t)port);
    go(closer_of_queued, q);
    for (i = 0; i < 2; i++)
        go(queue_client, (void *)(intptr_t)queued_port);
}

/* --- close, refusals ---------------------------------------------------------------- */

static ld_io_stream *parked_on;

static void parked_reader(void *arg)
{
    char buf[16];
    ssize_t n;

    parked_on = dial((int)(intptr_t)arg);
    if (parked_on == NULL)
        return;
    n = ld_io_read(parked_on, buf, sizeof buf, 0);
    CHECK(n == -ECANCELED, "a read parked when another thread closes: %zd", n);
}

static void second_reader(void *arg)
{
    char buf[16];

    (void)arg;
    ld_gt_sleep_ns(10 * MS);
    if (parked_on == NULL)
        return;
    CHECK(ld_io_read(parked_on, buf, sizeof buf, 0) == -EBUSY, "a second reader");
    ld_io_close(parked_on);
}

static void parked_acceptor(void *arg)
{
    ld_io_stream *s = NULL;
    int rc = ld_io_accept(arg, 0, &s);

    CHECK(rc == -ECANCELED && s == NULL, "an accept parked when the listener closes: %d",
          rc);
}

static void listener_closer(void *arg)
{
    ld_gt_sleep_ns(10 * MS);
    ld_io_listener_close(arg);
}

static gate write_cancelled;

/* Holds its connection open and unread until the client's write is cancelled. */
static void deaf_until_cancelled(void *arg)
{
    ld_io_stream *s = take_one(arg);

    gate_wait(&write_cancelled);
    ld_io_close(s);
}

static void stream_closer(void *arg)
{
    ld_gt_sleep_ns(10 * MS);
    ld_io_close(arg);
}

static void parked_writer(void *arg)
{
    ld_io_stream *s = dial((int)(intptr_t)arg);
    int rc;

    if (s != NULL) {
        go(stream_closer, s);
        rc = ld_io_write(s, big, BIG, 0);
        CHECK(rc == -ECANCELED, "a write parked when another thread closes: %d", rc);
    }
    gate_open(&write_cancelled);
}

static void case_cancel(void *arg)
{
    int port, idle_port, deaf_port;
    ld_io_listener *l = listen_loopback(4, &port);
    ld_io_listener *idle = listen_loopback(4, &idle_port);
    ld_io_listener *deaf = listen_loopback(4, &deaf_port);
    ld_io_stream *s = NULL;

    (void)arg;
    if (l == NULL || idle == NULL || deaf == NULL)
        return;
    CHECK(ld_io_read(s, &port, 1, 0) == -EINVAL, "a read of no stream");
    go(parked_reader, (void *)(intptr_t)port);
    go(second_reader, NULL);
    go(echo_one, l);
    go(parked_acceptor, idle);
    go(listener_closer, idle);
    go(deaf_until_cancelled, deaf);
    go(parked_writer, (void *)(intptr_t)deaf_port);
}

static ld_io_listener *kept_l;
static ld_io_stream *kept[2];

static void keep_open(void *arg)
{
    int port;

    (void)arg;
    kept_l = listen_loopback(4, &port);
    if (kept_l == NULL)
        return;
    kept[0] = dial(port);
    CHECK(ld_io_accept(kept_l, PATIENCE, &kept[1]) == 0, "accept");
}

/* Streams left open do not keep the run going; outside a green thread nothing may
 * block, and a close is still fine there. */
static void case_outside(void)
{
    struct sockaddr_in a = loopback(1);
    ld_io_stream *s = NULL;
    char c;
    int rc;

    CHECK(ld_io_listen((const struct sockaddr *)&a, 4, &kept_l) == -EPERM,
          "a listen with no scheduler");
    rc = test_sched_create(&sched);
    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    rc = ld_gt_spawn(sched, keep_open, NULL, NULL);
    rc = rc != 0 ? rc : ld_sched_run(sched);
    CHECK(rc == 0, "a run with streams left open: %d", rc);
    if (kept[0] != NULL && kept[1] != NULL) {
        CHECK(ld_io_read(kept[1], &c, 1, 0) == -EPERM, "a read outside a green thread");
        CHECK(ld_io_write(kept[0], "z", 1, 0) == -EPERM, "a write outside");
        CHECK(ld_io_shutdown(kept[0], 0) == -EPERM, "a shutdown outside");
        CHECK(ld_io_connect((const struct sockaddr *)&a, 0, &s) == -EPERM, "a connect");
        CHECK(ld_io_accept(kept_l, 0, &s) == -EPERM, "an accept outside");
        CHECK(ld_io_listener_port(kept_l) > 0, "the port, outside");
    }
    ld_io_close(kept[0]);
    ld_io_close(kept[1]);
    ld_io_listener_close(kept_l);
    ld_sched_destroy(sched);
}

/* --- a thousand echoes on one carrier ----------------------------------------------- */

static struct {
    int port;
    int arrived, done, trips; /* arrived: dialled, connected or not */
    uint64_t t0, t1;
    gate all_in;
} echo;

static void echo_acceptor(void *arg)
{
    ld_io_listener *l = arg;
    ld_io_stream *s;
    int i, rc = 0;

    for (i = 0; i < ECHO_CLIENTS && rc == 0; i++) {
        rc = ld_io_accept(l, ECHO_PATIENCE, &s);
        if (rc == 0)
            go(echo_handler, s);
    }
    CHECK(rc == 0, "accept %d: %d", i, rc);
    ld_io_listener_close(l);
}

static unsigned char echo_byte(int id, int round, size_t i)
{
    return (unsigned char)(id * 7 + round * 13 + (int)i);
}

/* One message there and back: 0, the error, or -EPROTO for other bytes back. */
static ssize_t round_trip(ld_io_stream *s, const unsigned char *msg, unsigned char *back,
                          size_t len)
{
    ssize_t rc = ld_io_write(s, msg, len, PATIENCE);

    if (rc == 0)
        rc = read_full(s, back, len);
    if (rc >= 0)
        rc = rc == (ssize_t)len && memcmp(back, msg, len) == 0 ? 0 : -EPROTO;
    return rc;
}

/* Its messages, of a length and bytes of its own, from buffers on its own stack. */
static void echo_client(void *arg)
{
    int id = (int)(intptr_t)arg, r;
    unsigned char msg[ECHO_MAX], back[ECHO_MAX];
    ld_io_stream *s = dial_within(echo.port, ECHO_PATIENCE);
    ssize_t rc = 0;

    /* The last to arrive opens the gate, connected or not, so that a failed connect
     * is a failure and not a hang. */
    if (++echo.arrived == ECHO_CLIENTS) {
        echo.t0 = uv_hrtime();
        gate_open(&echo.all_in);
    }
    if (s == NULL)
        return;
    gate_wait(&echo.all_in);
    for (r = 0; r < ECHO_ROUNDS && rc == 0; r++) {
        size_t len = 1 + (size_t)(id * 31 + r) % ECHO_MAX;
        for (size_t i = 0; i < len; i++)
            msg[i] = echo_byte(id, r, i);
        rc = round_trip(s, msg, back, len);
        echo.trips += rc == 0;
    }
    CHECK(rc == 0, "client %d: round trip %d: %zd", id, r, rc);
    ld_io_close(s);
    if (++echo.done == ECHO_CLIENTS)
        echo.t1 = uv_hrtime();
}

static void case_echo(void *arg)
{
    ld_io_listener *l = listen_loopback(ECHO_CLIENTS + 24, &echo.port);

    (void)arg;
    if (l == NULL)
        return;
    go(echo_acceptor, l);
    for (int i = 0; i < ECHO_CLIENTS; i++)
        go(echo_client, (void *)(intptr_t)i);
}

/* --- main --------------------------------------------------------------------------- */

/* A scheduler of the test's mode with fn as its first thread, run dry, destroyed. */
static void run_case(const char *name, ld_gt_fn fn)
{
    uint64_t t0 = uv_hrtime();
    int before = failures;
    int rc = test_sched_create(&sched);

    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    rc = ld_gt_spawn(sched, fn, NULL, NULL);
    rc = rc != 0 ? rc : ld_sched_run(sched);
    CHECK(rc == 0, "%s: ld_sched_run: %d", name, rc);
    ld_sched_destroy(sched);
    printf("%-9s %s in %.0f ms\n", name, failures == before ? "ok" : "FAILED",
           (double)since(t0) / 1e6);
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(100);
    big = malloc(BIG);
    if (big == NULL)
        return 1;
    for (size_t i = 0; i < BIG; i++)
        big[i] = big_byte(i);
    run_case("short", case_short);
    run_case("partial", case_partial);
    check_partial();
    run_case("refused", case_refused);
    run_case("timeouts", case_timeouts);
    run_case("wtimeout", case_write_timeout);
    run_case("vanish", case_vanish);
    CHECK(echo_trips == 50, "the echo beside them: %d of 50 round trips", echo_trips);
    run_case("onereader", case_one_reader);
    CHECK(one.got == 1 && one.busy > 0 && one.other == 0,
          "one reader: it read %zd; the other got -EBUSY %d times, else %d times",
          one.got, one.busy, one.other);
    run_case("queue", case_queue);
    CHECK(queue_served == QUEUE_CLIENTS && queue_ended == 2,
          "queue: %d of %d served, %d of 2 closed queued", queue_served, QUEUE_CLIENTS,
          queue_ended);
    run_case("cancel", case_cancel);
    case_outside();
    run_case("echo", case_echo);
    CHECK(echo.trips == ECHO_CLIENTS * ECHO_ROUNDS, "echo: %d round trips", echo.trips);
    if (echo.t1 > echo.t0)
        printf("echo: %d connections on one carrier, %d round trips in %.0f ms: %.0f/s\n",
               ECHO_CLIENTS, echo.trips, (double)(echo.t1 - echo.t0) / 1e6,
               echo.trips / ((double)(echo.t1 - echo.t0) / 1e9));
    free(big);
    return failures != 0;
}

/* gt_io.c: TCP streams and listeners whose calls park a green thread until a libuv
 * callback makes it runnable again (gt_io.h).
 *
 * Each object holds its uv_tcp_t, and each kind of blocking call on it an io_wait: the
 * thread parked in it and a uv_timer for its timeout. Whichever of the request's
 * callback, the timer and a close comes first resumes the thread, through the
 * runtime's own wake-up channel (ld_gt_suspend, ld_gt_resume), so that a program's
 * park and unpark never meet it; the others then find nobody waiting. Timeouts are
 * libuv timers rather than the carrier's deadlines (deadlines.h): an I/O wait mostly
 * ends before its timeout, and a deadline cannot be taken back.
 *
 * An object's memory goes when its handles are closed and no thread is parked in it
 * any more: the count of both, its holds, falls to zero.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gt.h"
#include "gt_io.h"
#include "gt_sched.h"

_Static_assert(UV_ETIMEDOUT == -ETIMEDOUT, "gt_io.h: -ETIMEDOUT is UV_ETIMEDOUT");
_Static_assert(UV_ECANCELED == -ECANCELED, "gt_io.h: -ECANCELED is UV_ECANCELED");

#define IO_NS_PER_MS 1000000u

/* The most one uv_try_write is offered: it answers in an int. */
#define IO_TRY_MAX (1u << 30)

/* A timeout this long is as good as none, and keeps a deadline from overflowing. */
#define IO_TIMEOUT_MAX (UINT64_MAX / 4)

/* One kind of blocking call on an object. The timer comes first, so that its callback
 * finds the wait. */
typedef struct io_wait {
    uv_timer_t timer;
    ld_gt *waiter;     /* the thread parked here, or NULL */
    uint64_t deadline; /* uv_hrtime() at which the wait times out; 0: never */
    int status;        /* what resumed it: 0, a libuv error or -ETIMEDOUT */
    bool woken;        /* resumed, and yet to run */
} io_wait;

/* What streams and listeners share, first in each, so that it is the allocation. The
 * data of every handle is the core. */
typedef struct io_core {
    uv_tcp_t tcp;
    ld_sched *sched;
    io_wait *waits; /* the object's own, nwaits of them */
    unsigned nwaits;
    unsigned holds; /* handles not yet closed, plus threads parked in the object */
    bool closed;
} io_core;

/* Connections are accepted in libuv's callback, into a queue of up to the backlog, so
 * that a burst is taken in one turn of the loop rather than one a turn. */
struct ld_io_listener {
    io_core core;
    io_wait accept;
    ld_io_stream *head; /* accepted and not yet handed out, oldest first */
    ld_io_stream *tail;
    unsigned queued;
    unsigned room; /* the backlog: how many may queue */
    bool held;     /* libuv holds one more for uv_accept: the queue was full */
    int error;     /* a failed accept, for an ld_io_accept that finds none queued */
};

enum { IO_READ, IO_WRITE, IO_WAITS }; /* a stream's two sides, each with its wait */

struct ld_io_stream {
    io_core core;
    io_wait waits[IO_WAITS];
    union { /* the write side's one request at a time */
        uv_connect_t connect;
        uv_write_t write;
        uv_shutdown_t shutdown;
    } req;
    char *rbuf;  /* LD_IO_CHUNK bytes, from the first read */
    size_t roff; /* its unread bytes are [roff, roff + rlen) */
    size_t rlen;
    char *wbuf;         /* LD_IO_CHUNK bytes, from the first write that waits */
    int rerr;           /* UV_EOF or a read error, told once the unread bytes are read */
    int werr;           /* -ETIMEDOUT once a write-side request outlived its call */
    bool reading;       /* uv_read_start is in force */
    ld_io_stream *next; /* in its listener's queue, until accepted */
};

/* The last hold to go frees the object; a stream's buffers went at its close. */
static void io_unhold(io_core *c)
{
    if (--c->holds == 0)
        free(c);
}

/* Every handle of an object holds it until libuv has closed the handle. */
static void io_on_closed(uv_handle_t *h)
{
    io_unhold(h->data);
}

/* Resume the thread parked in w with status, the first time only. It stays the wait's
 * until it runs, so that no other thread can begin a call of the same kind, and take
 * what it was woken for, in between. */
static void io_wake(io_wait *w, int status)
{
    if (w->waiter == NULL || w->woken)
        return;
    w->woken = true;
    w->status = status;
    uv_timer_stop(&w->timer);
    ld_gt_resume(w->waiter);
}

/* Whole milliseconds from now to deadline, rounded up: a libuv timer counts no finer. */
static uint64_t io_ms_until(uint64_t deadline, uint64_t now)
{
    return (deadline - now + IO_NS_PER_MS - 1) / IO_NS_PER_MS;
}

/* The loop's clock is coarser than uv_hrtime's, so its timer may come a little early:
 * then it is set again for the rest, and no call times out before its time. */
static void io_on_timeout(uv_timer_t *t)
{
    io_wait *w = (io_wait *)t;
    uint64_t now = uv_hrtime();

    if (now < w->deadline &&
        uv_timer_start(t, io_on_timeout, io_ms_until(w->deadline, now), 0) == 0)
        return;
    io_wake(w, -ETIMEDOUT);
}

/* The deadline of a call that begins now, or 0 for none. */
static uint64_t io_deadline(uint64_t timeout_ns)
{
    if (timeout_ns == 0)
        return 0;
    return uv_hrtime() + (timeout_ns < IO_TIMEOUT_MAX ? timeout_ns : IO_TIMEOUT_MAX);
}

/* With a request under way whose callback wakes w: park until it does, the deadline
 * passes or the object is closed. -ECANCELED says closed, and the object may then be
 * gone already: the caller must not touch it again. The loop's clock may be stale by
 * a batch of green threads, so it is read afresh before the timer is set. */
static int io_park(io_core *c, io_wait *w, uint64_t deadline)
{
    uint64_t now;
    int rc;

    w->deadline = deadline;
    if (deadline != 0) {
        now = uv_hrtime();
        if (now >= deadline)
            return -ETIMEDOUT;
        uv_update_time(ld_sched_loop(c->sched));
        rc = uv_timer_start(&w->timer, io_on_timeout, io_ms_until(deadline, now), 0);
        if (rc != 0)
            return rc;
    }
    w->waiter = ld_gt_self();
    c->holds++;
    ld_gt_suspend();
    w->waiter = NULL;
    w->woken = false;
    if (c->closed) {
        io_unhold(c);
        return -ECANCELED;
    }
    c->holds--;
    return w->status;
}

/* The socket and the waits' timers, on sched's loop. None keeps the loop alive: a
 * parked thread does that (gt.h), and an idle open stream must not. */
static int io_core_init(io_core *c, ld_sched *sched, io_wait *waits, unsigned n)
{
    uv_loop_t *loop = ld_sched_loop(sched);
    unsigned i;
    int rc = uv_tcp_init(loop, &c->tcp);

    if (rc != 0)
        return rc;
    c->tcp.data = c;
    uv_unref((uv_handle_t *)&c->tcp);
    for (i = 0; i < n; i++) {
        uv_timer_init(loop, &waits[i].timer);
        waits[i].timer.data = c;
        uv_unref((uv_handle_t *)&waits[i].timer);
    }
    c->sched = sched;
    c->waits = waits;
    c->nwaits = n;
    c->holds = n + 1;
    return 0;
}

/* Threads parked in the object are woken first, since its socket will never answer
 * them; closing the socket then cancels its requests under way. */
static void io_core_close(io_core *c)
{
    unsigned i;

    c->closed = true;
    for (i = 0; i < c->nwaits; i++) {
        io_wake(&c->waits[i], -ECANCELED);
        uv_close((uv_handle_t *)&c->waits[i].timer, io_on_closed);
    }
    uv_close((uv_handle_t *)&c->tcp, io_on_closed);
}

/* A blocking call is made by a green thread on the object's own carrier, while no
 * other thread is parked in the same kind of call. */
static int io_enter(const io_core *c, const io_wait *w)
{
    if (ld_gt_self() == NULL || ld_sched_self() != c->sched)
        return -EPERM;
    return w->waiter != NULL ? -EBUSY : 0;
}

static pthread_once_t io_sigpipe_once = PTHREAD_ONCE_INIT;

/* libuv writes with write(2), so a write to a peer that has gone raises SIGPIPE, whose
 * default kills the process: ignore it, unless the program has chosen otherwise. */
static void io_ignore_sigpipe(void)
{
    struct sigaction old, ign;

    if (sigaction(SIGPIPE, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 ||
        old.sa_handler != SIG_DFL)
        return;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);
}

/* A stream on sched's loop, its socket not yet connected or accepted. */
static int stream_new(ld_sched *sched, ld_io_stream **out)
{
    ld_io_stream *s = calloc(1, sizeof *s);
    int rc;

    if (s == NULL)
        return -ENOMEM;
    rc = io_core_init(&s->core, sched, s->waits, IO_WAITS);
    if (rc != 0) {
        free(s);
        return rc;
    }
    pthread_once(&io_sigpipe_once, io_ignore_sigpipe);
    *out = s;
    return 0;
}

/* The end of a connect, write or shutdown: the write side's request. */
static void stream_write_side_done(uv_stream_t *h, int status)
{
    ld_io_stream *s = h->data;

    io_wake(&s->waits[IO_WRITE], status);
}

/* libuv's three callback types for it. */
static void stream_on_connect(uv_connect_t *req, int status)
{
    stream_write_side_done(req->handle, status);
}

static void stream_on_written(uv_write_t *req, int status)
{
    stream_write_side_done(req->handle, status);
}

static void stream_on_shutdown(uv_shutdown_t *req, int status)
{
    stream_write_side_done(req->handle, status);
}

/* Park the write side until its request is done. One still under way at the deadline
 * breaks the side: its buffer and request are libuv's until the stream closes. */
static int stream_wait_write_side(ld_io_stream *s, uint64_t deadline)
{
    int rc = io_park(&s->core, &s->waits[IO_WRITE], deadline);

    if (rc == -ETIMEDOUT)
        s->werr = rc;
    return rc;
}

/* libuv reads into the rest of the stream's buffer, the unread bytes first moved to
 * its front. */
static void stream_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    ld_io_stream *s = h->data;

    (void)suggested;
    if (s->roff != 0) {
        memmove(s->rbuf, s->rbuf + s->roff, s->rlen);
        s->roff = 0;
    }
    *buf = uv_buf_init(s->rbuf + s->rlen, (unsigned)(LD_IO_CHUNK - s->rlen));
}

/* Stopped reading is restarted by the next read that finds the buffer empty. */
static void stream_read_stop(ld_io_stream *s)
{
    uv_read_stop((uv_stream_t *)&s->core.tcp);
    s->reading = false;
}

/* Reading goes on while the buffer has room, so that bytes wait here for the next
 * read; a full buffer (UV_ENOBUFS, should libuv ask again), the end or an error stops
 * it. */
static void stream_on_read(uv_stream_t *h, ssize_t n, const uv_buf_t *buf)
{
    ld_io_stream *s = h->data;

    (void)buf;
    if (n == 0)
        return;
    if (n > 0)
        s->rlen += (size_t)n;
    else if (n != UV_ENOBUFS)
        s->rerr = (int)n;
    if (n < 0 || s->rlen == LD_IO_CHUNK)
        stream_read_stop(s);
    io_wake(&s->waits[IO_READ], 0);
}

/* A read that finds the buffer empty starts reading; the first makes the buffer. */
static int stream_read_start(ld_io_stream *s)
{
    int rc;

    if (s->reading)
        return 0;
    if (s->rbuf == NULL && (s->rbuf = malloc(LD_IO_CHUNK)) == NULL)
        return -ENOMEM;
    rc = uv_read_start((uv_stream_t *)&s->core.tcp, stream_on_alloc, stream_on_read);
    if (rc == 0)
        s->reading = true;
    return rc;
}

/* Copy out what the buffer holds; with nothing left, the end (0) or the error. */
static ssize_t stream_take(ld_io_stream *s, void *buf, size_t len)
{
    size_t n = len < s->rlen ? len : s->rlen;

    if (n == 0)
        return s->rerr == UV_EOF ? 0 : s->rerr;
    memcpy(buf, s->rbuf + s->roff, n);
    s->roff += n;
    s->rlen -= n;
    return (ssize_t)n;
}

/* Write what the socket takes now, without parking: how many bytes, or an error. */
static int stream_try(ld_io_stream *s, const char *p, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)p, len < IO_TRY_MAX ? (unsigned)len : IO_TRY_MAX);
    int n = uv_try_write((uv_stream_t *)&s->core.tcp, &b, 1);

    return n == UV_EAGAIN ? 0 : n;
}

/* Copy the next piece into the stream's buffer and park until libuv has written it,
 * so that no byte the kernel has yet to take lives on the caller's stack. */
static int stream_write_piece(ld_io_stream *s, const char *p, size_t n, uint64_t deadline)
{
    uv_buf_t b;
    int rc;

    if (s->wbuf == NULL && (s->wbuf = malloc(LD_IO_CHUNK)) == NULL)
        return -ENOMEM;
    memcpy(s->wbuf, p, n);
    b = uv_buf_init(s->wbuf, (unsigned)n);
    rc = uv_write(&s->req.write, (uv_stream_t *)&s->core.tcp, &b, 1, stream_on_written);
    return rc != 0 ? rc : stream_wait_write_side(s, deadline);
}

/* The connection libuv holds, into a new stream at the tail of l's queue. A stream
 * that cannot be had leaves it held, for the next accept to try again. */
static int listener_take(ld_io_listener *l)
{
    ld_io_stream *s;
    int rc = stream_new(l->core.sched, &s);

    if (rc != 0)
        return rc;
    l->held = false;
    rc = uv_accept((uv_stream_t *)&l->core.tcp, (uv_stream_t *)&s->core.tcp);
    if (rc == 0)
        rc = uv_tcp_nodelay(&s->core.tcp, 1);
    if (rc != 0) {
        ld_io_close(s);
        return rc;
    }
    if (l->tail != NULL)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    l->queued++;
    return 0;
}

/* The oldest connection of l's queue, handed out. */
static ld_io_stream *listener_pop(ld_io_listener *l)
{
    ld_io_stream *s = l->head;

    l->head = s->next;
    if (l->head == NULL)
        l->tail = NULL;
    l->queued--;
    s->next = NULL;
    return s;
}

/* libuv accepts the next connection once this one has been taken with uv_accept, and
 * waits for that otherwise: a full queue holds it there. */
static void listener_on_connection(uv_stream_t *h, int status)
{
    ld_io_listener *l = h->data;

    l->held = status == 0;
    if (status == 0 && l->queued < l->room)
        status = listener_take(l);
    if (status < 0)
        l->error = status;
    io_wake(&l->accept, status);
}

int ld_io_connect(const struct sockaddr *addr, uint64_t timeout_ns, ld_io_stream **out)
{
    ld_io_stream *s;
    int rc;

    if (addr == NULL || out == NULL)
        return -EINVAL;
    if (ld_gt_self() == NULL)
        return -EPERM;
    rc = stream_new(ld_sched_self(), &s);
    if (rc != 0)
        return rc;
    rc = uv_tcp_connect(&s->req.connect, &s->core.tcp, addr, stream_on_connect);
    if (rc == 0)
        rc = io_park(&s->core, &s->waits[IO_WRITE], io_deadline(timeout_ns));
    if (rc == -ECANCELED) /* closed, and so gone, though nobody else has it yet */
        return rc;
    if (rc == 0)
        rc = uv_tcp_nodelay(&s->core.tcp, 1);
    if (rc != 0) {
        ld_io_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* A listener that failed to bind or listen is closed like any other. */
int ld_io_listen(const struct sockaddr *addr, int backlog, ld_io_listener **out)
{
    ld_sched *sched = ld_sched_self();
    ld_io_listener *l;
    int rc;

    if (addr == NULL || out == NULL || backlog <= 0)
        return -EINVAL;
    if (sched == NULL)
        return -EPERM;
    l = calloc(1, sizeof *l);
    if (l == NULL)
        return -ENOMEM;
    l->room = (unsigned)backlog;
    rc = io_core_init(&l->core, sched, &l->accept, 1);
    if (rc != 0) {
        free(l);
        return rc;
    }
    rc = uv_tcp_bind(&l->core.tcp, addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&l->core.tcp, backlog, listener_on_connection);
    if (rc != 0) {
        io_core_close(&l->core);
        return rc;
    }
    *out = l;
    return 0;
}

int ld_io_listener_port(const ld_io_listener *l)
{
    struct sockaddr_storage ss;
    int len = (int)sizeof ss, rc;

    if (l == NULL)
        return -EINVAL;
    if (ld_sched_self() != l->core.sched)
        return -EPERM;
    rc = uv_tcp_getsockname(&l->core.tcp, (struct sockaddr *)&ss, &len);
    if (rc != 0)
        return rc;
    if (ss.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
    return -EAFNOSUPPORT;
}

/* A connection held for want of room is taken now that one leaves; queued
 * connections go out before an error is told. */
int ld_io_accept(ld_io_listener *l, uint64_t timeout_ns, ld_io_stream **out)
{
    int rc;

    if (l == NULL || out == NULL)
        return -EINVAL;
    rc = io_enter(&l->core, &l->accept);
    if (rc != 0)
        return rc;
    if (l->queued == 0 && !l->held && l->error == 0) {
        rc = io_park(&l->core, &l->accept, io_deadline(timeout_ns));
        if (rc == -ECANCELED)
            return rc;
    }
    if (l->held) {
        int err = listener_take(l);
        if (err != 0)
            l->error = err;
    }
    if (l->queued != 0) {
        *out = listener_pop(l);
        return 0;
    }
    if (l->error != 0) {
        rc = l->error;
        l->error = 0;
    }
    return rc;
}

/* Bytes that beat a timeout to the buffer are read all the same. */
ssize_t ld_io_read(ld_io_stream *s, void *buf, size_t len, uint64_t timeout_ns)
{
    int rc;

    if (s == NULL || buf == NULL || len == 0)
        return -EINVAL;
    rc = io_enter(&s->core, &s->waits[IO_READ]);
    if (rc != 0)
        return rc;
    if (s->rlen == 0 && s->rerr == 0) {
        rc = stream_read_start(s);
        if (rc != 0)
            return rc;
        rc = io_park(&s->core, &s->waits[IO_READ], io_deadline(timeout_ns));
        if (rc == -ECANCELED || (s->rlen == 0 && s->rerr == 0))
            return rc;
    }
    return stream_take(s, buf, len);
}

/* A write or a shutdown takes the write side, which an earlier failure leaves broken:
 * 0, or why it cannot be had. */
static int write_side_enter(ld_io_stream *s)
{
    int rc = io_enter(&s->core, &s->waits[IO_WRITE]);
    return rc != 0 ? rc : s->werr;
}

/* Each round writes what the socket takes at once, then parks on a piece of the rest;
 * the deadline covers the whole call. */
int ld_io_write(ld_io_stream *s, const void *buf, size_t len, uint64_t timeout_ns)
{
    const char *p = buf;
    uint64_t deadline;
    size_t n;
    int rc;

    if (s == NULL || (buf == NULL && len != 0))
        return -EINVAL;
    if ((rc = write_side_enter(s)) != 0)
        return rc;
    deadline = io_deadline(timeout_ns);
    while (len > 0) {
        rc = stream_try(s, p, len);
        if (rc < 0)
            return rc;
        p += rc;
        len -= (size_t)rc;
        if (len == 0)
            break;
        n = len < LD_IO_CHUNK ? len : LD_IO_CHUNK;
        rc = stream_write_piece(s, p, n, deadline);
        if (rc != 0)
            return rc;
        p += n;
        len -= n;
    }
    return 0;
}

int ld_io_shutdown(ld_io_stream *s, uint64_t timeout_ns)
{
    int rc;

    if (s == NULL)
        return -EINVAL;
    if ((rc = write_side_enter(s)) != 0)
        return rc;
    rc = uv_shutdown(&s->req.shutdown, (uv_stream_t *)&s->core.tcp, stream_on_shutdown);
    return rc != 0 ? rc : stream_wait_write_side(s, io_deadline(timeout_ns));
}

/* Once the socket is closed libuv reads and writes nothing more, so the buffers can
 * go at once; the struct waits for its holds. */
void ld_io_close(ld_io_stream *s)
{
    if (s == NULL || ld_sched_self() != s->core.sched)
        return;
    free(s->rbuf);
    free(s->wbuf);
    s->rbuf = NULL;
    s->wbuf = NULL;
    io_core_close(&s->core);
}

/* Connections accepted and never handed out are the listener's to close. */
void ld_io_listener_close(ld_io_listener *l)
{
    if (l == NULL || ld_sched_self() != l->core.sched)
        return;
    while (l->queued != 0)
        ld_io_close(listener_pop(l));
    io_core_close(&l->core);
}

/* gt_io.h: TCP sockets with blocking-style calls for green threads (gt.h).
 *
 * A call that has to wait parks the calling green thread on a libuv request of its
 * carrier's loop, and that request's callback makes it runnable again, as a sleep's
 * deadline does; the carrier runs its other green threads meanwhile.
 *
 * Whose. A stream or listener belongs to the scheduler of the carrier it was made on,
 * and is used on that carrier only: a call from anywhere else returns -EPERM (close
 * does nothing). Calls marked "in a green thread" must be made from a green thread of
 * that scheduler; the others may also be made on its OS thread outside one (before or
 * after ld_sched_run, say).
 *
 * At once. One green thread at a time may be in ld_io_read on a stream, one in a
 * write-side call (ld_io_write, ld_io_shutdown), and one in ld_io_accept on a
 * listener; a second gets -EBUSY. One thread may so read while another writes.
 *
 * Buffers, in both stack modes. The caller's bytes are touched only while the caller
 * runs: a write copies what the socket does not take at once into the stream's own
 * buffer, LD_IO_CHUNK bytes at a time, before it parks; a read parks for the stream's
 * own buffer to fill and copies out after it resumes. A buffer on a green thread's
 * stack is therefore fine in copy mode too. Every libuv handle and request lives in the
 * stream or listener, on the heap, never on a stack.
 *
 * Timeouts. timeout_ns 0 waits as long as it takes. Otherwise a call that has not
 * finished timeout_ns after it began (uv_hrtime's clock) returns -ETIMEDOUT, never
 * sooner; it is timed by a libuv timer, so it may end about a millisecond later, plus
 * scheduling delay. A read or accept that times out leaves its object as it was:
 * bytes and connections that arrive later are kept for the next call. A write or
 * shutdown that times out leaves the stream's write side broken: part of the bytes may
 * have been sent and the rest may still go, and every later write or shutdown returns
 * -ETIMEDOUT; reads still work. A connect that times out leaves nothing behind.
 *
 * Errors. Functions return 0 or a negative errno, never abort. On Unix these are
 * libuv's codes too: -ETIMEDOUT is UV_ETIMEDOUT, -ECONNREFUSED UV_ECONNREFUSED. A peer
 * that resets a connection gives -ECONNRESET (or -EPIPE) to the calls on that stream
 * alone. A write to a peer that has gone would raise SIGPIPE, which kills a process by
 * default and libuv does not suppress: the first stream made sets SIGPIPE to ignored
 * if its disposition is the default, and leaves a disposition the program chose alone.
 *
 * Closing. ld_io_close and ld_io_listener_close end the caller's ownership at once;
 * the memory goes when libuv has closed the handles, at the loop's next turn (the
 * scheduler runs it, and so does ld_sched_destroy). A green thread parked in a call on
 * the object when it is closed returns -ECANCELED. Open streams and listeners do not
 * keep ld_sched_run from returning, green threads do; close them all before
 * ld_sched_destroy. Every stream has Nagle's algorithm off (TCP_NODELAY), so a request
 * and its response never wait for a delayed ACK.
 *
 * Cost. Under 1 KiB a stream, plus a read buffer of LD_IO_CHUNK from its first read and
 * a write buffer of LD_IO_CHUNK from its first write the socket could not take whole.
 */
#ifndef LD_GT_IO_H
#define LD_GT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Bytes of a stream's read buffer, and of each piece a waiting write copies. */
#define LD_IO_CHUNK (64u * 1024u)

typedef struct ld_io_stream ld_io_stream;     /* one TCP connection */
typedef struct ld_io_listener ld_io_listener; /* one listening TCP socket */

/* In a green thread: connect to addr (IPv4 or IPv6) and give the new stream in *out.
 * -ECONNREFUSED, -ETIMEDOUT, -ENOMEM, -EINVAL, or another connect error. */
int ld_io_connect(const struct sockaddr *addr, uint64_t timeout_ns, ld_io_stream **out);

/* Bind to addr (port 0: one the kernel picks) and listen. backlog (> 0) bounds two
 * queues: the kernel's of connections not yet accepted (capped at
 * net.core.somaxconn), and the listener's own of connections it has accepted, as they
 * come, for ld_io_accept to hand out, so that a burst of them is taken in one turn of
 * the loop. -EADDRINUSE, -EINVAL, -ENOMEM, or another bind or listen error. */
int ld_io_listen(const struct sockaddr *addr, int backlog, ld_io_listener **out);

/* The port l is bound to (> 0), or a negative errno. */
int ld_io_listener_port(const ld_io_listener *l);

/* In a green thread: wait for the next connection to l and give its stream in *out.
 * -ETIMEDOUT, -ECANCELED (l was closed), -EBUSY, or an accept error (-EMFILE, ...)
 * once, after which the listener goes on. */
int ld_io_accept(ld_io_listener *l, uint64_t timeout_ns, ld_io_stream **out);

/* In a green thread: read at most len (> 0) bytes into buf. Returns how many (> 0) as
 * soon as there are any, 0 at the end of the stream (and at every read after it), or
 * a negative errno: -ETIMEDOUT (nothing came), -ECONNRESET, -ECANCELED, -EBUSY,
 * -EINVAL. Bytes that came before an end or an error are read first. */
ssize_t ld_io_read(ld_io_stream *s, void *buf, size_t len, uint64_t timeout_ns);

/* In a green thread: write all len bytes of buf, parking while the socket is full.
 * Returns 0 once every byte is with the kernel, or a negative errno: -EPIPE or
 * -ECONNRESET (the peer is gone), -ETIMEDOUT (see above), -ECANCELED, -EBUSY. */
int ld_io_write(ld_io_stream *s, const void *buf, size_t len, uint64_t timeout_ns);

/* In a green thread: end the stream's sending side; the peer then reads 0 once it has
 * read every byte before. Reads go on. A later write returns -EPIPE. */
int ld_io_shutdown(ld_io_stream *s, uint64_t timeout_ns);

/* Close s and free it (see Closing above); s must not be used after. NULL does
 * nothing. */
void ld_io_close(ld_io_stream *s);

/* Close l and free it, as ld_io_close does a stream, with the connections it has
 * accepted and not handed out. */
void ld_io_listener_close(ld_io_listener *l);

#endif

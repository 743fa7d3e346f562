/* pg_private.h: a private PostgreSQL a run starts for itself (--db-url local,
 * one per rank; --db-url rank0, one on rank 0's node for the whole job).
 *
 * The binaries are Debian's: $LOOMDIST_PG_BINDIR when set (and then only it), else
 * /usr/lib/postgresql/15/bin, else `pg_config --bindir`; initdb, postgres and
 * pg_isready must all be there.
 *
 * Who gets in. The server lives under a fresh folder, $TMPDIR/loomdist-pg.XXXXXX
 * (default /tmp), mode 0700, which is also its socket's folder. Its pg_hba.conf is
 * written whole: the socket is `trust` for the postgres role, so only the folder's
 * owner (and root) reach it; a server with no listen address (local) has no TCP at
 * all; one with an address (rank0) takes TCP from the given peer addresses only
 * (/32, /128 each), with scram-sha-256 and a password made for the run, which reaches
 * the watcher on its stdin and initdb in a 0600 file removed at once: never argv, the
 * environment or a URL.
 *
 * The port. Socket only, it is 5432: it names the socket file in a folder no other
 * server uses. With TCP, the watcher tries ports at random below the kernel's
 * ephemeral range and starts postgres on each until one binds (at most 20), then reads
 * the port back from postmaster.pid: no gap between a probe and the bind.
 *
 * The watcher. A small shell (sh) started with posix_spawn, in a session of its own
 * (setsid: a signal to the rank's process group misses it), makes the folder; as
 * root it gives it to the postgres user and runs everything that touches the folder's
 * files, initdb, postgres and its own end, under runuser as that user, so that root
 * never reads, writes or signals by what a file there says. It holds the read end of a
 * pipe whose write end only this process has, and when that pipe closes (stop, or this
 * process's end however it comes, a kill included) it stops the postmaster (SIGQUIT:
 * immediate shutdown) by the pid in postmaster.pid, or by the one it started when that
 * file was not read yet, waits until it is gone and removes the folder. A server can
 * therefore never outlive its run. Every step runs from /, so a working folder the
 * postgres user cannot enter does not matter.
 *
 * Functions return 0 or a negative errno; a message for the user goes into why.
 */
#ifndef LD_PG_PRIVATE_H
#define LD_PG_PRIVATE_H

#include <stddef.h>

typedef struct ld_pg_private ld_pg_private;

/* The folder of the server binaries into out[0..len): 0, or -ENOENT with why. */
int ld_pg_private_bindir(char *out, size_t len, char *why, size_t whylen);

/* Where a server for every node listens, given host, the name by which the other
 * nodes reach this one ("127.0.0.1" when they are all this one): host itself, unless
 * it resolves here to loopback addresses only; then the first IPv4 address of an
 * interface that is up and not loopback, which the other nodes can reach. Into
 * out[0..len). */
void ld_pg_private_address(const char *host, char *out, size_t len);

/* What a server takes: where it listens and who may connect. */
typedef struct ld_pg_private_opts {
    const char *listen_addr;  /* an address or host name; NULL: the socket only */
    const char *connect_host; /* TCP: the name its URL gives the clients */
    const char *peers;        /* TCP: the addresses let in, space-separated */
    const char *password;     /* TCP: the postgres role's, for scram-sha-256 */
    unsigned max_connections; /* sessions at once */
} ld_pg_private_opts;

/* Start a server as o asks. Its URL goes into url[0..urllen), without the password:
 * postgresql://postgres@/postgres?host=FOLDER&port=5432 (socket only), or
 * postgresql://postgres@HOST:PORT/postgres. */
int ld_pg_private_start(ld_pg_private **out, const ld_pg_private_opts *o, char *url,
                        size_t urllen, char *why, size_t whylen);

/* A password for a run's server: len - 1 random hex digits into out (from getrandom). */
int ld_pg_private_password(char *out, size_t len);

/* Stop the server, remove its folder and free s. NULL does nothing. */
void ld_pg_private_stop(ld_pg_private *s);

#endif

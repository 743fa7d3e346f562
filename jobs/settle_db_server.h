/* settle_db_server.h: a private PostgreSQL a run starts for itself (--db-url local,
 * one per rank; --db-url rank0, one on rank 0's node for the whole job).
 *
 * The binaries are Debian's: $LOOMDIST_PG_BINDIR when set (and then only it), else
 * /usr/lib/postgresql/15/bin, else `pg_config --bindir`; initdb, postgres and
 * pg_isready must all be there.
 *
 * The server lives under a fresh folder, $TMPDIR/loomdist-pg.XXXXXX (default /tmp):
 * initdb -A trust as the postgres user when the run is root (initdb refuses root),
 * then postgres with its socket in that folder, listening on the address asked for
 * at a free port. A small shell (sh) started with posix_spawn, in a session of its
 * own (setsid: a signal to the rank's process group misses it), watches it: it
 * holds the read end of a pipe whose write end only this process has, and when that
 * pipe closes (stop, or this process's end however it comes, a kill included) it stops
 * the postmaster by its pid (SIGQUIT: immediate shutdown), waits until it is gone and
 * removes the folder. A server can therefore never outlive its run.
 *
 * Functions return 0 or a negative errno; a message for the user goes into why.
 */
#ifndef LD_SETTLE_DB_SERVER_H
#define LD_SETTLE_DB_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct ld_settle_db_server ld_settle_db_server;

/* The folder of the server binaries into out[0..len): 0, or -ENOENT with why. */
int ld_settle_db_server_bindir(char *out, size_t len, char *why, size_t whylen);

/* Where a server for every node listens, given host, the name by which the other
 * nodes reach this one ("127.0.0.1" when they are all this one): host itself, unless
 * it resolves here to loopback addresses only; then the first IPv4 address of an
 * interface that is up and not loopback, which the other nodes can reach. Into
 * out[0..len). */
void ld_settle_db_server_address(const char *host, char *out, size_t len);

/* Start a server listening on listen_addr (an address or host name), reached by the
 * URL postgresql://postgres@host:PORT/postgres, which goes into url[0..urllen), that
 * takes max_connections sessions at once. samenet: let the hosts of this machine's
 * networks in too, not only loopback. */
int ld_settle_db_server_start(ld_settle_db_server **out, const char *listen_addr,
                              const char *host, int samenet, unsigned max_connections,
                              char *url, size_t urllen, char *why, size_t whylen);

/* The postmaster's pid. */
pid_t ld_settle_db_server_pid(const ld_settle_db_server *s);

/* Stop the server, remove its folder and free s. NULL does nothing. */
void ld_settle_db_server_stop(ld_settle_db_server *s);

#endif

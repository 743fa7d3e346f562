/* spawn_child.h: child processes a job runs beside itself (a load generator, a backend),
 * with their stdout piped back and, if asked, their stdin piped in.
 *
 * Safe in an MPI rank: children are started with posix_spawn (vfork and exec, no code
 * of ours runs in the child), never fork. The child gets the pipes as its stdin and
 * stdout, inherits stderr, and no other descriptor: every one above 2 is closed in it.
 *
 * Writes to a child's stdin never raise SIGPIPE, whatever the process does with the
 * signal: a child that has gone makes them return -EPIPE.
 *
 * A child's pipes belong to one thread at a time. Functions return 0 (or a count) or
 * a negative errno.
 */
#ifndef LD_SPAWN_CHILD_H
#define LD_SPAWN_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* Bytes of the child's stdout read ahead of the line asked for. */
#define LD_CHILD_BUF 4096

typedef struct ld_child {
    pid_t pid;
    int in_fd;       /* the child's stdin; -1 if not asked for */
    int out_fd;      /* its stdout */
    size_t off, len; /* buf[off..len): read from out_fd and not yet handed out */
    char buf[LD_CHILD_BUF];
} ld_child;

/* Start argv[0] (PATH searched when it has no '/') with argv, its stdout piped to
 * c->out_fd and, with want_stdin, its stdin to c->in_fd (else it reads /dev/null).
 * -ENOENT for a missing program, -EACCES for one that cannot run, reported here. */
int ld_child_spawn(ld_child *c, char *const argv[], int want_stdin);

/* The next line of its stdout, without the newline, NUL-terminated in buf[0..size) (a
 * longer line is cut there and its rest dropped). Returns its length; -ETIMEDOUT when
 * no whole line came within timeout_ms, -EPIPE at the end of its output. */
int ld_child_read_line(ld_child *c, char *buf, size_t size, int timeout_ms);

/* The rest of its stdout until the end, NUL-terminated in buf[0..size) and cut there
 * (the rest is read and dropped). Returns the bytes kept; -ETIMEDOUT when the end did
 * not come within timeout_ms (buf then holds what came). */
int ld_child_read_all(ld_child *c, char *buf, size_t size, int timeout_ms);

/* Write all of text to its stdin: 0, -EPIPE when it has closed it, -EBADF with none. */
int ld_child_write(ld_child *c, const char *text);

/* Close its pipes (so it reads the end of its stdin, and a write to its stdout fails),
 * then wait for it to exit, its waitpid status in *status (NULL: not wanted). Past
 * timeout_ms it is killed (SIGKILL) and reaped: -ETIMEDOUT. */
int ld_child_wait(ld_child *c, int timeout_ms, int *status);

/* The path of program `name` in the folder of the running executable, in
 * out[0..size): 0; -ENOENT when no executable file is there, -ENAMETOOLONG. */
int ld_sibling_path(const char *name, char *out, size_t size);

#endif

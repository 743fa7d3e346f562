/* settle_db_server.c: a private PostgreSQL under a watching shell
 * (settle_db_server.h). */
#include "settle_db_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spawn_child.h"

/* How long the server may take to answer after it starts, and to go at the end. */
#define START_TIMEOUT_MS 60000
#define STOP_TIMEOUT_MS 30000

struct ld_settle_db_server {
    ld_child watcher;
    pid_t pid;
};

/* The watcher: $1 the binaries, $2 the listen address, $3 the port, $4 "samenet" or
 * "", $5 max_connections. It says "ready PID" once the server answers (or one line why
 * not, and exits), then waits for the end of its stdin; its EXIT trap stops the server
 * whatever ends it. */
static const char watcher_sh[] =
    "bin=$1 addr=$2 port=$3 net=$4 max=$5 pid=\n"
    "d=$(mktemp -d \"${TMPDIR:-/tmp}/loomdist-pg.XXXXXX\") || exit 1\n"
    "cd / || exit 1\n" /* postgres may not enter the caller's folder */
    "end() {\n"
    "  [ -n \"$pid\" ] && kill -QUIT \"$pid\" 2>/dev/null\n"
    "  while [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; do sleep 0.05; done\n"
    "  rm -rf \"$d\"\n"
    "}\n"
    "trap end EXIT\n"
    "trap 'exit 1' INT TERM HUP PIPE\n"
    "as=\n"
    "if [ \"$(id -u)\" = 0 ]; then chown postgres \"$d\" && as='runuser -u postgres --'; "
    "fi\n"
    "if ! $as \"$bin/initdb\" -D \"$d/data\" -A trust -U postgres > \"$d/log\" 2>&1; "
    "then\n"
    "  echo \"initdb failed: $(tail -n 1 \"$d/log\")\"; exit 1\n"
    "fi\n"
    "[ \"$net\" = samenet ] && echo 'host all all samenet trust' >> "
    "\"$d/data/pg_hba.conf\"\n"
    "$as \"$bin/postgres\" -D \"$d/data\" -k \"$d\" -c listen_addresses=\"$addr\" -c "
    "max_connections=\"$max\" -p "
    "\"$port\" >> \"$d/log\" 2>&1 &\n"
    "child=$! tries=0\n"
    "until [ -n \"$pid\" ] && \"$bin/pg_isready\" -q -h \"$d\" -p \"$port\" -U postgres; "
    "do\n"
    "  [ -z \"$pid\" ] && [ -s \"$d/data/postmaster.pid\" ] && "
    "pid=$(head -n 1 \"$d/data/postmaster.pid\")\n"
    "  tries=$((tries + 1))\n"
    "  if ! kill -0 \"$child\" 2>/dev/null || [ \"$tries\" -gt 1000 ]; then\n"
    "    echo \"the server did not start: $(tail -n 1 \"$d/log\")\"; exit 1\n"
    "  fi\n"
    "  sleep 0.05\n"
    "done\n"
    "echo \"ready $pid\"\n"
    "read -r _\n";

int ld_settle_db_server_bindir(char *out, size_t len, char *why, size_t whylen)
{
    const char *env = getenv("LOOMDIST_PG_BINDIR");
    const char *tried[] = {env ? env : "/usr/lib/postgresql/15/bin", NULL};
    char found[512] = "";
    ld_child c;
    char *argv[] = {"pg_config", "--bindir", NULL};
    if (!env && ld_child_spawn(&c, argv, 0) == 0) {
        if (ld_child_read_line(&c, found, sizeof found, 5000) > 0)
            tried[1] = found;
        ld_child_wait(&c, 5000, NULL);
    }
    for (int i = 0; i < 2 && tried[i]; i++) {
        static const char *const need[] = {"initdb", "postgres", "pg_isready"};
        char path[600];
        int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            snprintf(path, sizeof path, "%s/%s", tried[i], need[k]);
            ok = access(path, X_OK) == 0;
        }
        if (ok && (size_t)snprintf(out, len, "%s", tried[i]) < len)
            return 0;
    }
    snprintf(why, whylen,
             "no PostgreSQL server binaries (initdb, postgres, pg_isready) in %s%s; "
             "install postgresql-15",
             tried[0], env ? "" : " or pg_config --bindir");
    return -ENOENT;
}

/* A port nothing listens on now, from the kernel. */
static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
                     getsockname(fd, (struct sockaddr *)&a, &alen) == 0
                 ? ntohs(a.sin_port)
                 : -errno;
    close(fd);
    return rc;
}

/* Whether every IPv4 address host has here is a loopback one (127.0.0.0/8). */
static int loopback_only(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return 0;
    int loop = 1;
    for (const struct addrinfo *a = res; a; a = a->ai_next) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(void *)a->ai_addr;
        loop &= ntohl(in->sin_addr.s_addr) >> 24 == 127;
    }
    freeaddrinfo(res);
    return loop;
}

/* The first IPv4 address of an interface that is up and not a loopback one. */
static int outward_address(char *out, size_t len)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return -errno;
    int rc = -EADDRNOTAVAIL;
    for (const struct ifaddrs *i = all; i && rc != 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        const struct sockaddr_in *in = (const struct sockaddr_in *)(void *)i->ifa_addr;
        rc = inet_ntop(AF_INET, &in->sin_addr, out, (socklen_t)len) ? 0 : -errno;
    }
    freeifaddrs(all);
    return rc;
}

/* A host name that resolves to loopback here (Debian's 127.0.1.1 for its own name,
 * or 127.0.0.1 as in many containers) would have the server listen where no other
 * node can reach it, and the other nodes resolve the name to their own machine or
 * to an address the server does not listen on: an address of an interface is what
 * they can all reach. */
void ld_settle_db_server_address(const char *host, char *out, size_t len)
{
    if (strcmp(host, "127.0.0.1") == 0 || !loopback_only(host) ||
        outward_address(out, len) != 0)
        snprintf(out, len, "%s", host);
}

int ld_settle_db_server_start(ld_settle_db_server **out, const char *listen_addr,
                              const char *host, int samenet, unsigned max_connections,
                              char *url, size_t urllen, char *why, size_t whylen)
{
    char bin[512], port[16], max[16], line[256] = "";
    int rc = ld_settle_db_server_bindir(bin, sizeof bin, why, whylen);
    int p = rc == 0 ? free_port() : rc;
    ld_settle_db_server *s = p > 0 ? calloc(1, sizeof *s) : NULL;
    if (p <= 0 || !s)
        return p <= 0 ? (rc ? rc : p) : -ENOMEM;
    snprintf(port, sizeof port, "%d", p);
    snprintf(max, sizeof max, "%u", max_connections);
    /* In a session of its own, so that a signal to the rank's process group (mpirun
     * ending a failed job) cannot kill the watcher before it has cleaned up. */
    char *argv[] = {"setsid", "/bin/sh",           "-c", (char *)watcher_sh,       "sh",
                    bin,      (char *)listen_addr, port, samenet ? "samenet" : "", max,
                    NULL};
    rc = ld_child_spawn(&s->watcher, argv, 1);
    if (rc == 0) {
        rc = ld_child_read_line(&s->watcher, line, sizeof line, START_TIMEOUT_MS);
        rc = rc > 0 && sscanf(line, "ready %d", &s->pid) == 1 ? 0 : -ECHILD;
        if (rc != 0)
            ld_child_wait(&s->watcher, STOP_TIMEOUT_MS, NULL);
    }
    if (rc != 0) {
        snprintf(why, whylen, "could not start a private PostgreSQL: %s",
                 line[0] ? line : "its watcher said nothing");
        free(s);
        return rc;
    }
    snprintf(url, urllen, "postgresql://postgres@%s:%d/postgres", host, p);
    *out = s;
    return 0;
}

pid_t ld_settle_db_server_pid(const ld_settle_db_server *s)
{
    return s->pid;
}

void ld_settle_db_server_stop(ld_settle_db_server *s)
{
    if (!s)
        return;
    ld_child_wait(&s->watcher, STOP_TIMEOUT_MS, NULL);
    free(s);
}

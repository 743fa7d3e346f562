/* pg_private.c: a private PostgreSQL under a watching shell
 * (settle_db_server.h). */
#include "pg_private.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spawn_child.h"

/* How long the server may take to answer after it starts, and to go at the end. */
#define START_TIMEOUT_MS 60000
#define PORT_LOW 10000
#define PORT_SPAN 22000
#define LD_STR_(x) #x
#define LD_STR(x) LD_STR_(x)
#define STOP_TIMEOUT_MS 30000

/* Ports a TCP server tries, at random in [PORT_LOW, PORT_LOW + PORT_SPAN): below
 * Linux's ephemeral range (32768-60999), where clients' ports come from. */
#define PORT_TRIES 20

struct ld_pg_private {
    ld_child watcher;
};

/* The watcher, as the run's user: $1 the part below, then its arguments. It makes the
 * folder, runs the part below in it (as root: as the postgres user, to whom the folder
 * then belongs) and removes the folder when that part is over. sh runs a trap only
 * once the command in the foreground is done, so a signal cannot remove the folder
 * under a running server. */
static const char watcher_sh[] =
    "inner=$1\n"
    "shift\n"
    "d=$(mktemp -d \"${TMPDIR:-/tmp}/loomdist-pg.XXXXXX\") || exit 1\n"
    "trap 'rm -rf \"$d\"' EXIT\n"
    "trap 'exit 1' INT TERM HUP PIPE\n"
    "cd / || exit 1\n"
    "as=\n"
    "if [ \"$(id -u)\" = 0 ]; then\n"
    "  chown postgres \"$d\" || exit 1\n"
    "  as='runuser -u postgres --'\n"
    "fi\n"
    "$as /bin/sh -c \"$inner\" sh \"$d\" \"$@\"\n";

/* The server's part, as its owner: $1 the folder, $2 the binaries, $3 the listen
 * address ("": the socket only), $4 max_connections, $5 the peers let in over TCP.
 * Its stdin's first line is the password ("" for socket only). It says
 * "ready PID PORT FOLDER" once the server answers (or one line why not, and exits),
 * then waits for the end of its stdin; its EXIT trap stops the server whatever ends
 * it: the pid postmaster.pid gave, else the one it started. */
/* clang-format off */
static const char server_sh[] =
    "d=$1 bin=$2 addr=$3 max=$4 peers=$5 pid= child=\n"
    "end() {\n"
    "  p=${pid:-$child}\n"
    "  if [ -n \"$p\" ]; then\n"
    "    kill -QUIT \"$p\" 2>/dev/null\n"
    "    while kill -0 \"$p\" 2>/dev/null; do sleep 0.05; done\n"
    "  fi\n"
    "  find \"$d\" -mindepth 1 -delete 2>/dev/null\n"
    "}\n"
    "trap end EXIT\n"
    "trap 'exit 1' INT TERM HUP PIPE\n"
    "umask 077\n"
    "IFS= read -r pw || exit 1\n"
    "set --\n"
    "if [ -n \"$addr\" ]; then printf '%s\\n' \"$pw\" > \"$d/pw\"; set -- \"--pwfile=$d/pw\"; fi\n"
    "pw=\n"
    "if ! \"$bin/initdb\" -D \"$d/data\" -U postgres -A trust \"$@\" > \"$d/log\" 2>&1; then\n"
    "  echo \"initdb failed: $(tail -n 1 \"$d/log\")\"; exit 1\n"
    "fi\n"
    "rm -f \"$d/pw\"\n"
    "{\n"
    "  echo 'local all postgres trust'\n"
    "  for a in $peers; do\n"
    "    case $a in *:*) m=128 ;; *) m=32 ;; esac\n"
    "    echo \"host all postgres $a/$m scram-sha-256\"\n"
    "  done\n"
    "} > \"$d/data/pg_hba.conf\"\n"
    "port=5432 tries=0\n"
    "while :; do\n"
    "  [ -n \"$addr\" ] && port=$(($(od -An -N2 -tu2 /dev/urandom) % " LD_STR(PORT_SPAN) " + " LD_STR(PORT_LOW) "))\n"
    "  \"$bin/postgres\" -D \"$d/data\" -k \"$d\" -c listen_addresses=\"$addr\" -c max_connections=\"$max\" -p \"$port\" > \"$d/server.log\" 2>&1 &\n"
    "  child=$! waited=0\n"
    "  until [ -n \"$pid\" ] && \"$bin/pg_isready\" -q -h \"$d\" -p \"$port\" -U postgres; do\n"
    "    [ -z \"$pid\" ] && [ -s \"$d/data/postmaster.pid\" ] && pid=$(head -n 1 \"$d/data/postmaster.pid\")\n"
    "    waited=$((waited + 1))\n"
    "    if ! kill -0 \"$child\" 2>/dev/null || [ \"$waited\" -gt 1000 ]; then break; fi\n"
    "    sleep 0.05\n"
    "  done\n"
    "  kill -0 \"$child\" 2>/dev/null && [ \"$waited\" -le 1000 ] && break\n"
    "  tries=$((tries + 1))\n"
    "  if [ -z \"$addr\" ] || [ \"$tries\" -ge " LD_STR(PORT_TRIES) " ] ||\n"
    "    ! grep -q 'Address already in use' \"$d/server.log\"; then\n"
    "    echo \"the server did not start: $(tail -n 1 \"$d/server.log\")\"; exit 1\n"
    "  fi\n"
    "  pid= child=\n"
    "done\n"
    "echo \"ready $pid $(sed -n 4p \"$d/data/postmaster.pid\") $d\"\n"
    "read -r _\n";
/* clang-format on */

int ld_pg_private_bindir(char *out, size_t len, char *why, size_t whylen)
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
void ld_pg_private_address(const char *host, char *out, size_t len)
{
    if (strcmp(host, "127.0.0.1") == 0 || !loopback_only(host) ||
        outward_address(out, len) != 0)
        snprintf(out, len, "%s", host);
}

int ld_pg_private_password(char *out, size_t len)
{
    unsigned char raw[32];
    size_t n = (len - 1) / 2 < sizeof raw ? (len - 1) / 2 : sizeof raw;
    if (len < 3 || getrandom(raw, n, 0) != (ssize_t)n)
        return len < 3 ? -EINVAL : -errno;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* folder for a URL's query: every byte but the unreserved ones and '/' as %XX. */
static void url_escape(const char *folder, char *out, size_t len)
{
    size_t used = 0;
    for (const unsigned char *c = (const unsigned char *)folder; *c && used + 4 < len;
         c++) {
        int plain = isalnum(*c) || strchr("-._~/", *c);
        used += (size_t)snprintf(out + used, len - used, plain ? "%c" : "%%%02X", *c);
    }
    out[used < len ? used : len - 1] = '\0';
}

/* The URL of the server the watcher said is ready in line: "ready PID PORT FOLDER". */
static int ready(const char *line, const ld_pg_private_opts *o, char *url, size_t urllen)
{
    int port, at = 0;
    if (sscanf(line, "ready %*d %d %n", &port, &at) != 1 || at == 0)
        return -ECHILD;
    if (o->listen_addr) {
        snprintf(url, urllen, "postgresql://postgres@%s:%d/postgres", o->connect_host,
                 port);
        return 0;
    }
    char folder[1024];
    url_escape(line + at, folder, sizeof folder);
    snprintf(url, urllen, "postgresql://postgres@/postgres?host=%s&port=%d", folder,
             port);
    return 0;
}

int ld_pg_private_start(ld_pg_private **out, const ld_pg_private_opts *o, char *url,
                        size_t urllen, char *why, size_t whylen)
{
    char bin[512], max[16], line[1200] = "";
    int rc = ld_pg_private_bindir(bin, sizeof bin, why, whylen);
    ld_pg_private *s = rc == 0 ? calloc(1, sizeof *s) : NULL;
    if (!s)
        return rc ? rc : -ENOMEM;
    snprintf(max, sizeof max, "%u", o->max_connections);
    /* In a session of its own, so that a signal to the rank's process group (mpirun
     * ending a failed job) cannot kill the watcher before it has cleaned up. */
    char *argv[] = {"setsid", "/bin/sh",
                    "-c",     (char *)watcher_sh,
                    "sh",     (char *)server_sh,
                    bin,      (char *)(o->listen_addr ? o->listen_addr : ""),
                    max,      (char *)(o->listen_addr && o->peers ? o->peers : ""),
                    NULL};
    rc = ld_child_spawn(&s->watcher, argv, 1);
    if (rc == 0) {
        char pw[160];
        snprintf(pw, sizeof pw, "%s\n", o->listen_addr && o->password ? o->password : "");
        rc = ld_child_write(&s->watcher, pw);
        if (rc == 0)
            rc = ld_child_read_line(&s->watcher, line, sizeof line, START_TIMEOUT_MS);
        rc = rc >= 0 ? ready(line, o, url, urllen) : rc;
        if (rc != 0)
            ld_child_wait(&s->watcher, STOP_TIMEOUT_MS, NULL);
    }
    if (rc != 0) {
        snprintf(why, whylen, "could not start a private PostgreSQL: %s",
                 line[0] ? line : "its watcher said nothing");
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void ld_pg_private_stop(ld_pg_private *s)
{
    if (!s)
        return;
    ld_child_wait(&s->watcher, STOP_TIMEOUT_MS, NULL);
    free(s);
}

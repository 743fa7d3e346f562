/* peers.c: every node's interface addresses, gathered on rank 0 (peers.h). */
#include "peers.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of one rank's addresses, space-separated: 16 IPv6 ones fit. */
#define PEERS_RANK_MAX 1024

/* One interface address as text into out[0..len) (a space before it when out is not
 * empty), unless it is link-local IPv6, which needs a zone no pg_hba line names. */
static void add_address(const struct sockaddr *a, char *out, size_t len)
{
    char text[INET6_ADDRSTRLEN];
    const void *bits = NULL;
    if (a->sa_family == AF_INET)
        bits = &((const struct sockaddr_in *)(const void *)a)->sin_addr;
    else if (a->sa_family == AF_INET6 &&
             !IN6_IS_ADDR_LINKLOCAL(
                 &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr))
        bits = &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr;
    if (!bits || !inet_ntop(a->sa_family, bits, text, sizeof text))
        return;
    size_t used = strlen(out);
    if (used + strlen(text) + 2 < len)
        snprintf(out + used, len - used, "%s%s", used ? " " : "", text);
}

/* This rank's addresses into out[0..len). */
static void own_addresses(char *out, size_t len)
{
    struct ifaddrs *all;
    out[0] = '\0';
    if (getifaddrs(&all) != 0)
        return;
    for (const struct ifaddrs *i = all; i; i = i->ifa_next)
        if (i->ifa_addr && (i->ifa_flags & IFF_UP))
            add_address(i->ifa_addr, out, len);
    freeifaddrs(all);
}

/* Whether the space-separated list has word. */
static int has_word(const char *list, const char *word, size_t n)
{
    for (const char *p = list; *p; p += strcspn(p, " "), p += *p == ' ')
        if (strncmp(p, word, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The distinct words of every rank's list, into a fresh string. */
static char *distinct(const char *lists, int ranks)
{
    size_t cap = (size_t)ranks * PEERS_RANK_MAX + 1, used = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (int r = 0; r < ranks; r++) {
        const char *p = lists + (size_t)r * PEERS_RANK_MAX;
        while (*p) {
            size_t n = strcspn(p, " ");
            if (!has_word(out, p, n)) {
                used += (size_t)snprintf(out + used, cap - used, "%s%.*s",
                                         used ? " " : "", (int)n, p);
            }
            p += n + (p[n] == ' ');
        }
    }
    return out;
}

char *ld_peers_gather(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char mine[PEERS_RANK_MAX];
    own_addresses(mine, sizeof mine);
    char *all = rank == 0 ? calloc((size_t)size, PEERS_RANK_MAX) : NULL;
    int ok = rank != 0 || all;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok)
        MPI_Gather(mine, PEERS_RANK_MAX, MPI_CHAR, all, PEERS_RANK_MAX, MPI_CHAR, 0,
                   comm);
    char *out = all ? distinct(all, size) : NULL;
    free(all);
    return out;
}

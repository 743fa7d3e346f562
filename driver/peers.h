/* peers.h: the addresses of the job's nodes, for a service rank 0 starts that should let
 * in the job's own nodes and no one else (a job's share, job.h's ld_job_config.peers).
 */
#ifndef LD_PEERS_H
#define LD_PEERS_H

#include <mpi.h>

/* Collective over comm: every rank's interfaces that are up, IPv4 and IPv6 (loopback
 * included, IPv6 link-local left out), as text. On rank 0 a malloc'd string of the
 * distinct ones, space-separated, for the caller to free; NULL on the other ranks, and
 * on rank 0 when memory ran out (the service then lets in no peer over the network). */
char *ld_peers_gather(MPI_Comm comm);

#endif

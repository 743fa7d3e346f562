/* host_clock.h: the simulating machine's own monotonic clock. SMPI replaces
 * clock_gettime with simulated time, so the skeleton's native work (the book) is timed
 * here, by the system call, and injected; SMPI's own timing of every burst between MPI
 * calls is off, since it also timed the simulator's page faults and the machine's
 * other load, which grew with the ranks. */
#ifndef SIM_HOST_CLOCK_H
#define SIM_HOST_CLOCK_H

#include <stdint.h>

/* Nanoseconds of CLOCK_MONOTONIC, read past SMPI's interception. */
int64_t sim_host_ns(void);

#endif

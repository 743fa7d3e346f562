/* ompi_env.h: the Open MPI settings loomdist picks before MPI_Init, each only where the
 * user's environment has not set it (an OMPI_MCA_* variable of theirs always wins).
 *
 * - A rank that no launcher started (mpirun, srun) is one rank alone, an MPI singleton.
 *   For it Open MPI would still start a daemon and open every network transport it
 *   has: 0.2-0.3 s before the run can begin, on a machine where the run itself may
 *   take less. It gets no daemon (ess_singleton_isolated) and the self transport alone
 *   (pml ob1, btl self). A launched rank is left as it is.
 * - The output's collective writes go through ROMIO rather than OMPIO: on one node
 *   ROMIO wrote a million trades' file in about half OMPIO's time (io_romio321_priority
 *   above ompio's; a build without that component ignores it).
 */
#ifndef LD_OMPI_ENV_H
#define LD_OMPI_ENV_H

void ld_ompi_env_defaults(void);

#endif

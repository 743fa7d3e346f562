/* singleton.h: a loomdist started with no launcher is one rank alone, an MPI singleton.
 *
 * For a singleton Open MPI still starts a daemon and opens every network transport it
 * has: 0.2-0.3 s before the run can begin, on a machine where the run itself may take
 * less. A rank with no peers needs neither. Called before MPI_Init, this gives Open
 * MPI's singleton the defaults it then needs and no more: no daemon
 * (ess_singleton_isolated) and the self transport alone (pml ob1, btl self). A user's
 * own setting of any of them in the environment wins, and a process a launcher started
 * (mpirun, srun) is left as it is.
 */
#ifndef LD_SINGLETON_H
#define LD_SINGLETON_H

void ld_singleton_defaults(void);

#endif

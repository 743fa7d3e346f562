/* interrupt.h: what a rank does when SIGINT or SIGTERM ends it.
 *
 * mpirun passes SIGTERM on to every rank when it is interrupted itself, and ends the
 * other ranks the same way when one of them dies. A rank so ended says it in one line,
 * "loomdist: rank N interrupted by SIGTERM; no results written", removes the temporary
 * results file, and dies of the signal, so the launcher sees what happened. Nothing
 * half-written can be left under the output name: the writer renames the file there
 * only after every rank succeeded.
 */
#ifndef LD_INTERRUPT_H
#define LD_INTERRUPT_H

/* Catch SIGINT and SIGTERM from now on, for this rank and this output file. */
void ld_interrupt_arm(int rank, const char *output);

/* The results file is in place: an interrupt from now on leaves it alone, and says so. */
void ld_interrupt_written(void);

/* Every rank agreed the run ends without results, and rank 0 has said why: each rank
 * now leaves by itself with the agreed status. mpirun ends the job as soon as the first
 * rank exits non-zero, sending SIGTERM to the ranks still on their way out (and SIGKILL
 * a second later); from now on SIGINT and SIGTERM are ignored, so that teardown neither
 * adds a second reason nor takes a rank's own status. */
void ld_interrupt_ending(void);

#endif

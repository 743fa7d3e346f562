/* interrupt.c: the SIGINT and SIGTERM handler of a rank. */
#include "interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "h5out.h"
#include "sigline.h"

/* What the handler says and removes, made ready before it can run, since it may call
 * nothing that locks or allocates. A handler reaches no state but static state, so
 * this is the driver's one process-wide variable. */
static struct {
    char prefix[48];             /* "loomdist: rank N interrupted by " */
    char tmp[LD_OUTPUT_MAX + 8]; /* the writer's temporary file */
    volatile sig_atomic_t written;
} note;

/* One write(2) of the whole line, so the lines of several threads never interleave;
 * then the temporary file goes, and the rank dies of the signal it got. */
static void on_interrupt(int sig)
{
    ld_sigline line;
    ld_sigline_init(&line);
    ld_sigline_str(&line, note.prefix);
    ld_sigline_str(&line, sig == SIGINT ? "SIGINT" : "SIGTERM");
    ld_sigline_str(&line, note.written ? "; its results were written\n"
                                       : "; no results written\n");
    ld_sigline_write(&line, STDERR_FILENO);
    if (!note.written)
        unlink(note.tmp);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until the handler returns, then fatal */
}

/* Both signals are blocked while the handler runs, so a second one waits for the
 * first to finish. SA_ONSTACK: a carrier may take the signal on a small green-thread
 * stack, and carriers have a signal stack of their own. */
void ld_interrupt_arm(int rank, const char *output)
{
    snprintf(note.prefix, sizeof note.prefix, "loomdist: rank %d interrupted by ", rank);
    ld_h5_temp_name(output, note.tmp, sizeof note.tmp);
    note.written = 0;
    struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void ld_interrupt_written(void)
{
    note.written = 1;
}

void ld_interrupt_ending(void)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
}

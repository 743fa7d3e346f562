/* gt_mutex.c: a lock for green threads that parks a contended locker instead of
 * blocking its carrier (the monitor of JEP 491).
 *
 * A short pthread mutex guards the owner and a FIFO of waiters; nobody holds it across
 * a switch. Unlock hands the lock straight to the oldest waiter and resumes it, on
 * whichever carrier it runs, so a waiter never has to race for the lock again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "gt.h"
#include "gt_sched.h"

/* Waiters are linked through their own structs (ld_gt_wait_next), never through their
 * stacks, which copy mode moves while they wait. */
struct ld_gt_mutex {
    pthread_mutex_t guard;
    ld_gt *owner;
    ld_gt *head;
    ld_gt *tail;
};

int ld_gt_mutex_create(ld_gt_mutex **out)
{
    ld_gt_mutex *m;
    int rc;

    if (out == NULL)
        return -EINVAL;
    m = malloc(sizeof *m);
    if (m == NULL)
        return -ENOMEM;
    rc = pthread_mutex_init(&m->guard, NULL);
    if (rc != 0) {
        free(m);
        return -rc;
    }
    m->owner = NULL;
    m->head = NULL;
    m->tail = NULL;
    *out = m;
    return 0;
}

void ld_gt_mutex_destroy(ld_gt_mutex *m)
{
    if (m == NULL)
        return;
    pthread_mutex_destroy(&m->guard);
    free(m);
}

/* Take a free lock at once; otherwise queue and suspend until an unlock makes this
 * thread the owner. Outside a green thread there is nothing to suspend: do nothing. */
void ld_gt_mutex_lock(ld_gt_mutex *m)
{
    ld_gt *self = ld_gt_self();

    if (self == NULL)
        return;
    pthread_mutex_lock(&m->guard);
    if (m->owner == NULL) {
        m->owner = self;
        pthread_mutex_unlock(&m->guard);
        return;
    }
    *ld_gt_wait_next(self) = NULL;
    if (m->tail != NULL)
        *ld_gt_wait_next(m->tail) = self;
    else
        m->head = self;
    m->tail = self;
    pthread_mutex_unlock(&m->guard);
    ld_gt_suspend();
}

/* Ownership passes to the oldest waiter before it is resumed, so the resume is the
 * only wake-up it gets and nobody can take the lock in between. Does nothing unless
 * the caller owns the lock. */
void ld_gt_mutex_unlock(ld_gt_mutex *m)
{
    ld_gt *self = ld_gt_self();
    ld_gt *next;

    if (self == NULL)
        return;
    pthread_mutex_lock(&m->guard);
    if (m->owner != self) {
        pthread_mutex_unlock(&m->guard);
        return;
    }
    next = m->head;
    if (next != NULL) {
        m->head = *ld_gt_wait_next(next);
        if (m->head == NULL)
            m->tail = NULL;
    }
    m->owner = next;
    pthread_mutex_unlock(&m->guard);
    if (next != NULL)
        ld_gt_resume(next);
}

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

/* A waiter's queue entry lives on its own stack, which is alive while it waits. */
typedef struct ld_gt_mutex_waiter {
    struct ld_gt_mutex_waiter *next;
    ld_gt *gt;
} ld_gt_mutex_waiter;

struct ld_gt_mutex {
    pthread_mutex_t guard;
    ld_gt *owner;
    ld_gt_mutex_waiter *head;
    ld_gt_mutex_waiter *tail;
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
    ld_gt_mutex_waiter w;

    if (self == NULL)
        return;
    pthread_mutex_lock(&m->guard);
    if (m->owner == NULL) {
        m->owner = self;
        pthread_mutex_unlock(&m->guard);
        return;
    }
    w.next = NULL;
    w.gt = self;
    /* w stays queued only while this frame is suspended; the unlocker dequeues it. */
    if (m->tail != NULL)
        m->tail->next = &w;
    else
        m->head = &w; // cppcheck-suppress autoVariables
    m->tail = &w;     // cppcheck-suppress autoVariables
    pthread_mutex_unlock(&m->guard);
    ld_gt_suspend();
}

/* Ownership passes to the oldest waiter before it is resumed, so the resume is the
 * only wake-up it gets and nobody can take the lock in between. Does nothing unless
 * the caller owns the lock. */
void ld_gt_mutex_unlock(ld_gt_mutex *m)
{
    ld_gt *self = ld_gt_self();
    ld_gt_mutex_waiter *w;
    ld_gt *next = NULL;

    if (self == NULL)
        return;
    pthread_mutex_lock(&m->guard);
    if (m->owner != self) {
        pthread_mutex_unlock(&m->guard);
        return;
    }
    w = m->head;
    if (w != NULL) {
        m->head = w->next;
        if (m->head == NULL)
            m->tail = NULL;
        next = w->gt;
    }
    m->owner = next;
    pthread_mutex_unlock(&m->guard);
    if (next != NULL)
        ld_gt_resume(next);
}

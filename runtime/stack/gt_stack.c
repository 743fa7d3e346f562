/* gt_stack.c: green-thread stacks carved from slabs, their depots and per-scheduler
 * caches, and the three ways an overflow is caught. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gt_stack.h"
#include "gt_switch.h"

#ifdef LD_STACK_VALGRIND
#include <valgrind/valgrind.h>
#endif
#ifdef LD_CTX_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Linux 6.13's guard regions; older headers lack the name, older kernels say EINVAL. */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

/* Slabs start small, so a scheduler with a few threads maps little, and double up to
 * a size that keeps a million stacks within a hundred mappings. */
#define SLAB_SLOTS_MIN 64u
#define SLAB_SLOTS_MAX 16384u

/* Stacks moved between a cache and its depot in one go, under one lock (a power of
 * two, the least a cache's ring holds); stacks a reserve carves and gives in one go. */
#define DEPOT_BATCH 32u
#define RESERVE_BATCH 256u

/* One mapping, carved from its low end up. */
typedef struct stack_slab {
    struct stack_slab *next;
    char *base;
    size_t slots;  /* capacity */
    size_t carved; /* slots handed out so far */
} stack_slab;

struct ld_stack_depot {
    pthread_mutex_t lock;
    enum ld_stack_mode mode;
    size_t size;     /* usable bytes of each stack, header included; or of a chunk */
    size_t slot;     /* bytes of each slot: overflow page and stack; or a chunk */
    size_t run_size; /* copy mode: usable bytes of each scheduler's run stack */
    ld_slot **free;  /* free stacks, the last given last; room for every one carved */
    size_t nfree;
    size_t room;                /* entries `free` can hold */
    size_t carved;              /* stacks carved from every slab */
    stack_slab *slabs;          /* newest first */
    _Atomic size_t page_guards; /* PROT_NONE pages taken from the process budget */
    _Atomic int advice;         /* 1 while MADV_GUARD_INSTALL has not been refused */
    int allow_page;             /* 0 when LOOMDIST_STACK_GUARD=canary */
};

/* The process-wide VMA budget for PROT_NONE guards and the page size, set up once. */
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;
static size_t stack_page = 4096;
static size_t stack_page_budget;
static _Atomic size_t stack_page_guards;

/* A quarter of vm.max_map_count, two VMAs per guarded stack: the rest of the process
 * (malloc, libraries, MPI) keeps three quarters of the limit. */
static void stack_limits_init(void)
{
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    unsigned long max_maps = 65530;

    if (page > 0)
        stack_page = (size_t)page;
    if (f != NULL) {
        if (fscanf(f, "%lu", &max_maps) != 1)
            max_maps = 65530;
        fclose(f);
    }
    stack_page_budget = max_maps / 4 / 2;
}

static size_t round_pages(size_t n)
{
    return (n + stack_page - 1) / stack_page * stack_page;
}

/* ASan keeps its shadow when memory is unmapped, so a new mapping where stacks used
 * to be still reads as their frames' redzones until it is cleared. */
void ld_stack_unpoison_fresh(void *base, size_t len)
{
#ifdef LD_CTX_ASAN
    ASAN_UNPOISON_MEMORY_REGION(base, len);
#else
    (void)base;
    (void)len;
#endif
}

size_t ld_stack_page(void)
{
    pthread_once(&stack_once, stack_limits_init);
    return stack_page;
}

/* The usable bytes of a stack asked for with `size`: the default for 0, whole pages,
 * and room for more than the header. */
static size_t stack_usable(size_t size)
{
    if (size == 0)
        size = LD_GT_STACK_DEFAULT;
    return round_pages(size < LD_STACK_HEADER * 2 ? LD_STACK_HEADER * 2 : size);
}

/* A parked thread in own mode touches its stack's top page only; its slot's page-table
 * entries are all there too, since the slots lie side by side and each has a page in
 * use. A chunk is all touched, and nothing else. */
uint64_t ld_gt_resident_bytes(enum ld_stack_mode mode, size_t stack_size, size_t n)
{
    size_t page = ld_stack_page();
    size_t slot = page + stack_usable(stack_size);

    if (mode == LD_STACK_COPY)
        return (uint64_t)n * LD_GT_STACK_CHUNK;
    return (uint64_t)n * (page + slot / page * sizeof(uint64_t));
}

/* Copy mode moves frames, and a ucontext holds pointers into its own stack. */
int ld_stack_mode_supported(enum ld_stack_mode mode)
{
    return mode == LD_STACK_OWN || LD_CTX_COPYABLE;
}

/* Which modes to try, from LOOMDIST_STACK_GUARD: advice (the default), page, canary. */
static void depot_guard_modes(ld_stack_depot *p)
{
    const char *mode = getenv("LOOMDIST_STACK_GUARD");

    atomic_init(&p->advice, 1);
    p->allow_page = 1;
    if (mode != NULL && strcmp(mode, "page") == 0) {
        atomic_init(&p->advice, 0);
    } else if (mode != NULL && strcmp(mode, "canary") == 0) {
        atomic_init(&p->advice, 0);
        p->allow_page = 0;
    }
}

int ld_stack_depot_create(ld_stack_depot **out, size_t size, enum ld_stack_mode mode)
{
    ld_stack_depot *p;

    if (out == NULL || size > LD_STACK_SIZE_MAX)
        return -EINVAL;
    pthread_once(&stack_once, stack_limits_init);
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return -ENOMEM;
    }
    p->mode = mode;
    p->size = stack_usable(size); /* whole pages: still at most LD_STACK_SIZE_MAX */
    p->slot = stack_page + p->size;
    if (mode == LD_STACK_COPY) {
        p->run_size = p->size;
        p->size = LD_GT_STACK_CHUNK;
        p->slot = LD_GT_STACK_CHUNK;
    }
    atomic_init(&p->page_guards, 0);
    depot_guard_modes(p);
    *out = p;
    return 0;
}

/* Valgrind is told each stack exists for as long as its slab is mapped. */
static void slab_forget_stacks(const ld_stack_depot *p, const stack_slab *sl)
{
#ifdef LD_STACK_VALGRIND
    size_t i;

    if (!RUNNING_ON_VALGRIND || p->mode == LD_STACK_COPY)
        return;
    for (i = 0; i < sl->carved; i++) {
        ld_slot *h = (ld_slot *)(sl->base + (i + 1) * p->slot - LD_STACK_HEADER);
        VALGRIND_STACK_DEREGISTER(ld_slot_stack(h)->vg_id);
    }
#else
    (void)p;
    (void)sl;
#endif
}

void ld_stack_depot_destroy(ld_stack_depot *p)
{
    stack_slab *sl, *next;

    if (p == NULL)
        return;
    for (sl = p->slabs; sl != NULL; sl = next) {
        next = sl->next;
        slab_forget_stacks(p, sl);
        munmap(sl->base, sl->slots * p->slot);
        free(sl);
    }
    atomic_fetch_sub(&stack_page_guards, atomic_load(&p->page_guards));
    pthread_mutex_destroy(&p->lock);
    if (p->free != NULL)
        munmap(p->free, p->room * sizeof *p->free);
    free(p);
}

/* A new slab, twice the last one up to the cap. MAP_NORESERVE: most of every stack is
 * never touched, and what is touched is what counts. Chunks, by contrast, are all
 * touched: huge pages spare the TLB a million small ones. */
static int depot_grow(ld_stack_depot *p)
{
    size_t slots = p->slabs != NULL ? p->slabs->slots * 2 : SLAB_SLOTS_MIN;
    stack_slab *sl = malloc(sizeof *sl);
    void *base;

    if (slots > SLAB_SLOTS_MAX)
        slots = SLAB_SLOTS_MAX;
    if (sl == NULL)
        return -ENOMEM;
    base = mmap(NULL, slots * p->slot, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                    (p->mode == LD_STACK_OWN ? MAP_STACK : 0),
                -1, 0);
    if (base == MAP_FAILED) {
        int rc = -errno;
        free(sl);
        return rc;
    }
    if (p->mode == LD_STACK_COPY)
        madvise(base, slots * p->slot, MADV_HUGEPAGE); /* advice: may be refused */
    ld_stack_unpoison_fresh(base, slots * p->slot);
    sl->base = base;
    sl->slots = slots;
    sl->carved = 0;
    sl->next = p->slabs;
    p->slabs = sl;
    return 0;
}

/* A PROT_NONE guard is two VMAs; it is used only while the process budget lasts. */
static int page_guard(ld_stack_depot *p, char *base)
{
    if (!p->allow_page)
        return 0;
    if (atomic_fetch_add(&stack_page_guards, 1) >= stack_page_budget) {
        atomic_fetch_sub(&stack_page_guards, 1);
        return 0;
    }
    if (mprotect(base, stack_page, PROT_NONE) != 0) {
        atomic_fetch_sub(&stack_page_guards, 1);
        return 0;
    }
    atomic_fetch_add(&p->page_guards, 1);
    return 1;
}

/* The best guard the kernel and the budget allow. The first refusal of the guard
 * advice is remembered, so old kernels pay for one failed madvise per depot. */
static unsigned char slot_guard(ld_stack_depot *p, char *base)
{
    if (atomic_load_explicit(&p->advice, memory_order_relaxed)) {
        if (madvise(base, stack_page, MADV_GUARD_INSTALL) == 0)
            return LD_GUARD_ADVICE;
        atomic_store_explicit(&p->advice, 0, memory_order_relaxed);
    }
    return page_guard(p, base) ? LD_GUARD_PAGE : LD_GUARD_CANARY;
}

/* Make a carved slot a stack: guard it, write its ld_stack (which faults in the page
 * the thread's struct and first frames will use) and name it to valgrind. */
static ld_slot *slot_setup(ld_stack_depot *p, char *base)
{
    char *lo = base + stack_page;
    ld_slot *h = (ld_slot *)(lo + p->size - LD_STACK_HEADER);
    ld_stack *st = ld_slot_stack(h);

    st->guard = slot_guard(p, base);
    st->fresh = 1;
    st->touched = 0;
    st->lo = lo;
    st->size = p->size;
#ifdef LD_STACK_VALGRIND
    st->vg_id = VALGRIND_STACK_REGISTER(lo, (char *)h);
#endif
    return h;
}

/* A carved chunk: a word of it written now faults in its page, while the depot is
 * reserved before the clock, rather than at its first spawn, inside it. What its
 * thread's struct holds is the spawn's to write. */
static ld_slot *chunk_setup(char *base)
{
    *(volatile uint64_t *)base = 0;
    return (ld_slot *)base;
}

/* Room in the depot's array for n more stacks carved, under its lock: the array holds
 * every stack carved, so giving stacks back never needs to grow it. It is a mapping of
 * whole pages, doubled by mremap, which moves its pages instead of copying them: a
 * depot carving a million chunks would otherwise copy its 8 MB array at every
 * doubling. */
static int depot_room(ld_stack_depot *p, size_t n)
{
    size_t need, len;
    void *array;

    if (p->carved + n <= p->room)
        return 0;
    need = p->room * 2 > p->carved + n ? p->room * 2 : p->carved + n;
    len = round_pages(need * sizeof *p->free);
    array =
        p->free == NULL
            ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            : mremap(p->free, p->room * sizeof *p->free, len, MREMAP_MAYMOVE);
    if (array == MAP_FAILED)
        return -ENOMEM;
    p->free = array;
    p->room = len / sizeof *p->free;
    return 0;
}

/* Up to `want` fresh slots into out: their addresses are claimed under the lock, and
 * set up after it, so two carriers carving at once wait only for the claim. */
static size_t depot_carve(ld_stack_depot *p, size_t want, ld_slot **out, int *rc)
{
    char *base;
    size_t n, i;

    pthread_mutex_lock(&p->lock);
    *rc = 0;
    if (p->slabs == NULL || p->slabs->carved == p->slabs->slots)
        *rc = depot_grow(p);
    if (*rc != 0) {
        pthread_mutex_unlock(&p->lock);
        return 0;
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): depot_grow made a slab */
    n = p->slabs->slots - p->slabs->carved;
    n = n < want ? n : want;
    *rc = depot_room(p, n);
    if (*rc != 0) {
        pthread_mutex_unlock(&p->lock);
        return 0;
    }
    base = p->slabs->base + p->slabs->carved * p->slot;
    p->slabs->carved += n;
    p->carved += n;
    pthread_mutex_unlock(&p->lock);
    for (i = 0; i < n; i++)
        out[i] = p->mode == LD_STACK_COPY ? chunk_setup(base + i * p->slot)
                                          : slot_setup(p, base + i * p->slot);
    return n;
}

/* Up to `want` of the depot's free stacks into out, the most recently given first. */
static size_t depot_take(ld_stack_depot *p, size_t want, ld_slot **out)
{
    size_t n, i;

    pthread_mutex_lock(&p->lock);
    n = p->nfree < want ? p->nfree : want;
    for (i = 0; i < n; i++)
        out[i] = p->free[p->nfree - n + i];
    p->nfree -= n;
    pthread_mutex_unlock(&p->lock);
    return n;
}

/* Put n stacks on the depot's free array, which has room for all it ever carved. */
static void depot_give(ld_stack_depot *p, ld_slot *const *h, size_t n)
{
    if (n == 0) /* the array may not exist yet */
        return;
    pthread_mutex_lock(&p->lock);
    memcpy(p->free + p->nfree, h, n * sizeof *h);
    p->nfree += n;
    pthread_mutex_unlock(&p->lock);
}

/* Carved a batch at a time, each batch given to the depot under one lock. */
int ld_stack_depot_reserve(ld_stack_depot *p, size_t n)
{
    for (;;) {
        ld_slot *batch[RESERVE_BATCH];
        size_t got, have;
        int rc;

        pthread_mutex_lock(&p->lock);
        have = p->nfree;
        pthread_mutex_unlock(&p->lock);
        if (have >= n)
            return 0;
        got = depot_carve(p, n - have < RESERVE_BATCH ? n - have : RESERVE_BATCH, batch,
                          &rc);
        if (got == 0)
            return rc != 0 ? rc : -ENOMEM;
        depot_give(p, batch, got);
    }
}

/* The cache's ring holds `cap` stacks and a refill's batch, in a power of two. */
int ld_stack_cache_init(ld_stack_cache *c, ld_stack_depot *depot, size_t size,
                        enum ld_stack_mode mode, size_t cap)
{
    size_t slots = DEPOT_BATCH;
    int rc = 0;

    while (slots < cap)
        slots *= 2;
    c->ring = malloc(slots * sizeof *c->ring);
    if (c->ring == NULL)
        return -ENOMEM;
    c->mask = slots - 1;
    c->first = 0;
    c->count = 0;
    c->cap = cap != 0 ? cap : 1;
    c->own_depot = depot == NULL;
    c->depot = depot;
    if (depot == NULL)
        rc = ld_stack_depot_create(&c->depot, size, mode);
    if (rc != 0) {
        free(c->ring);
        return rc;
    }
    c->prefetch_from = ld_stack_depot_mode(c->depot) == LD_STACK_COPY ? 0 : -192;
    return 0;
}

/* The n oldest stacks of the cache back to its depot: the ring's run from `first`,
 * in at most two pieces. */
static void cache_give_oldest(ld_stack_cache *c, size_t n)
{
    size_t run = c->mask + 1 - c->first;

    if (run > n)
        run = n;
    depot_give(c->depot, c->ring + c->first, run);
    if (n > run)
        depot_give(c->depot, c->ring, n - run);
    c->first = (c->first + n) & c->mask;
    c->count -= n;
}

void ld_stack_cache_fini(ld_stack_cache *c)
{
    cache_give_oldest(c, c->count);
    free(c->ring);
    c->ring = NULL;
    if (c->own_depot)
        ld_stack_depot_destroy(c->depot);
    c->depot = NULL;
}

/* An empty cache takes a batch from the depot's free stacks, else newly carved ones. */
static size_t cache_refill(ld_stack_cache *c)
{
    size_t want = DEPOT_BATCH, i;
    int rc;

    c->first = 0;
    c->count = depot_take(c->depot, want, c->ring);
    if (c->count == 0)
        c->count = depot_carve(c->depot, want, c->ring, &rc);
    for (i = c->count > LD_STACK_PREFETCH ? c->count - LD_STACK_PREFETCH : 0;
         i < c->count; i++)
        ld_stack_prefetch(c, c->ring[i]);
    return c->count;
}

/* A cache that ld_stack_get's inline path cannot serve: it refills when empty; of
 * its last few stacks, none is far enough back to fetch ahead of time. */
ld_slot *ld_stack_get_slow(ld_stack_cache *c)
{
    if (c->count == 0 && cache_refill(c) == 0)
        return NULL;
    c->count--;
    if (c->count >= LD_STACK_PREFETCH)
        ld_stack_prefetch(c,
                          c->ring[(c->first + c->count - LD_STACK_PREFETCH) & c->mask]);
    return c->ring[(c->first + c->count) & c->mask];
}

/* A thread's last frames never return, so ASan still has their redzones poisoned:
 * clear them before the stack is reused. A full cache gives its oldest batch to the
 * depot, where other schedulers can have them, and keeps the stacks still warm. */
void ld_stack_put_slow(ld_stack_cache *c, ld_slot *h)
{
#ifdef LD_CTX_ASAN
    if (ld_stack_depot_mode(c->depot) == LD_STACK_OWN) {
        const ld_stack *st = ld_slot_stack(h);
        ASAN_UNPOISON_MEMORY_REGION(st->lo, (size_t)((char *)h - (char *)st->lo));
    }
#endif
    if (c->count >= c->cap)
        cache_give_oldest(c, c->count < DEPOT_BATCH ? c->count : DEPOT_BATCH);
    c->ring[(c->first + c->count) & c->mask] = h;
    c->count++;
}

enum ld_stack_mode ld_stack_depot_mode(const ld_stack_depot *p)
{
    return p->mode;
}

size_t ld_stack_depot_size(const ld_stack_depot *p)
{
    return p->mode == LD_STACK_COPY ? p->run_size : p->size;
}

/* A ucontext's saved context lies in a frame just below its pointer
 * (gt_switch_ucontext.c), so trimming keeps that much more; the assembly switches
 * keep everything from the stack pointer up. */
#define STACK_TRIM_SLACK (LD_CTX_COPYABLE ? 0u : 1024u)

/* Nothing below sp is live, so neither ASan's shadow (frames that returned left it
 * clear) nor valgrind's view (it has popped bytes unaddressable) needs telling. */
uint64_t ld_stack_trim(ld_stack *st, const void *sp)
{
    uintptr_t mask = ~(uintptr_t)(stack_page - 1);
    uintptr_t top = (uintptr_t)ld_stack_top(st);
    uintptr_t keep = ((uintptr_t)sp - STACK_TRIM_SLACK) & mask;
    uintptr_t low = (top - st->touched) & mask;
    uint64_t before = ld_stack_touched_bytes(st, stack_page);

    if (low < (uintptr_t)st->lo)
        low = (uintptr_t)st->lo;
    if (keep <= low || madvise((void *)low, keep - low, MADV_DONTNEED) != 0)
        return 0;
    st->touched = (uint32_t)(top - keep);
    return before - ld_stack_touched_bytes(st, stack_page);
}

int ld_stack_overflowed(const ld_stack *st, const void *addr, const void *sp)
{
    uintptr_t a = (uintptr_t)addr;
    uintptr_t lo = (uintptr_t)st->lo;

    if (a < lo && a >= lo - stack_page)
        return 1;
    if (st->guard != LD_GUARD_CANARY)
        return 0;
    return ((uintptr_t)sp < lo && (uintptr_t)sp >= lo - st->size) ||
           !ld_stack_zero_below(st, stack_page);
}

int ld_stack_canary_page_intact(const ld_stack *st)
{
    return ld_stack_zero_below(st, stack_page);
}

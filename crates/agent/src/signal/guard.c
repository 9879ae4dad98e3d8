/*
 * Crash protection for the asynchronous stack walk (hprof-rs).
 *
 * The CPU sampler calls HotSpot's AsyncGetCallTrace inside a signal handler, on a thread
 * stopped at an arbitrary instruction. The walk reads the interrupted thread's frames and can,
 * rarely, fault on a frame that is half built. A fault inside the walk must not kill the JVM:
 * hprof_walk_guarded() records where to come back to (sigsetjmp) in a slot keyed by the
 * thread's kernel id, and the SIGSEGV/SIGBUS handler installed by hprof_guard_install() jumps
 * back there when the faulting thread is inside a guarded walk. Every other fault goes to the
 * handler that was installed before (the JVM's, which uses SIGSEGV for null checks, safepoint
 * polls and stack banging), exactly as if ours were not there.
 *
 * Rust cannot call sigsetjmp (a function that returns twice), hence this file. Everything here
 * is async-signal-safe: no allocation, no lock, only atomics on a preallocated table.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define GUARD_SLOTS 1024

struct guard_slot {
    int tid;            /* 0: free */
    sigjmp_buf *jump;   /* where the walk of `tid` comes back to after a fault */
};

static struct guard_slot slots[GUARD_SLOTS];
static struct sigaction previous_segv;
static struct sigaction previous_bus;
static volatile int installed;
static volatile unsigned long faults;

static int current_tid(void) {
    return (int)syscall(SYS_gettid);
}

static struct guard_slot *claim(int tid) {
    unsigned start = (unsigned)tid % GUARD_SLOTS;
    for (unsigned i = 0; i < GUARD_SLOTS; i++) {
        struct guard_slot *slot = &slots[(start + i) % GUARD_SLOTS];
        int expected = 0;
        if (__atomic_compare_exchange_n(&slot->tid, &expected, tid, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            return slot;
        }
    }
    return NULL;
}

static struct guard_slot *find(int tid) {
    unsigned start = (unsigned)tid % GUARD_SLOTS;
    for (unsigned i = 0; i < GUARD_SLOTS; i++) {
        struct guard_slot *slot = &slots[(start + i) % GUARD_SLOTS];
        if (__atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE) == tid) {
            return slot;
        }
    }
    return NULL;
}

static void pass_on(const struct sigaction *previous, int sig, siginfo_t *info, void *context) {
    if (previous->sa_flags & SA_SIGINFO) {
        if (previous->sa_sigaction != NULL) {
            previous->sa_sigaction(sig, info, context);
            return;
        }
    } else if (previous->sa_handler == SIG_IGN) {
        return;
    } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != NULL) {
        previous->sa_handler(sig);
        return;
    }
    /* The default action: die of this signal, as without us. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_fault(int sig, siginfo_t *info, void *context) {
    if (installed) {
        int tid = current_tid();
        struct guard_slot *slot = find(tid);
        if (slot != NULL && slot->jump != NULL) {
            __atomic_add_fetch(&faults, 1, __ATOMIC_RELAXED);
            siglongjmp(*slot->jump, 1);
        }
    }
    pass_on(sig == SIGBUS ? &previous_bus : &previous_segv, sig, info, context);
}

/* Puts back the handlers the guard replaced (no walk may be running); 0 on success. */
int hprof_guard_uninstall(void) {
    if (!installed) {
        return 0;
    }
    if (sigaction(SIGSEGV, &previous_segv, NULL) != 0 ||
        sigaction(SIGBUS, &previous_bus, NULL) != 0) {
        return -1;
    }
    installed = 0;
    return 0;
}

/* Installs the fault handler in front of the current ones; 0 on success. */
int hprof_guard_install(void) {
    if (installed) {
        return 0;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, NULL, &previous_segv) != 0 ||
        sigaction(SIGBUS, NULL, &previous_bus) != 0) {
        return -1;
    }
    installed = 1;
    if (sigaction(SIGSEGV, &action, NULL) != 0) {
        installed = 0;
        return -1;
    }
    if (sigaction(SIGBUS, &action, NULL) != 0) {
        sigaction(SIGSEGV, &previous_segv, NULL);
        installed = 0;
        return -1;
    }
    return 0;
}

/* Faults the guard has caught so far. */
unsigned long hprof_guard_faults(void) {
    return __atomic_load_n(&faults, __ATOMIC_RELAXED);
}

typedef void (*walk_fn)(void *trace, int depth, void *context);

/*
 * Calls walk(trace, depth, context); returns 0 when it returned, 1 when it faulted (and was
 * abandoned), 2 when no guard slot was free (the walk was not made).
 */
int hprof_walk_guarded(walk_fn walk, void *trace, int depth, void *context) {
    int tid = current_tid();
    struct guard_slot *slot = claim(tid);
    if (slot == NULL) {
        return 2;
    }
    sigjmp_buf jump;
    volatile int result = 0;
    /* The signal mask is saved so that the jump back also unblocks SIGSEGV. */
    if (sigsetjmp(jump, 1) == 0) {
        __atomic_store_n(&slot->jump, &jump, __ATOMIC_RELEASE);
        walk(trace, depth, context);
    } else {
        result = 1;
    }
    __atomic_store_n(&slot->jump, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
    return result;
}

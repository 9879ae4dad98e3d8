// What each per-thread CPU clock gives a thread that runs in bursts shorter than the kernel's
// tick: the thread computes for 1 ms (wall), sleeps 5 ms, for 4 s, with a perf event on its task
// clock (mode 0) or a POSIX timer on its CPU clock (mode 1) signalling it every 1 ms of its CPU
// time; optional spinner threads keep the CPUs busy. Prints the thread's CPU time, the signals
// it got and the intervals they stand for (a POSIX timer's overruns, a perf event's count).
//
//     timer_bursts MODE SPINNERS
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long signals, intervals;
static volatile uint64_t last_count;
static int event_fd = -1;

static void on_signal(int signo, siginfo_t *info, void *context) {
    (void) signo;
    (void) context;
    signals++;
    if (info->si_code == SI_TIMER) {
        intervals += 1 + info->si_overrun;
    } else {
        uint64_t count = 0;
        if (read(event_fd, &count, sizeof count) == sizeof count) {
            intervals += (long) ((count - last_count + 500000) / 1000000);
            last_count = count;
        }
        ioctl(event_fd, PERF_EVENT_IOC_REFRESH, 1);
    }
}

__attribute__((noinline)) static uint64_t work(uint64_t x) {
    for (int i = 0; i < 1000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    return x;
}

static void *spin(void *arg) {
    uint64_t x = (uint64_t) (uintptr_t) arg;
    for (;;) {
        x = work(x);
    }
    return (void *) (uintptr_t) x;
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: timer_bursts MODE SPINNERS\n");
        return 2;
    }
    int mode = atoi(argv[1]), spinners = atoi(argv[2]);
    for (int i = 0; i < spinners; i++) {
        pthread_t thread;
        pthread_create(&thread, NULL, spin, (void *) (uintptr_t) (i + 1));
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &action, NULL);
    if (mode == 0) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.type = PERF_TYPE_SOFTWARE;
        attr.size = sizeof attr;
        attr.config = PERF_COUNT_SW_TASK_CLOCK;
        attr.sample_period = 1000000;
        attr.wakeup_events = 1;
        attr.disabled = 1;
        event_fd = (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
        if (event_fd < 0) {
            perror("perf_event_open");
            return 1;
        }
        fcntl(event_fd, F_SETFL, fcntl(event_fd, F_GETFL) | O_ASYNC);
        fcntl(event_fd, F_SETSIG, SIGPROF);
        struct f_owner_ex owner = {F_OWNER_TID, (pid_t) syscall(SYS_gettid)};
        fcntl(event_fd, F_SETOWN_EX, &owner);
        ioctl(event_fd, PERF_EVENT_IOC_REFRESH, 1);
    } else {
        struct sigevent event;
        memset(&event, 0, sizeof event);
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = SIGPROF;
        event._sigev_un._tid = (pid_t) syscall(SYS_gettid);
        timer_t timer;
        timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer);
        struct itimerspec spec = {{0, 1000000}, {0, 1000000}};
        timer_settime(timer, 0, &spec, NULL);
    }
    uint64_t x = 1;
    double cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID), end = seconds(CLOCK_MONOTONIC) + 4;
    while (seconds(CLOCK_MONOTONIC) < end) {
        double burst = seconds(CLOCK_MONOTONIC) + 0.001;
        while (seconds(CLOCK_MONOTONIC) < burst) {
            x = work(x);
        }
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    printf("%s spinners=%d cpu_ms=%.0f signals=%ld intervals=%ld (x %lu)\n", mode ? "posix" : "perf", spinners,
           cpu * 1000, signals, intervals, (unsigned long) (x & 1));
    return 0;
}

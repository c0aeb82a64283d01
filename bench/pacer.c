/* The reference open-loop pacer of docs/BENCHMARKS.md ("Open-loop lag"): the least a program must do to start
 * work on a schedule, to set beside iolab's lag on the same machine. Arrivals are fixed (one every 1/rate s) or
 * Poisson (exponential gaps, seeded), each at an absolute deadline counted from the start (no drift). For each
 * one it sleeps (clock_nanosleep, TIMER_ABSTIME, CLOCK_MONOTONIC, timer slack 1 ns as iolab's workers) until
 * the deadline minus the margin, then spins to the deadline; the lag is when it got there minus the deadline.
 * A margin of 0 only sleeps; a margin at least the gap only spins. Over 20k arrivals a second (a mean gap under
 * 50 us) it follows iolab's rule instead: it never spins and never sleeps under 50 us, and takes every arrival
 * that fell due on waking. No I/O: the lag is the pacer's alone.
 *
 *   cc -O2 -o pacer bench/pacer.c -lm
 *   ./pacer RATE SECONDS fixed|poisson MARGIN_US [SEED]
 *
 * Prints one line: rate, arrivals, margin, arrivals done, lag p50/p99/max in ns, and the CPU seconds
 * (user+system, getrusage) over the run, with the cores used (CPU seconds / wall seconds). */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define PAUSE() __asm__ __volatile__("yield")
#else
#define PAUSE() ((void)0)
#endif

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* xorshift64*: a seeded stream, uniform in (0, 1]. */
static double uniform(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return ((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) + 1e-300;
}

static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s RATE SECONDS fixed|poisson MARGIN_US [SEED]\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[1]), secs = atof(argv[2]);
    int poisson = strcmp(argv[3], "poisson") == 0;
    if (rate <= 0 || secs <= 0 || (!poisson && strcmp(argv[3], "fixed") != 0)) {
        fprintf(stderr, "pacer: expected RATE > 0, SECONDS > 0, fixed|poisson; got '%s' '%s' '%s'\n", argv[1],
                argv[2], argv[3]);
        return 2;
    }
    uint64_t margin = (uint64_t)(atof(argv[4]) * 1000.0);
    uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
    if (seed == 0) seed = 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    size_t cap = (size_t)(rate * secs * 1.5) + 16, n = 0;
    uint64_t *lag = malloc(cap * sizeof *lag);
    double gap = 1e9 / rate, t = 0;
    int coalesce = gap < 50000.0; /* a mean gap under iolab's shortest sleep */
    double cpu0 = cpu_s();
    uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9);
    for (;;) {
        t += poisson ? -log(uniform(&seed)) * gap : gap;
        uint64_t due = start + (uint64_t)t;
        if (due >= end || n == cap) break;
        uint64_t now = now_ns();
        if (coalesce && due > now) {
            /* iolab's rule over 20k IOPS: never spin, never sleep under 50 us, issue what fell due. */
            uint64_t wake = due > now + 50000 ? due : now + 50000;
            struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
            }
        } else if (!coalesce && due > now + margin) {
            uint64_t wake = due - margin;
            struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
            }
        }
        while ((now = now_ns()) < due) PAUSE();
        lag[n++] = now - due;
    }
    double wall = (now_ns() - start) / 1e9, cpu = cpu_s() - cpu0;
    qsort(lag, n, sizeof *lag, cmp);
    /* Nearest rank, as iolab's percentiles. */
    size_t p50 = n ? (size_t)ceil(0.50 * n) - 1 : 0, p99 = n ? (size_t)ceil(0.99 * n) - 1 : 0;
    printf("rate %g arrivals %s margin_us %g n %zu lag_p50_ns %llu lag_p99_ns %llu lag_max_ns %llu cpu_s %.4f "
           "cores %.4f\n",
           rate, poisson ? "poisson" : "fixed", margin / 1e3, n, n ? (unsigned long long)lag[p50] : 0ull,
           n ? (unsigned long long)lag[p99] : 0ull, n ? (unsigned long long)lag[n - 1] : 0ull, cpu, cpu / wall);
    return 0;
}

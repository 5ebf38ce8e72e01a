/* The clocks: monotonic seconds, for timings and progress, and the process's CPU seconds, for timings
 * on a shared machine (never part of a result). */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c11 */
#include <time.h>

#include "difgames/base.h"

double dg_clock_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double dg_cpu_clock_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

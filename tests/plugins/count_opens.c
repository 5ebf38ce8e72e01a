/* A preloaded shim (LD_PRELOAD) that counts how often a program opens files whose path ends with
 * DG_COUNT_OPENS (open, openat and fopen, and their 64-bit names), and appends the count, one line
 * "opens N", to the file DG_COUNT_OPENS_OUT when the program exits: f64_test.sh checks with it that
 * the command reads its config once. Every call goes on to the C library's own function. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int count;

/* Counts path when it ends with DG_COUNT_OPENS. */
static void seen(const char *path) {
    const char *want = getenv("DG_COUNT_OPENS");
    if (!want || !path) return;
    const size_t n = strlen(path), w = strlen(want);
    if (n >= w && !strcmp(path + n - w, want)) __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
}

/* Appends "opens N" to DG_COUNT_OPENS_OUT at exit (the count of this process image). */
__attribute__((destructor)) static void report(void) {
    const char *out = getenv("DG_COUNT_OPENS_OUT");
    if (!out) return;
    int (*real_open)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    char line[32];
    const int len = snprintf(line, sizeof line, "opens %d\n", count);
    const int fd = real_open ? real_open(out, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    if (fd < 0) return;
    if (write(fd, line, (size_t)len) < 0) { /* nothing to do: the test sees no line */ }
    close(fd);
}

#define MODE_ARG(flags, mode)                                   \
    mode_t mode = 0;                                            \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                      \
        va_list ap;                                             \
        va_start(ap, flags);                                    \
        mode = (mode_t)va_arg(ap, int);                         \
        va_end(ap);                                             \
    }

/* open(2) and open64, counted, then the C library's. */
int open(const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    seen(path);
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    return real(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    seen(path);
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}

/* openat(2) and openat64, counted, then the C library's. */
int openat(int dir, const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    seen(path);
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    return real(dir, path, flags, mode);
}
int openat64(int dir, const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    seen(path);
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
    return real(dir, path, flags, mode);
}

/* fopen(3) and fopen64 (the C library opens inside without the calls above), counted, then its own. */
FILE *fopen(const char *path, const char *how) {
    seen(path);
    FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    return real(path, how);
}
FILE *fopen64(const char *path, const char *how) {
    seen(path);
    FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen64");
    return real(path, how);
}

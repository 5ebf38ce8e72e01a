/* A test's temporary folder (tests define _POSIX_C_SOURCE 200809L for mkdtemp): header-only. */
#ifndef DG_TESTS_UTIL_TMPDIR_H
#define DG_TESTS_UTIL_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* A fresh folder /tmp/<prefix>XXXXXX in dir (64 bytes; a cmocka group setup): 0, or -1. */
static inline int check_tmpdir(char *dir, const char *prefix) {
    snprintf(dir, 64, "/tmp/%sXXXXXX", prefix);
    return mkdtemp(dir) ? 0 : -1;
}

/* Removes dir and all below it (a cmocka group teardown): 0, or -1. */
static inline int check_rmdir(const char *dir) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif

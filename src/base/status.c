/* Status strings and error-message helpers. */
#include "difgames/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const STATUS_STR[] = {
    "ok",
    "out of memory",
    "arena full",
    "shape mismatch",
    "invalid argument",
    "i/o error",
    "malformed file",
    "not found",
    "invalid config",
    "non-finite value",
    "interrupted",
};
_Static_assert(sizeof(STATUS_STR) / sizeof(STATUS_STR[0]) == DG_STATUS_COUNT,
               "STATUS_STR must name every dg_status");

const char *dg_status_str(dg_status s) {
    if ((int)s < 0 || s >= DG_STATUS_COUNT) return "unknown status";
    return STATUS_STR[s];
}

int dg_status_exit(dg_status s) {
    switch (s) {
    case DG_OK: return 0;
    case DG_ERR_ARG: case DG_ERR_IO: case DG_ERR_FORMAT: case DG_ERR_NOT_FOUND: case DG_ERR_CONFIG:
        return DG_EXIT_USAGE;
    case DG_ERR_INTERRUPTED: return DG_EXIT_INTERRUPTED;
    default: return DG_EXIT_FAIL;
    }
}

dg_status dg_err_set(dg_err *e, dg_status s, const char *fmt, ...) {
    if (!e) return s;
    e->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return s;
}

dg_status dg_err_prefix(dg_err *e, const char *prefix) {
    if (!e) return DG_OK;
    char tmp[DG_ERR_LEN];
    size_t k = strlen(prefix);
    if (k > DG_ERR_LEN / 2) k = DG_ERR_LEN / 2;  /* keep room for the message itself */
    memcpy(tmp, prefix, k);
    memcpy(tmp + k, ": ", 2);
    size_t rest = strlen(e->msg);
    if (rest > DG_ERR_LEN - k - 3) rest = DG_ERR_LEN - k - 3;
    memcpy(tmp + k + 2, e->msg, rest);
    tmp[k + 2 + rest] = 0;
    memcpy(e->msg, tmp, sizeof tmp);
    return e->status;
}

/* The sanitizer's process-wide settings live here, not next to what they excuse (cairo's drawing,
 * the model files' parser), because this file is linked into every program that uses the library
 * (every error goes through dg_err_set): an object of their own in libdifgames.a would be left out
 * of a static link, as nothing calls them by name, and the suppressions with it. */
#if defined(__SANITIZE_ADDRESS__)
#define DG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DG_ASAN 1
#endif
#endif
#ifdef DG_ASAN  /* base is compiled once (CMakeLists.txt): one definition in the library */
/* fontconfig (cairo's text finds its face through it) keeps its configuration and pattern caches for the
 * life of the process on purpose; libmatheval's parser (model files) drops its partial tree on a syntax
 * error, which the caller cannot free; LeakSanitizer would report them at exit (a DG_SANITIZE build). */
/* visibility default: the sanitizer's runtime looks them up by name, past the library's -fvisibility=hidden */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\nleak:libmatheval.so\n"; }
__attribute__((visibility("default"))) const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "print_suppressions=0"; }  /* stderr stays the program's */
#endif

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

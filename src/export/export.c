/* What both exporters share: the prefix, the two files written atomically, exact numbers. */
#include <string.h>
#include <sys/stat.h>

#include "export/internal.h"

int dg_export_prefix_ok(const char *prefix) {
    if (!prefix || !prefix[0] || strlen(prefix) > DG_EXPORT_PREFIX_MAX) return 0;
    for (const char *c = prefix; *c; c++) {
        const int alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
        if (!alpha && (c == prefix || !(*c >= '0' && *c <= '9'))) return 0;
    }
    return 1;
}

dg_status dg__ex_open(ex_out *o, const char *dir, const char *prefix, dg_err *e) {
    memset(o, 0, sizeof *o);
    if (!dg_export_prefix_ok(prefix))
        return dg_err_set(e, DG_ERR_ARG, "export: prefix '%.40s' is not a C identifier of 1 to %d characters",
                          prefix ? prefix : "", DG_EXPORT_PREFIX_MAX);
    char name[DG_EXPORT_PREFIX_MAX + 3], h[DG_PATH_MAX], c[DG_PATH_MAX];
    snprintf(name, sizeof name, "%s.h", prefix);
    dg_status s = dg_path_join(h, sizeof h, dir, name, e);
    snprintf(name, sizeof name, "%s.c", prefix);
    if (s == DG_OK) s = dg_path_join(c, sizeof c, dir, name, e);
    if (s == DG_OK) s = dg_file_parent_make(h, e);
    if (s == DG_OK) s = dg_file_name_ok(c, e);
    if (s == DG_OK && (s = dg_file_begin(&o->h, h, e)) == DG_OK) o->open = 1;
    if (s == DG_OK && (s = dg_file_begin(&o->c, c, e)) == DG_OK) o->open = 2;
    if (s != DG_OK) dg__ex_abort(o);
    return s;
}

/* The size of the file at path, or -1. */
static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

dg_status dg__ex_commit(ex_out *o, dg_export_files *out, dg_err *e) {
    /* the code first: a header found beside it then always declares what the code defines */
    dg_status s = dg_file_commit(&o->c, e);
    if (s == DG_OK) s = dg_file_commit(&o->h, e);
    else dg_file_abort(&o->h);
    o->open = 0;
    if (s == DG_OK && out) {
        snprintf(out->h, sizeof out->h, "%s", o->h.path);
        snprintf(out->c, sizeof out->c, "%s", o->c.path);
        out->h_bytes = file_size(out->h);
        out->c_bytes = file_size(out->c);
    }
    return s;
}

void dg__ex_abort(ex_out *o) {
    if (o->open >= 1) dg_file_abort(&o->h);
    if (o->open >= 2) dg_file_abort(&o->c);
    o->open = 0;
}

void dg__ex_doubles(FILE *fp, const double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) fprintf(fp, "%a,%s", v[i], i % 4 == 3 || i == n - 1 ? "\n" : " ");
}

void dg__ex_floats(FILE *fp, const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) fprintf(fp, "%af,%s", (double)v[i], i % 6 == 5 || i == n - 1 ? "\n" : " ");
}

void dg__ex_header_open(FILE *fp, const char *prefix, const char *what) {
    fprintf(fp,
            "/* %s.h: %s, written by `difgames export` (docs/export.md).\n"
            " * C99 and libm only: no allocation, no state (thread-safe). Compile %s.c without contracting\n"
            " * a * b + c (-ffp-contract=off; GCC's default under -std=c99) and without -ffast-math. */\n"
            "#ifndef %s_EXPORT_H\n#define %s_EXPORT_H\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
            prefix, what, prefix, prefix, prefix);
}

void dg__ex_header_close(FILE *fp, const char *prefix) {
    fprintf(fp, "\n#ifdef __cplusplus\n}\n#endif\n#endif /* %s_EXPORT_H */\n", prefix);
}

int dg__ex_fused(void) {
    /* CMakeLists.txt builds with -ffp-contract=fast: on a CPU with FMA an optimised build (Release:
       -O3) computes a * b + c as one fma; an unoptimised one (Debug: -O0, the sanitizers' build)
       contracts nothing. (-O1 does not either, and -O2 vectorises less: such builds are not
       reproduced.) */
#if (defined(__FMA__) || defined(__FP_FAST_FMA)) && defined(__OPTIMIZE__)
    return 1;
#else
    return 0;
#endif
}

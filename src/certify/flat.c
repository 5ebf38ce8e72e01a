/* dg_flat_certify: `difgames certify` on a flat handle's run (include/difgames/flat.h), for callers
 * that cannot see C structs (the Python package's dg.certify). It lives with certify, above solver's
 * flat handle (src/solver/flat_internal.h). */
#include <stdlib.h>

#include "difgames/certify_run.h"
#include "difgames/flat.h"
#include "solver/flat_internal.h"

const char *dg_flat_certify(dg_flat *f, const char *ckpt, const char *hji, const char *const *names,
                            const char *const *values, int n, int *usage, dg_err *e) {
    dg_certify_run_opts o = dg_certify_run_opts_default();
    o.ckpt = ckpt;
    o.hji = hji;
    if (usage) *usage = 1;
    dg_flat_keep_text(f, NULL);
    for (int i = 0; i < n; i++)
        if (dg_certify_run_set(&o, names[i], values[i], e) != DG_OK) return NULL;
    dg_certify_run_result r;
    const dg_status s = dg_certify_run(dg_flat_run(f), &o, &r, e);
    if (usage) *usage = s != DG_OK && r.usage;
    const char *json = NULL;
    if (s == DG_OK) json = dg_flat_keep_text(f, r.json), r.json = NULL;  /* the handle's until the next call */
    dg_certify_run_free(&r);
    return json;
}

char *dg_flat_certify_sampling(const char *config, const char *value, const char *grid, const char *const *names,
                               const char *const *values, int n, int *usage, dg_err *e) {
    dg_certify_run_opts o = dg_certify_run_opts_default();
    o.value = value;
    o.grid = grid;
    if (usage) *usage = 1;
    if (!value) {
        dg_err_set(e, DG_ERR_ARG, "certify: --sampling needs the network of hji learn (value)");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (dg_certify_run_set(&o, names[i], values[i], e) != DG_OK) return NULL;
    dg_certify_run_result r;
    const dg_status s = dg_certify_sampling_run(config, &o, &r, e);
    if (usage) *usage = s != DG_OK && r.usage;
    char *json = s == DG_OK ? r.json : NULL;
    r.json = NULL;
    dg_certify_run_free(&r);
    return json;
}

void dg_flat_text_free(char *text) { free(text); }

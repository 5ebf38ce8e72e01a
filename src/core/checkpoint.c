/* Parameters to and from safetensors files (difgames/checkpoint.h): the tape's values, dg_real, so
 * compiled in both precisions; the file format itself is src/io/safetensors.c's, compiled once. */
#include <stdlib.h>
#include <string.h>

#include "difgames/checkpoint.h"
#include "difgames/safetensors.h"

dg_status dg_checkpoint_save(const char *path, const dg_params *p, int grads,
                             const char *const *meta_kv, int nmeta, dg_err *e) {
    int64_t j = 0;
    const int bad = grads ? -1 : dg_params_first_nonfinite(p, p->data, &j);
    if (bad >= 0)  /* a parameter file is something to train on or deploy: never a NaN in it */
        return dg_err_set(e, DG_ERR_NONFINITE, "%s not written: parameter %s[%lld] is not finite", path,
                          p->info[bad].name, (long long)j);
    dg_st_writer *w = dg_st_writer_create();
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", path);
    dg_status st = DG_OK;
    for (int i = 0; i < p->count && st == DG_OK; i++) {
        const dg_param_info *pi = &p->info[i];
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < pi->ndim; d++) shape[d] = pi->shape[d];
        st = dg_st_writer_add(w, pi->name, DG_DTYPE_REAL, pi->ndim, shape,
                              (grads ? p->grad : p->data) + pi->offset, e);
    }
    for (int k = 0; k < nmeta && st == DG_OK; k++)
        st = dg_st_writer_meta(w, meta_kv[2 * k], meta_kv[2 * k + 1], e);
    if (st == DG_OK) st = dg_st_writer_write(w, path, e);
    dg_st_writer_free(w);
    return st;
}

dg_status dg_checkpoint_load(const char *path, dg_params *p, dg_err *e) {
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return e ? e->status : DG_ERR_IO;
    dg_real *tmp = malloc((p->total ? p->total : 1) * sizeof(dg_real));
    dg_status st = tmp ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", path);
    for (int i = 0; i < p->count && st == DG_OK; i++) {
        const dg_param_info *pi = &p->info[i];
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < pi->ndim; d++) shape[d] = pi->shape[d];
        st = dg_st_read_real(f, pi->name, pi->ndim, shape, tmp + pi->offset, e);
        if (st == DG_ERR_NOT_FOUND)
            dg_err_set(e, st, "%s: tensor '%s' missing (is it a checkpoint of this game and policy?)",
                       path, pi->name);
    }
    if (st == DG_OK) {
        int64_t j = 0;
        const int bad = dg_params_first_nonfinite(p, tmp, &j);
        if (bad >= 0)  /* nothing to play or train from: the run that wrote it diverged */
            st = dg_err_set(e, DG_ERR_NONFINITE, "%s: parameter %s[%lld] is not finite (%g)", path, p->info[bad].name,
                            (long long)j, (double)tmp[p->info[bad].offset + (size_t)j]);
        else
            memcpy(p->data, tmp, p->total * sizeof(dg_real));
    }
    free(tmp);
    dg_st_free(f);
    return st;
}

/* Reads tensor name, F32 or F64, into dg_real out (converted from the other width); returns DG_OK or
 * dg_st_read's error (difgames/checkpoint.h). */
dg_status dg_st_read_real(const dg_st_file *f, const char *name, int ndim, const int64_t *shape,
                          dg_real *out, dg_err *e) {
    return dg_st_read_as(f, name, DG_DTYPE_REAL, ndim, shape, out, e);
}

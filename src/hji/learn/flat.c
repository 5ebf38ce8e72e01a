/* A value file or a network behind the flat value handle (dg_hji_flat_open, include/difgames/hji_learn.h;
 * the handle itself: src/hji/flat.c). In the learner's layer, compiled twice: each copy reads a network
 * in its own precision (the Python package opens an f64 network with the double copy's). */
#include <stdlib.h>

#include "../flat_internal.h"
#include "difgames/hji_learn.h"

static void net_free(void *net) {
    dg_hji_learn_net_free(net);
    free(net);
}

dg_hji_flat *dg_hji_flat_open(const char *path, const char *config, const char *const *keys,
                              const char *const *values, int n, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    if (!path) {
        dg_err_set(e, DG_ERR_ARG, "dg_hji_flat_open: no value file");
        return NULL;
    }
    if (!dg_hji_learn_probe(path, NULL)) return dg_hji_flat_file(path, config, keys, values, n, e);
    if (!config) {
        dg_err_set(e, DG_ERR_ARG, "%.400s: a network of hji learn: give the HJI config it was trained on", path);
        return NULL;
    }
    dg_hji_flat *h = dg_hji_flat_begin(config, NULL, NULL, keys, values, n, 1, e);
    if (!h) return NULL;
    dg_hji_learn_net *net = calloc(1, sizeof *net);
    dg_status st = net ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (st == DG_OK) {
        h->net = net, h->net_free = net_free;
        st = dg_hji_learn_load(path, h->p, net, e);
    }
    if (st == DG_OK) st = dg_hji_learn_source(net, h->p, &h->src, e);
    if (st != DG_OK) {
        dg_hji_flat_free(h);
        return NULL;
    }
    h->kind = DG_HJI_FLAT_NETWORK;
    return h;
}

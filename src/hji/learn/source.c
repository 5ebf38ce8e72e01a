/* A learned value as a value source (hji_sim.h): what the grid's strategies read, from the network's
 * own gradient. In the learner's layer (compiled twice): the grid code, compiled once, calls it only
 * through the source's eval. */
#include <string.h>

#include "difgames/hji_learn.h"
#include "difgames/safetensors.h"

/* The source's eval: the network's V and grad_x V at the batch (V alone without grad). */
static dg_status net_eval(const dg_hji_source *s, int64_t B, const double *x, const double *tau, double *V,
                          double *grad, dg_err *e) {
    const dg_hji_learn_net *net = s->user;
    if (!grad) return V ? dg_hji_learn_eval(net, s->problem, B, x, tau, V, e) : DG_OK;
    return dg_hji_learn_eval_grad(net, s->problem, B, x, tau, V, NULL, grad, e);
}

dg_status dg_hji_learn_source(const dg_hji_learn_net *net, const dg_hji_problem *p, dg_hji_source *s, dg_err *e) {
    if (!net || !net->params || !p || !s)
        return dg_err_set(e, DG_ERR_ARG, "hji learn: a source needs a network, its problem and the source");
    if (net->nx != p->grid.ndim)
        return dg_err_set(e, DG_ERR_ARG, "hji learn: the network has %d state variables, %s %d", net->nx, p->name,
                          p->grid.ndim);
    *s = (dg_hji_source){.eval = net_eval, .horizon = net->t_end, .user = net, .problem = p};
    return DG_OK;
}

int dg_hji_learn_probe(const char *path, int *f64) {
    dg_err e = {0};
    dg_st_file *f = path ? dg_st_load(path, &e) : NULL;
    const char *fmt = f ? dg_st_meta(f, "format") : NULL, *prec = f ? dg_st_meta(f, "precision") : NULL;
    const int net = fmt && !strcmp(fmt, "difgames-hji-learn");
    if (f64) *f64 = net && prec && !strcmp(prec, "f64");
    dg_st_free(f);
    return net;
}

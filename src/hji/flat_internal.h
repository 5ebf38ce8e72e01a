/* The flat value handle's insides (include/difgames/hji_flat.h), shared by src/hji/flat.c (a solve, a
 * value file: the grid layer, compiled once) and src/hji/learn/flat.c (a network: the learner's layer,
 * compiled twice, each copy reading its own precision's network). */
#ifndef DIFGAMES_HJI_FLAT_INTERNAL_H
#define DIFGAMES_HJI_FLAT_INTERNAL_H

#include "difgames/config.h"
#include "difgames/hji.h"
#include "difgames/hji_flat.h"

struct dg_hji_flat {
    dg_cfg             *cfg;              /* the problem's config (a value file's stored one), owned */
    dg_hji_problem     *p;                /* owned                                                  */
    double             *V;                /* the values at the horizon on p's grid (nodes), owned; a
                                             network's tabulated on first use, NULL before         */
    double              t;                /* a solve's one time (its slices' t)                     */
    dg_hji_slices       one;              /* a solve: {1, &t, V}                                     */
    dg_hji_value_slices vs;               /* a value file's stored times                            */
    dg_hji_source       src;              /* what every read goes through (slices or network)       */
    void               *net;              /* a network (the learner's), owned, freed by net_free    */
    void              (*net_free)(void *net);
    int                 kind;             /* dg_hji_flat_source                                     */
};

/* A handle for the config at path (NULL: stored_yaml, a value file's stored config, label naming it)
 * with the n keys set, its problem loaded (points: dg_hji_problem_load_points, for a network of more
 * axes than a grid holds) and the config checked for unknown keys (learn: left unread). NULL with e. */
dg_hji_flat *dg_hji_flat_begin(const char *path, const char *stored_yaml, const char *label,
                               const char *const *keys, const char *const *values, int n, int points, dg_err *e);

#endif

/* What the layers above solver (certify's dg_flat_certify, src/certify/flat.c) need of a dg_flat:
 * internal, not installed. */
#ifndef DG_SOLVER_FLAT_INTERNAL_H
#define DG_SOLVER_FLAT_INTERNAL_H

#include "difgames/flat.h"
#include "difgames/run.h"

/* The run behind f. */
dg_run     *dg_flat_run(dg_flat *f);
/* Keeps text (malloc'd, may be NULL) as f's until the next call or dg_flat_free, freeing the one
 * kept before; returns text. */
const char *dg_flat_keep_text(dg_flat *f, char *text);

#endif

/* The config the float copy of the command read for a command of train.precision: f64, kept for
 * the double copy (cli_doc_hand, cli_doc_take; cli/cli.h). Compiled once, outside the command's two
 * copies (CMakeLists.txt), so that both call these same two functions and share the one slot. */
#include <string.h>

#include "cli/cli.h"

static dg_run_doc handed;
static int have_handed;

void cli_doc_hand(dg_run_doc *d) {
    if (have_handed) dg_run_doc_free(&handed);
    handed = *d;
    have_handed = 1;
    memset(d, 0, sizeof *d);
}

int cli_doc_take(dg_run_doc *d) {
    if (!have_handed) return 0;
    *d = handed;
    have_handed = 0;
    memset(&handed, 0, sizeof handed);
    return 1;
}

/* The one JSON line of a command (internal: the command and the viewer build it, the command prints
 * it): an object built with cJSON. Numbers keep the command's own format (dg_json_number); a cJSON
 * allocation that fails anywhere marks the line, and dg_json_line then refuses it rather than give
 * part of it.
 *
 *     dg_json j = {cJSON_CreateObject(), 0};
 *     dg_json_add(&j, j.root, "game", cJSON_CreateString(name));
 *     dg_json_add(&j, j.root, "loss", dg_json_number("%.9g", loss));
 *     char *line = dg_json_line(&j);              // {"game":"reach","loss":0.25}, or NULL
 */
#ifndef DG_IO_JSON_H
#define DG_IO_JSON_H

#include <cjson/cJSON.h>

typedef struct dg_json {
    cJSON *root;   /* the object                                             */
    int    oom;    /* set when an allocation failed: the line is refused     */
} dg_json;

/* fmt applied to v (one double conversion: "%.9g", "%.3f", "%.0f" for an integer) as the number's
 * text (dg_format_double: a zero never prints as "-0"), null when v is not finite; NULL when out of
 * memory. */
cJSON *dg_json_number(const char *fmt, double v);
/* Adds item to obj under key (to the array obj when key is NULL) and returns it; a NULL obj or item
 * (an allocation that failed) sets j->oom and frees item. */
cJSON *dg_json_add(dg_json *j, cJSON *obj, const char *key, cJSON *item);
/* Adds "game": name and "source": source (dg_env_source's "builtin", "model", ...; NULL: none): a model
 * file may call its game as a built-in is called, and the pair tells them apart. */
void   dg_json_game(dg_json *j, const char *name, const char *source);
/* j's object as one unformatted line (malloc'd by cJSON: cJSON_free it), and the object freed (root
 * NULL); NULL when an allocation failed, here or while it was built. */
char  *dg_json_line(dg_json *j);

#endif

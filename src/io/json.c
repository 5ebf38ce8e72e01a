/* The one JSON line of a command (src/io/json.h). */
#include <math.h>

#include "difgames/base.h"
#include "io/json.h"

cJSON *dg_json_number(const char *fmt, double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    char t[64];
    dg_format_double(t, sizeof t, fmt, v);  /* never "-0" */
    return cJSON_CreateRaw(t);
}

cJSON *dg_json_add(dg_json *j, cJSON *obj, const char *key, cJSON *item) {
    const int ok = obj && item && (key ? cJSON_AddItemToObject(obj, key, item) : cJSON_AddItemToArray(obj, item));
    if (ok) return item;
    cJSON_Delete(item);
    j->oom = 1;
    return NULL;
}

void dg_json_game(dg_json *j, const char *name, const char *source) {
    dg_json_add(j, j->root, "game", cJSON_CreateString(name));
    if (source) dg_json_add(j, j->root, "source", cJSON_CreateString(source));
}

char *dg_json_line(dg_json *j) {
    char *text = j->root && !j->oom ? cJSON_PrintUnformatted(j->root) : NULL;
    cJSON_Delete(j->root);
    j->root = NULL;
    return text;
}

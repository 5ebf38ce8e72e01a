/* Games from shared objects (plugins): dlopen with an explicit path, the exported descriptor, its ABI. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "difgames/env.h"
#include "difgames/fileio.h"

dg_status dg_game_plugin_open(const char *path, const dg_game **g, void **handle, dg_err *e) {
    *g = NULL;
    *handle = NULL;
    if (!path || !path[0]) return dg_err_set(e, DG_ERR_ARG, "plugin: no file given");
    if (!strchr(path, '/'))  /* dlopen would search the system's folders for a bare name */
        return dg_err_set(e, DG_ERR_ARG, "plugin '%s': give the file's path (./%s or an absolute path); a "
                          "plugin is code and is never searched for", path, path);
    FILE *f;
    dg_status st = dg_file_open_read(path, &f, NULL, e);  /* a FIFO or a device is refused, never waited on */
    if (st != DG_OK) return st;
    unsigned char magic[4] = {0};
    const size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (got != sizeof magic || memcmp(magic, "\177ELF", 4) != 0)
        return dg_err_set(e, DG_ERR_FORMAT, "plugin %s: not a shared object (no ELF header); build it with "
                          "cc -shared -fPIC", path);
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return dg_err_set(e, DG_ERR_IO, "plugin %s: cannot load it: %s", path, why ? why : "dlopen failed");
    }
    dlerror();
    const dg_game *game = dlsym(h, DG_GAME_SYMBOL);
    if (!game) {
        dlclose(h);
        return dg_err_set(e, DG_ERR_FORMAT, "plugin %s: exports no game (the symbol '%s', a const dg_game, is "
                          "missing)", path, DG_GAME_SYMBOL);
    }
    if (game->abi != DG_GAME_ABI) {
        const unsigned abi = game->abi;
        dlclose(h);
        if ((abi ^ DG_GAME_ABI) == DG_GAME_ABI_F64)  /* the right layout, the other tape */
            return dg_err_set(e, DG_ERR_FORMAT, "plugin %s: built for the %s tape, this run's is %s (train.precision: "
                              "a plugin for f64 is compiled with -DDG_F64)", path, abi & DG_GAME_ABI_F64 ? "f64" : "f32",
                              DG_REAL_NAME);
        return dg_err_set(e, DG_ERR_FORMAT, "plugin %s: built for the game ABI %u, this difgames has ABI %u "
                          "(rebuild it against these headers, with .abi = DG_GAME_ABI)", path, abi, DG_GAME_ABI);
    }
    if (!game->name || !game->name[0]) {
        dlclose(h);
        return dg_err_set(e, DG_ERR_FORMAT, "plugin %s: its game has no name", path);
    }
    *g = game;
    *handle = h;
    return DG_OK;
}

void dg_game_plugin_close(void *handle) {
    if (handle) dlclose(handle);
}

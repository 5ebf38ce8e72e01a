/* Atomic whole-file writes (temporary file + fsync + rename) and whole-file reads. */
#define _POSIX_C_SOURCE 200809L
#include "difgames/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

dg_status dg_file_begin(dg_file *f, const char *path, dg_err *e) {
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path)
        return dg_err_set(e, DG_ERR_ARG, "%s: path too long", path);
    strcpy(f->path, path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp, "wb");
    if (!f->fp)
        return dg_err_set(e, DG_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return DG_OK;
}

dg_status dg_file_commit(dg_file *f, dg_err *e) {
    if (!f->fp) return dg_err_set(e, DG_ERR_ARG, "%s: file not open", f->path);
    int bad = ferror(f->fp) || fflush(f->fp) != 0;
    int err = errno;
    if (!bad && fsync(fileno(f->fp)) != 0 && errno != EINVAL) { bad = 1; err = errno; }
    if (fclose(f->fp) != 0 && !bad) { bad = 1; err = errno; }
    f->fp = NULL;
    if (bad) {
        remove(f->tmp);
        return dg_err_set(e, DG_ERR_IO, "%s: write failed: %s", f->path, strerror(err));
    }
    if (rename(f->tmp, f->path) != 0) {
        err = errno;
        remove(f->tmp);
        return dg_err_set(e, DG_ERR_IO, "%s: cannot rename into place: %s", f->path, strerror(err));
    }
    return DG_OK;
}

void dg_file_abort(dg_file *f) {
    if (f->fp) { fclose(f->fp); f->fp = NULL; }
    if (f->tmp[0]) remove(f->tmp);
}

dg_status dg_file_read_all(const char *path, unsigned char **out, size_t *len, dg_err *e) {
    *out = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return dg_err_set(e, DG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    dg_status st = DG_OK;
    unsigned char *buf = NULL;
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = dg_err_set(e, DG_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    buf = malloc(n + 1);
    if (!buf) { st = dg_err_set(e, DG_ERR_NOMEM, "%s: file too large to load (%zu bytes)", path, n); goto done; }
    if (n && fread(buf, 1, n, fp) != n) {
        st = dg_err_set(e, DG_ERR_IO, "%s: read failed", path);
        goto done;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    buf = NULL;
done:
    free(buf);
    fclose(fp);
    return st;
}

dg_status dg_mkdirs(const char *path, dg_err *e) {
    char tmp[1024];
    if (strlen(path) >= sizeof tmp) return dg_err_set(e, DG_ERR_ARG, "%s: path too long", path);
    strcpy(tmp, path);
    for (char *p = tmp + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return dg_err_set(e, DG_ERR_IO, "%s: cannot create folder: %s", tmp, strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return dg_err_set(e, DG_ERR_IO, "%s: not a folder", path);
    return DG_OK;
}

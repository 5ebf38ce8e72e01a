/* Atomic whole-file writes (temporary file + fsync + rename), whole-file reads
 * of regular files only, path joining and comparison, run-folder locks. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE  /* flock */
#include "difgames/fileio.h"
#include "difgames/memory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* ------------------------------------------------------- internal helpers */

/* What a file that is not a regular one is, for the error message. */
static const char *kind_of(mode_t m) {
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Length of path's last component. */
static size_t last_len(const char *path) {
    const char *s = strrchr(path, '/');
    return strlen(s ? s + 1 : path);
}

/* out = path made absolute, with ".", ".." and repeated '/' resolved
 * lexically, and its longest existing leading folder replaced by its real
 * path. Returns 0 when it does not fit. */
static int normalise(const char *path, char *out, size_t size) {
    char buf[2 * DG_PATH_MAX];
    if (path[0] == '/') {
        if (strlen(path) >= sizeof buf) return 0;
        strcpy(buf, path);
    } else {
        char cwd[DG_PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return 0;
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf) return 0;
    }
    /* lexical pass, in place: components pushed onto out */
    size_t n = 0;
    out[0] = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (!strcmp(tok, ".")) continue;
        if (!strcmp(tok, "..")) {
            while (n > 0 && out[n - 1] != '/') n--;
            if (n > 0) n--;
            out[n] = 0;
            continue;
        }
        const size_t k = strlen(tok);
        if (n + 1 + k + 1 > size) return 0;
        out[n++] = '/';
        memcpy(out + n, tok, k);
        n += k;
        out[n] = 0;
    }
    if (n == 0) {
        if (size < 2) return 0;
        strcpy(out, "/");
        return 1;
    }
    /* the real path of the longest prefix that exists (symbolic links resolved) */
    for (size_t cut = n; cut > 0;) {
        char head[DG_PATH_MAX], real[PATH_MAX];
        if (cut >= sizeof head) return 1;
        memcpy(head, out, cut);
        head[cut] = 0;
        if (realpath(head, real)) {
            char rest[2 * DG_PATH_MAX];
            snprintf(rest, sizeof rest, "%s", out + cut);
            if ((size_t)snprintf(out, size, "%s%s", strcmp(real, "/") ? real : "", rest) >= size) return 0;
            return 1;
        }
        while (cut > 0 && out[cut - 1] != '/') cut--;
        if (cut > 0) cut--;
    }
    return 1;
}

/* --------------------------------------------------------------- public */

dg_status dg_file_name_ok(const char *path, dg_err *e) {
    if (!path || !*path) return dg_err_set(e, DG_ERR_ARG, "an empty file name");
    char pid[24];
    const int np = snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
    if (strlen(path) + (size_t)np >= DG_PATH_MAX)
        return dg_err_set(e, DG_ERR_ARG, "%.200s...: path too long (%zu characters; at most %d)", path,
                          strlen(path), DG_PATH_MAX - 1 - np);
    if (last_len(path) + (size_t)np > NAME_MAX)
        return dg_err_set(e, DG_ERR_ARG, "%.200s...: file name too long (%zu characters; at most %d)", path,
                          last_len(path), NAME_MAX - np);
    for (const char *c = path; *c;) {  /* and every folder on the way */
        const size_t k = strcspn(c, "/");
        if (k > NAME_MAX)
            return dg_err_set(e, DG_ERR_ARG, "%.200s...: folder name too long (%zu characters; at most %d)", c, k,
                              NAME_MAX);
        c += k + (c[k] == '/');
    }
    return DG_OK;
}

dg_status dg_file_begin(dg_file *f, const char *path, dg_err *e) {
    memset(f, 0, sizeof *f);
    const dg_status ns = dg_file_name_ok(path, e);
    if (ns != DG_OK) return ns;
    char pid[24];
    snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return dg_err_set(e, DG_ERR_IO, "%s: cannot write: it is %s, not a regular file", path, kind_of(sb.st_mode));
    strcpy(f->path, path);
    snprintf(f->tmp, sizeof f->tmp, "%s%s", path, pid);
    /* The temporary is made new, never opened through what is there: a link planted at its name
     * (symbolic or hard) is removed (the name only, not what it points to), then O_EXCL | O_NOFOLLOW
     * refuse anything that appears there meanwhile. The name is this process's: nothing else writes it. */
    if (unlink(f->tmp) != 0 && errno != ENOENT) {
        const int err = errno;
        f->tmp[0] = 0;
        return dg_err_set(e, DG_ERR_IO, "%s: cannot write: its temporary name is taken: %s", path, strerror(err));
    }
    const int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int err = errno;
        f->tmp[0] = 0;  /* not ours: dg_file_abort must not remove it */
        return dg_err_set(e, DG_ERR_IO, "%s: cannot write: %s", path, strerror(err));
    }
    if (!(f->fp = fdopen(fd, "wb"))) {
        const int err = errno;
        close(fd);
        remove(f->tmp);
        f->tmp[0] = 0;
        return dg_err_set(e, DG_ERR_IO, "%s: cannot write: %s", path, strerror(err));
    }
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

dg_status dg_file_open_read(const char *path, FILE **fp, size_t *size, dg_err *e) {
    *fp = NULL;
    if (!path || !*path) return dg_err_set(e, DG_ERR_ARG, "an empty file name");
    struct stat sb;
    if (stat(path, &sb) != 0) return dg_err_set(e, DG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))  /* refused before it is even opened */
        return dg_err_set(e, DG_ERR_IO, "%s: not a regular file (it is %s)", path, kind_of(sb.st_mode));
    /* O_NONBLOCK: a FIFO swapped in since the stat cannot block the open */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return dg_err_set(e, DG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int flags;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return dg_err_set(e, DG_ERR_IO, "%s: not a regular file", path);
    }
    if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
        !(*fp = fdopen(fd, "rb"))) {
        const int err = errno;
        close(fd);
        return dg_err_set(e, DG_ERR_IO, "%s: cannot open: %s", path, strerror(err));
    }
    if (size) *size = (size_t)sb.st_size;
    return DG_OK;
}

dg_status dg_file_read_all(const char *path, unsigned char **out, size_t *len, dg_err *e) {
    return dg_file_read_max(path, SIZE_MAX, out, len, e);
}

dg_status dg_file_read_max(const char *path, size_t max, unsigned char **out, size_t *len, dg_err *e) {
    *out = NULL;
    *len = 0;
    FILE *fp;
    size_t n = 0;
    dg_status st = dg_file_open_read(path, &fp, &n, e);
    if (st != DG_OK) return st;
    unsigned char *buf = NULL;
    dg_err me = {0};
    if (n > max) {  /* refused from its size alone: nothing is read */
        st = dg_err_set(e, DG_ERR_ARG, "%s: a file of %.4g MiB, more than the %.4g MiB it may have", path,
                        (double)n / 1048576.0, (double)max / 1048576.0);
        goto done;
    }
    if (n == SIZE_MAX || dg_mem_check((double)n + 1, &me) != DG_OK) {
        st = dg_err_set(e, DG_ERR_ARG, "%s: too large to load (%zu bytes): %s", path, n, me.msg);
        goto done;
    }
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
    char tmp[DG_PATH_MAX];
    if (!path || !*path) return dg_err_set(e, DG_ERR_ARG, "an empty folder name");
    if (strlen(path) >= sizeof tmp)
        return dg_err_set(e, DG_ERR_ARG, "%.200s...: path too long (%zu characters; at most %d)", path,
                          strlen(path), DG_PATH_MAX - 1);
    for (const char *c = path; *c;) {  /* every name checked before anything is made */
        const size_t k = strcspn(c, "/");
        if (k > NAME_MAX)
            return dg_err_set(e, DG_ERR_ARG, "%.200s...: folder name too long (%zu characters; at most %d)", c, k,
                              NAME_MAX);
        c += k + (c[k] == '/');
    }
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

dg_status dg_file_parent_make(const char *path, dg_err *e) {
    if (dg_file_name_ok(path, e) != DG_OK) return DG_ERR_ARG;  /* the name dg_file_begin will need */
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return DG_OK;  /* the working directory, or / */
    char dir[DG_PATH_MAX];
    memcpy(dir, path, (size_t)(slash - path));  /* fits: dg_file_name_ok bounds path by DG_PATH_MAX */
    dir[slash - path] = 0;
    if (dg_mkdirs(dir, e) != DG_OK) return e ? e->status : DG_ERR_IO;
    if (access(dir, W_OK) != 0) return dg_err_set(e, DG_ERR_IO, "%s: folder not writable", dir);
    return DG_OK;
}

dg_status dg_path_join(char *out, size_t size, const char *dir, const char *name, dg_err *e) {
    const int n = dir && *dir ? snprintf(out, size, "%s/%s", dir, name) : snprintf(out, size, "%s", name);
    if (n < 0 || (size_t)n >= size) {
        if (size) out[0] = 0;
        if (dir && *dir)
            return dg_err_set(e, DG_ERR_ARG, "%.200s.../%.100s: path too long (%d characters; at most %zu)", dir,
                              name, n, size ? size - 1 : 0);
        return dg_err_set(e, DG_ERR_ARG, "%.200s...: path too long (%d characters; at most %zu)", name, n,
                          size ? size - 1 : 0);
    }
    if (last_len(out) > NAME_MAX) {
        const size_t k = last_len(out);
        out[0] = 0;
        return dg_err_set(e, DG_ERR_ARG, "%.100s...: file name too long (%zu characters; at most %d)", name, k,
                          NAME_MAX);
    }
    return DG_OK;
}

int dg_path_same(const char *a, const char *b) {
    if (!a || !b) return 0;
    struct stat sa, sb;
    const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *na = malloc(DG_PATH_MAX), *nb = malloc(DG_PATH_MAX);
    int same = !strcmp(a, b);
    if (na && nb && normalise(a, na, DG_PATH_MAX) && normalise(b, nb, DG_PATH_MAX)) same = !strcmp(na, nb);
    free(na);
    free(nb);
    return same;
}

/* The lock's tries: each fails only when a holder removed .lock between this open and flock (and
 * another made a new one); a hundred in a row is a folder something keeps rewriting. */
#define LOCK_TRIES 100

int dg_dir_lock(const char *dir, dg_err *e) {
    char path[DG_PATH_MAX];
    if (dg_mkdirs(dir, e) != DG_OK || dg_path_join(path, sizeof path, dir, ".lock", e) != DG_OK) return -1;
    for (int tries = 0; tries < LOCK_TRIES; tries++) {
        /* O_NOFOLLOW: a symbolic link planted at .lock is refused, never followed to a file that
         * the truncation below would empty */
        const int fd = open(path, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0) {
            if (errno == ELOOP)
                dg_err_set(e, DG_ERR_IO, "%s: its lock file .lock is a symbolic link; remove it", dir);
            else
                dg_err_set(e, DG_ERR_IO, "%s: cannot create its lock file .lock: %s", dir, strerror(errno));
            return -1;
        }
        struct stat sb, now;
        if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            close(fd);
            dg_err_set(e, DG_ERR_IO, "%s: its lock file .lock is not a regular file", dir);
            return -1;
        }
        if (sb.st_nlink != 1) {  /* a hard link to another file: truncating it would empty that file */
            close(fd);
            dg_err_set(e, DG_ERR_IO, "%s: its lock file .lock has %lu names (a hard link to another file); remove "
                       "it", dir, (unsigned long)sb.st_nlink);
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            char pid[32] = "";
            const ssize_t k = pread(fd, pid, sizeof pid - 1, 0);
            pid[k > 0 ? k : 0] = 0;
            pid[strcspn(pid, "\n")] = 0;
            close(fd);
            if (err == EWOULDBLOCK)
                dg_err_set(e, DG_ERR_IO, "%s: another run is writing into this folder%s%s%s; wait for it to end or "
                           "choose another output folder", dir, pid[0] ? " (process " : "", pid, pid[0] ? ")" : "");
            else
                dg_err_set(e, DG_ERR_IO, "%s: cannot lock the folder: %s", dir, strerror(err));
            return -1;
        }
        /* held, but the folder's only while .lock still names this file: a run that ended removed it
         * (dg_dir_unlock) after this open and before this flock, and may have a successor: again */
        if (lstat(path, &now) != 0 || now.st_dev != sb.st_dev || now.st_ino != sb.st_ino) {
            close(fd);
            continue;
        }
        char pid[32];
        const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid is only informative */ }
        return fd;
    }
    dg_err_set(e, DG_ERR_IO, "%s: its lock file .lock was replaced %d times while being locked; is something "
               "else writing into this folder?", dir, LOCK_TRIES);
    return -1;
}

void dg_dir_unlock(const char *dir, int lock) {
    if (lock < 0) return;
    char path[DG_PATH_MAX];
    struct stat held, now;
    /* removed while still held, so that no other run can take the lock on a file no longer in the
     * folder (dg_dir_lock checks the name after its flock); and only when .lock is still the file
     * held, not one put in its place */
    if (dir && dg_path_join(path, sizeof path, dir, ".lock", NULL) == DG_OK && fstat(lock, &held) == 0 &&
        lstat(path, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino)
        unlink(path);
    close(lock);
}

/* The pid of a temporary file's name "<name>.tmp.<pid>" (dg_file_begin's), 0 for another name. */
static pid_t tmp_pid(const char *name) {
    const char *t = strstr(name, ".tmp.");
    for (const char *n; t && (n = strstr(t + 1, ".tmp.")); t = n) {}  /* the last one */
    if (!t || t == name || !t[5] || strspn(t + 5, "0123456789") != strlen(t + 5) || strlen(t + 5) > 9) return 0;
    return (pid_t)atol(t + 5);
}

int dg_dir_clean(const char *dir, dg_err *e) {
    DIR *d = opendir(dir);
    if (!d) {
        dg_err_set(e, DG_ERR_IO, "%s: cannot list the folder: %s", dir, strerror(errno));
        return -1;
    }
    int removed = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const pid_t pid = tmp_pid(de->d_name);
        if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;  /* EPERM: alive, another user's */
        struct stat sb;  /* a file or a link, never a folder: unlinkat removes the name, not what it points to */
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(sb.st_mode)) continue;
        if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT) {
            dg_err_set(e, DG_ERR_IO, "%s/%s: cannot remove the temporary file of process %ld (gone): %s", dir,
                       de->d_name, (long)pid, strerror(errno));
            closedir(d);
            return -1;
        }
        removed++;
    }
    closedir(d);
    return removed;
}

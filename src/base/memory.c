/* Memory limits of this process and checked counts. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/internal.h"
#include "difgames/memory.h"

/* ------------------------------------------------------------ helpers */

/* The first number in a small text file, or -1 (missing, unreadable, "max"). */
static double read_number(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char buf[64] = {0};
    const size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    char *end;
    const double v = strtod(buf, &end);
    return end == buf || v < 0 ? -1 : v;
}

/* Bytes mapped by this process now (VmSize), 0 if unknown. */
static double mapped_now(void) {
    FILE *fp = fopen("/proc/self/statm", "r");
    if (!fp) return 0;
    unsigned long pages = 0;
    const int ok = fscanf(fp, "%lu", &pages) == 1;
    fclose(fp);
    return ok ? (double)pages * (double)sysconf(_SC_PAGESIZE) : 0;
}

/* The value of key in a memory.stat file ("key value" lines), or -1 (missing, unreadable). */
static double read_stat(const char *path, const char *key) {
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char line[256];
    double v = -1;
    const size_t k = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, k) && line[k] == ' ') {
            char *end;
            v = strtod(line + k + 1, &end);
            if (end == line + k + 1 || v < 0) v = -1;
            break;
        }
    fclose(fp);
    return v;
}

/* Room left under the limit of the cgroup folder dir: memory.max (v1: memory.limit_in_bytes)
 * less the working set, i.e. the use less the inactive page cache (memory.stat inactive_file; v1:
 * total_inactive_file), which the kernel reclaims before it kills. -1 if the folder sets no limit
 * or cannot be read. */
static double level_left(const char *dir, int v1) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
    const double max = read_number(path);
    if (max < 0 || max >= 9e18) return -1;  /* "max", v1's "no limit", or not there */
    snprintf(path, sizeof path, "%s/%s", dir, v1 ? "memory.usage_in_bytes" : "memory.current");
    double used = read_number(path);
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    const double cache = read_stat(path, v1 ? "total_inactive_file" : "inactive_file");
    if (used < 0) used = 0;
    if (cache > 0) used = used > cache ? used - cache : 0;
    return max > used ? max - used : 0;
}

/* ------------------------------------------------------------ internal */

double dg_mem_cgroup_left(const char *proc_cgroup, const char *v2_root, const char *v1_root) {
    char line[512], dir[600];
    FILE *fp = fopen(proc_cgroup, "r");
    double left = -1;
    if (!fp) return -1;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        const char *rel = NULL, *root = NULL;
        int v1 = 0;
        if (!strncmp(line, "0::", 3)) {
            rel = line + 3, root = v2_root;
        } else if (strstr(line, ":memory:")) {
            rel = strstr(line, ":memory:") + 8, root = v1_root, v1 = 1;
        }
        if (!rel) continue;
        if (!strcmp(rel, "/")) rel = "";
        const size_t rootlen = strlen(root);
        if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, rel) >= sizeof dir) continue;
        if (access(dir, F_OK) != 0)
            snprintf(dir, sizeof dir, "%s", root);  /* a cgroup namespace: its own cgroup is the root */
        for (;;) {  /* this cgroup, then each parent: the tightest bound wins */
            const double l = level_left(dir, v1);
            if (l >= 0 && (left < 0 || l < left)) left = l;
            char *slash = strrchr(dir, '/');
            if (strlen(dir) <= rootlen || !slash || (size_t)(slash - dir) < rootlen) break;
            *slash = 0;
        }
    }
    fclose(fp);
    return left;
}

/* ------------------------------------------------------------ public */

int dg_mul_ok(int64_t a, int64_t b, int64_t max, int64_t *out) {
    if (a < 0 || b < 0 || max < 0) return 0;
    if (a && b > max / a) return 0;
    if (out) *out = a * b;
    return 1;
}

double dg_mem_limit(const char **source) {
    const double page = (double)sysconf(_SC_PAGESIZE);
    double best = (double)sysconf(_SC_PHYS_PAGES) * page;
    const char *src = "physical memory";
    if (!(best > 0)) best = 1e18;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const double left = (double)rl.rlim_cur - mapped_now();
        if (left < best) best = left, src = "ulimit -v";
    }
    const double cg = dg_mem_cgroup_left("/proc/self/cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup/memory");
    if (cg >= 0 && cg < best) best = cg, src = "cgroup memory.max";
    if (best < page) best = page;
    if (source) *source = src;
    return best;
}

dg_status dg_mem_check(double need, dg_err *e) {
    const char *src;
    const double have = dg_mem_limit(&src);
    if (need <= have) return DG_OK;
    return dg_err_set(e, DG_ERR_NOMEM, "needs about %.2f GiB, more than the %.2f GiB this process may use (%s)",
                      need / 1073741824.0, have / 1073741824.0, src);
}

dg_status dg_mem_require(double need, const char *what, const char *lower, dg_err *e) {
    dg_err m = {0};
    if (dg_mem_check(need, &m) == DG_OK) return DG_OK;
    return dg_err_set(e, m.status ? m.status : DG_ERR_NOMEM, "%s %s; lower %s", what, m.msg, lower);
}

/* Free bytes of the file system of dir; -1 if unknown or a pseudo file system (no blocks: /proc). */
static double fs_free(const char *dir, int *found) {
    struct statvfs sv;
    *found = statvfs(dir, &sv) == 0;
    if (!*found || sv.f_blocks == 0) return -1;
    return (double)sv.f_bavail * (double)sv.f_frsize;
}

double dg_disk_free(const char *path) {
    char dir[4096];
    if (!path || !*path || strlen(path) >= sizeof dir) return -1;
    snprintf(dir, sizeof dir, "%s", path);
    for (;;) {
        int found;
        const double f = fs_free(dir, &found);
        if (found) return f;
        char *slash = strrchr(dir, '/');
        if (!slash) return fs_free(".", &found);
        if (slash == dir) return fs_free("/", &found);
        *slash = 0;
    }
}

/* Internal to the base layer: what its tests reach that the public headers do not declare. */
#ifndef DG_BASE_INTERNAL_H
#define DG_BASE_INTERNAL_H

/* The cgroup memory limits (v2 memory.max, v1 memory.limit_in_bytes) less their working sets
 * (use less inactive page cache, memory.stat inactive_file / total_inactive_file), the least over
 * the cgroup that proc_cgroup (a /proc/self/cgroup file) names and each of its parents, under the
 * mounts v2_root and v1_root; -1 if none sets a limit. Missing files are skipped. (dg_mem_limit
 * passes the real ones; tests pass a fake tree.) */
double dg_mem_cgroup_left(const char *proc_cgroup, const char *v2_root, const char *v1_root);

#endif

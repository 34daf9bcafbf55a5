/* terret-launcher-cgroup.h: a unit's own cgroup, for the limits rlimits cannot hold
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* The directories of a unit's cgroup, one per controller in use (empty
 * when that controller is not). With cgroup v2 both are one directory. */
typedef struct
{
  char memory[PATH_MAX];
  char pids[PATH_MAX];
  int v2;
} UnitCgroup;

/* Makes the cgroup of unit @unit under the unit's own, with @memory bytes
 * and @pids processes at most (0: that limit is not asked for). A
 * controller that cannot be had (not mounted, not delegated, not ours to
 * write) is left out: the caller falls back to an rlimit. */
void     cgroup_setup  (UnitCgroup *cgroup,
                        pid_t       unit,
                        uint64_t    memory,
                        uint64_t    pids);
/* In the process, before exec: joins the cgroup. Returns 0, or errno. */
int      cgroup_join   (const UnitCgroup *cgroup);
/* TERRET_WIRE_LIMIT_* bits for what the cgroup refused so far: an OOM
 * kill, a fork past pids.max. */
uint32_t cgroup_hits   (const UnitCgroup *cgroup);
/* Removes the cgroup; everything in it must be gone. */
void     cgroup_remove (UnitCgroup *cgroup);

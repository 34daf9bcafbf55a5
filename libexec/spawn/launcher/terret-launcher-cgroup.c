/* terret-launcher-cgroup.c: a unit's own cgroup, for the limits rlimits cannot hold
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A memory limit as an rlimit caps address space, which breaks programs
 * that reserve much and use little, and ends nothing: an allocation
 * fails. A process limit as an rlimit counts the user's processes, all of
 * them, and does not hold for root. A cgroup holds both for what the unit
 * contains alone, and says when it refused (an OOM kill, a fork past the
 * limit). So where the unit may make one — cgroup v2 with the memory and
 * pids controllers enabled below its own cgroup (a delegated subtree), or
 * the v1 memory and pids hierarchies as root — each unit with a limit
 * gets one, under the cgroup it runs in, removed when it leaves.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terret-launcher-cgroup.h"
#include "terret-launcher-wire.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int
write_file (const char *dir,
            const char *name,
            const char *value)
{
  char path[PATH_MAX + 64];
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  n = write (fd, value, strlen (value));
  close (fd);
  return n == (ssize_t)strlen (value) ? 0 : (n < 0 ? errno : EIO);
}

/* The number after @key in the flat-keyed file @dir/@name, or 0. */
static uint64_t
read_key (const char *dir,
          const char *name,
          const char *key)
{
  char path[PATH_MAX + 64], line[256];
  uint64_t value = 0;
  size_t len = strlen (key);
  FILE *f;

  if (dir[0] == '\0')
    return 0;
  snprintf (path, sizeof path, "%s/%s", dir, name);
  f = fopen (path, "re");
  if (f == NULL)
    return 0;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, key, len) == 0 && line[len] == ' ')
      value = strtoull (line + len + 1, NULL, 10);
  fclose (f);
  return value;
}

/* Whether @dir/cgroup.subtree_control (v2) names @controller. */
static int
subtree_has (const char *dir,
             const char *controller)
{
  char path[PATH_MAX + 64], word[64];
  int found = 0;
  FILE *f;

  snprintf (path, sizeof path, "%s/cgroup.subtree_control", dir);
  f = fopen (path, "re");
  if (f == NULL)
    return 0;
  while (!found && fscanf (f, "%63s", word) == 1)
    found = strcmp (word, controller) == 0;
  fclose (f);
  return found;
}

/* The unit's cgroup directory for @controller (a v1 hierarchy's name, or
 * "" for v2) from /proc/self/cgroup, into @out. */
static int
own_cgroup (const char *controller,
            char       *out,
            size_t      size)
{
  char line[PATH_MAX + 128];
  int found = 0;
  FILE *f = fopen ("/proc/self/cgroup", "re");

  if (f == NULL)
    return 0;
  while (!found && fgets (line, sizeof line, f) != NULL)
    {
      char *controllers = strchr (line, ':');
      char *path = controllers != NULL ? strchr (controllers + 1, ':') : NULL;
      struct stat st;

      if (path == NULL)
        continue;
      *path++ = '\0';
      controllers++;
      path[strcspn (path, "\n")] = '\0';

      if (controller[0] == '\0')
        {
          /* v2: the unified hierarchy, mounted at the root or beside v1. */
          if (controllers[0] != '\0')
            continue;
          snprintf (out, size, "%s%s", CGROUP_ROOT, strcmp (path, "/") == 0 ? "" : path);
          if (stat (CGROUP_ROOT "/cgroup.controllers", &st) < 0)
            snprintf (out, size, "%s/unified%s", CGROUP_ROOT, strcmp (path, "/") == 0 ? "" : path);
          found = 1;
        }
      else
        {
          char *name, *rest = controllers;

          while (!found && (name = strsep (&rest, ",")) != NULL)
            if (strcmp (name, controller) == 0)
              {
                snprintf (out, size, "%s/%s%s", CGROUP_ROOT, controller,
                          strcmp (path, "/") == 0 ? "" : path);
                found = 1;
              }
        }
    }
  fclose (f);
  return found;
}

/* Makes @parent/terret-@unit into @out; 0 when it cannot. */
static int
make_child (const char *parent,
            pid_t       unit,
            char       *out,
            size_t      size)
{
  if ((size_t)snprintf (out, size, "%s/terret-%d", parent, (int)unit) >= size ||
      (mkdir (out, 0755) < 0 && errno != EEXIST))
    {
      out[0] = '\0';
      return 0;
    }
  return 1;
}

void
cgroup_setup (UnitCgroup *cgroup,
              pid_t       unit,
              uint64_t    memory,
              uint64_t    pids)
{
  char parent[PATH_MAX], value[32];

  memset (cgroup, 0, sizeof *cgroup);
  if (memory == 0 && pids == 0)
    return;

  /* v2, where the subtree below the unit's cgroup has the controllers. */
  if (own_cgroup ("", parent, sizeof parent) &&
      (memory == 0 || subtree_has (parent, "memory")) &&
      (pids == 0 || subtree_has (parent, "pids")) &&
      make_child (parent, unit, cgroup->memory, sizeof cgroup->memory))
    {
      cgroup->v2 = 1;
      memcpy (cgroup->pids, cgroup->memory, sizeof cgroup->pids);
      snprintf (value, sizeof value, "%llu", (unsigned long long)memory);
      if (memory != 0 && (write_file (cgroup->memory, "memory.max", value) != 0 ||
                          write_file (cgroup->memory, "memory.swap.max", "0") != 0))
        {
          /* memory.swap.max is missing without swap accounting: the
           * memory limit still holds for what is resident. */
        }
      snprintf (value, sizeof value, "%llu", (unsigned long long)pids);
      if (pids != 0)
        write_file (cgroup->pids, "pids.max", value);
      if (memory == 0)
        cgroup->memory[0] = '\0';
      if (pids == 0)
        cgroup->pids[0] = '\0';
      return;
    }

  /* v1: one hierarchy per controller. */
  if (memory != 0 && own_cgroup ("memory", parent, sizeof parent) &&
      make_child (parent, unit, cgroup->memory, sizeof cgroup->memory))
    {
      snprintf (value, sizeof value, "%llu", (unsigned long long)memory);
      if (write_file (cgroup->memory, "memory.limit_in_bytes", value) != 0)
        {
          rmdir (cgroup->memory);
          cgroup->memory[0] = '\0';
        }
      else
        {
          /* Swap counted too where the kernel accounts it; without, the
           * limit holds for what is resident. */
          write_file (cgroup->memory, "memory.memsw.limit_in_bytes", value);
        }
    }
  if (pids != 0 && own_cgroup ("pids", parent, sizeof parent) &&
      make_child (parent, unit, cgroup->pids, sizeof cgroup->pids))
    {
      snprintf (value, sizeof value, "%llu", (unsigned long long)pids);
      if (write_file (cgroup->pids, "pids.max", value) != 0)
        {
          rmdir (cgroup->pids);
          cgroup->pids[0] = '\0';
        }
    }
}

int
cgroup_join (const UnitCgroup *cgroup)
{
  int error = 0;

  if (cgroup->memory[0] != '\0')
    error = write_file (cgroup->memory, "cgroup.procs", "0");
  if (error == 0 && cgroup->pids[0] != '\0' && strcmp (cgroup->pids, cgroup->memory) != 0)
    error = write_file (cgroup->pids, "cgroup.procs", "0");
  return error;
}

uint32_t
cgroup_hits (const UnitCgroup *cgroup)
{
  uint32_t hits = 0;

  if (read_key (cgroup->memory, cgroup->v2 ? "memory.events" : "memory.oom_control", "oom_kill") > 0)
    hits |= TERRET_WIRE_LIMIT_MEMORY;
  if (read_key (cgroup->pids, "pids.events", "max") > 0)
    hits |= TERRET_WIRE_LIMIT_PROCESSES;
  return hits;
}

void
cgroup_remove (UnitCgroup *cgroup)
{
  if (cgroup->memory[0] != '\0')
    rmdir (cgroup->memory);
  if (cgroup->pids[0] != '\0' && strcmp (cgroup->pids, cgroup->memory) != 0)
    rmdir (cgroup->pids);
  memset (cgroup, 0, sizeof *cgroup);
}

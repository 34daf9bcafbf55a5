/* terret-launcher-plan.c: a spawn request's records, parsed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same records come over the local wire (in a memfd) and, for a far
 * launcher, in a frame (terret-launcher-far.h).
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terret-launcher-unit.h"

int
launcher_parse_plan (char   *data,
                     size_t  size,
                     size_t  n_child_fds,
                     Plan   *plan)
{
  char *p, *end = data + size;
  size_t n_args = 0, n_envs = 0, ia = 0, ie = 0;

  memset (plan, 0, sizeof *plan);
  plan->terminal = -1;

  /* Two passes: count, then point. */
  for (p = data; p < end; )
    {
      const char *key = p;

      p += strlen (p) + 1;
      if (p >= end)
        break;
      if (strcmp (key, TERRET_WIRE_KEY_ARG) == 0)
        n_args++;
      else if (strcmp (key, TERRET_WIRE_KEY_ENV) == 0)
        n_envs++;
      p += strlen (p) + 1;
    }

  plan->argv = calloc (n_args + 1, sizeof (char *));
  plan->envp = calloc (n_envs + 1, sizeof (char *));
  if (plan->argv == NULL || plan->envp == NULL)
    return ENOMEM;

  for (p = data; p < end; )
    {
      const char *key = p;
      char *value;

      p += strlen (p) + 1;
      if (p >= end)
        break;
      value = p;
      p += strlen (p) + 1;

      if (strcmp (key, TERRET_WIRE_KEY_ARG) == 0)
        plan->argv[ia++] = value;
      else if (strcmp (key, TERRET_WIRE_KEY_ENV) == 0)
        plan->envp[ie++] = value;
      else if (strcmp (key, TERRET_WIRE_KEY_CWD) == 0)
        plan->cwd = value;
      else if (strcmp (key, TERRET_WIRE_KEY_FD) == 0)
        {
          int index, target;

          if (plan->n_fds >= TERRET_WIRE_MAX_FDS ||
              sscanf (value, "%d %d", &index, &target) != 2 ||
              index < 0 || (size_t)index >= n_child_fds || target < 0)
            return EINVAL;
          plan->fds[plan->n_fds].index = index;
          plan->fds[plan->n_fds].target = target;
          plan->n_fds++;
        }
      else if (strcmp (key, TERRET_WIRE_KEY_TERMINAL) == 0)
        {
          int index;

          if (sscanf (value, "%d", &index) != 1 || index < 0 || (size_t)index >= n_child_fds)
            return EINVAL;
          plan->terminal = index;
        }
      else if (strcmp (key, TERRET_WIRE_KEY_LIMIT) == 0)
        {
          static const struct { const char *name; size_t offset; } limits[] = {
            { "memory", offsetof (Plan, limit_memory) },
            { "processes", offsetof (Plan, limit_processes) },
            { "cpu", offsetof (Plan, limit_cpu) },
            { "file-size", offsetof (Plan, limit_file_size) },
            { "open-files", offsetof (Plan, limit_open_files) },
          };
          char name[32];
          unsigned long long limit;
          size_t i;

          if (sscanf (value, "%31s %llu", name, &limit) != 2)
            return EINVAL;
          for (i = 0; i < sizeof limits / sizeof limits[0]; i++)
            if (strcmp (name, limits[i].name) == 0)
              {
                *(uint64_t *)((char *)plan + limits[i].offset) = limit;
                break;
              }
          if (i == sizeof limits / sizeof limits[0])
            return EINVAL;
        }
      /* Unknown keys are a newer library's: ignored, not fatal. */
    }

  if (n_args == 0 || plan->argv[0][0] == '\0')
    return EINVAL;

  return 0;
}

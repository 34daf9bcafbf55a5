/* terret-launcher-plan.c: a spawn request, taken off the wire and parsed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A launcher and a bridge take requests off the request socket alike;
 * the records come over the local wire (in a memfd) and, for a far
 * launcher, in a frame (terret-launcher-far.h).
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
      else if (strcmp (key, TERRET_WIRE_KEY_STOP_GRACE) == 0)
        {
          int grace;

          if (sscanf (value, "%d", &grace) != 1 || grace < 0)
            return EINVAL;
          plan->stop_grace_ms = grace;
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

void
launcher_close_fds (int    *fds,
                    size_t  n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

void
launcher_reply (int   sock,
                int   error,
                pid_t unit)
{
  TerretWireReply r = { TERRET_WIRE_MAGIC, error, unit };

  while (send (sock, &r, sizeof r, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

int
launcher_take_request (int     sock,
                       int    *fds,
                       size_t *n_fds)
{
  TerretWireSpawn request;
  char control[CMSG_SPACE (TERRET_WIRE_MAX_FDS * sizeof (int))];
  struct iovec iov = { &request, sizeof request };
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  ssize_t n;

  *n_fds = 0;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;

  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return -1;

  for (cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    {
      if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
        {
          size_t got = (cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int);

          if (got > TERRET_WIRE_MAX_FDS - *n_fds)
            got = TERRET_WIRE_MAX_FDS - *n_fds;
          memcpy (fds + *n_fds, CMSG_DATA (cmsg), got * sizeof (int));
          *n_fds += got;
        }
    }

  if ((size_t)n != sizeof request || request.magic != TERRET_WIRE_MAGIC ||
      (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || *n_fds < TERRET_WIRE_FD_CHILD ||
      request.n_fds != *n_fds)
    {
      launcher_close_fds (fds, *n_fds);
      launcher_reply (sock, EPROTO, 0);
      return 0;
    }
  return 1;
}

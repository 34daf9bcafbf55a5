/* terret-launcher-environ.c: a far side's requests, made whole here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terret-launcher-environ.h"

/* Where a program named without a slash is looked for when neither the
 * request nor this process has a PATH: the usual one of a Linux image. */
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A request's entries add to this process's environment (the container's,
 * as `ENGINE exec -e` would; the host's, as a host command's would). */
char **
launcher_merge_environ (char **extra)
{
  size_t n_base = 0, n_extra = 0, n = 0;
  char **envp;

  while (environ[n_base] != NULL)
    n_base++;
  while (extra[n_extra] != NULL)
    n_extra++;
  envp = calloc (n_base + n_extra + 1, sizeof (char *));
  if (envp == NULL)
    return NULL;
  for (size_t i = 0; i < n_base; i++)
    envp[n++] = environ[i];
  for (size_t i = 0; i < n_extra; i++)
    {
      const char *eq = strchr (extra[i], '=');
      size_t key = eq != NULL ? (size_t)(eq - extra[i]) + 1 : strlen (extra[i]);
      size_t j;

      for (j = 0; j < n; j++)
        if (strncmp (envp[j], extra[i], key) == 0)
          break;
      envp[j] = extra[i];
      if (j == n)
        n++;
    }
  return envp;
}

/* @name looked up in the PATH of @envp, as execvp would; NULL when none
 * is there (errno set). */
char *
launcher_find_program (const char  *name,
              char       **envp)
{
  const char *path = DEFAULT_PATH;
  int error = ENOENT;

  for (size_t i = 0; envp[i] != NULL; i++)
    if (strncmp (envp[i], "PATH=", 5) == 0)
      path = envp[i] + 5;

  while (*path != '\0')
    {
      const char *colon = strchrnul (path, ':');
      size_t len = colon - path;
      char *candidate = malloc (len + strlen (name) + 3);
      struct stat st;

      if (candidate == NULL)
        break;
      /* An empty entry is the working directory, as for execvp. */
      sprintf (candidate, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
      if (stat (candidate, &st) == 0 && S_ISREG (st.st_mode))
        {
          if (access (candidate, X_OK) == 0)
            return candidate;
          error = EACCES;
        }
      free (candidate);
      path = *colon == ':' ? colon + 1 : colon;
    }
  errno = error;
  return NULL;
}

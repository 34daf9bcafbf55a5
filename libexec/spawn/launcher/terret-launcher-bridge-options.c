/* terret-launcher-bridge-options.c: the bridge's command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>

#include "terret-launcher-bridge-options.h"

/* N WORD...: the next N words as an argv of their own, NULL-terminated;
 * the words stay the caller's. */
static char **
take_argv (char ***argv)
{
  char **words;
  long n;

  if ((*argv)[0] == NULL || (n = strtol ((*argv)[0], NULL, 10)) <= 0)
    return NULL;
  words = calloc (n + 1, sizeof (char *));
  if (words == NULL)
    abort ();
  for (long i = 0; i < n; i++)
    {
      if ((*argv)[1 + i] == NULL)
        {
          free (words);
          return NULL;
        }
      words[i] = (*argv)[1 + i];
    }
  *argv += n + 1;
  return words;
}

int
bridge_parse_options (char    **argv,
                      Options  *options)
{
  options->timeout_msec = 30 * 1000;
  while (*argv != NULL)
    {
      const char *option = *argv++;

      if (strcmp (option, "--timeout") == 0 && *argv != NULL)
        options->timeout_msec = (int)(strtod (*argv++, NULL) * 1000);
      else if (strcmp (option, "--install") == 0 && (options->install = take_argv (&argv)) != NULL)
        ;
      else if (strcmp (option, "--probe") == 0 && (options->probe = take_argv (&argv)) != NULL)
        ;
      else if (strcmp (option, "--far") == 0 && (options->far = take_argv (&argv)) != NULL)
        ;
      else
        return -1;
    }
  return options->far != NULL && options->timeout_msec > 0 ? 0 : -1;
}

/* terret-launcher-bridge-options.h: the bridge's command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   --bridge [--timeout SECONDS] [--install N ARG...] [--probe N ARG...]
 *            --far N ARG...
 */

#pragma once

typedef struct
{
  char **install;               /* (nullable) */
  char **probe;                 /* (nullable) */
  char **far;
  int timeout_msec;
} Options;

/* Returns 0, or -1 for a command line the bridge cannot serve. */
int bridge_parse_options (char    **argv,
                          Options  *options);

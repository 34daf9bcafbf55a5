/* terret-launcher-program-private.h: where the launcher program is
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "config.h"

G_BEGIN_DECLS

/* The environment variable naming the launcher program, for uninstalled
 * trees (meson devenv and the tests set it); unset, the installed one. */
#define TERRET_LAUNCHER_ENV "TERRET_LAUNCHER"

/* Read each time: a test or devenv may set it after the library loads.
 * Both the link (which starts it) and the far side (whose static variant
 * is installed beside it) ask. */
static inline const char *
_terret_launcher_program (void)
{
  const char *program = g_getenv (TERRET_LAUNCHER_ENV);

  return program != NULL && *program != '\0' ? program : TERRET_LAUNCHER_PATH;
}

G_END_DECLS

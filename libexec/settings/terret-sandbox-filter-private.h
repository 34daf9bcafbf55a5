/* terret-sandbox-filter-private.h: the system calls a sandboxed command is refused
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a sandbox's seccomp filter refuses. */
typedef enum
{
  /* What namespaces and --cap-drop leave open (a filesystem sandbox). */
  TERRET_SANDBOX_FILTER_ESCAPES    = 1 << 0,
  /* Socket families a network namespace does not bound (network=off). */
  TERRET_SANDBOX_FILTER_NETWORK    = 1 << 1,
  /* With _NETWORK: AF_UNIX is left open (allow-unix-sockets). */
  TERRET_SANDBOX_FILTER_ALLOW_UNIX = 1 << 2,
  TERRET_SANDBOX_FILTER_ALL        = (1 << 3) - 1,
} TerretSandboxFilter;

GBytes *_terret_sandbox_filter_get (TerretSandboxFilter   flags,
                                    GError              **error);

G_END_DECLS

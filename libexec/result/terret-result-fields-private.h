/* terret-result-fields-private.h: a result's fields, for its own files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Only terret-result.c and terret-result-omitted.c include this: the
 * engines go through terret-result-private.h.
 */

#pragma once

#include <glib-object.h>

#include "terret-result-input-private.h"
#include "terret-spool-private.h"
#include "terret-types.h"

G_BEGIN_DECLS

struct _TerretResult
{
  GObject parent_instance;

  GBytes *stdout_bytes;         /* (owned) */
  TerretLimits limits_hit;
  GBytes *stderr_bytes;         /* (owned) (nullable) */
  GString *notice;              /* (owned) (nullable) */
  char *cwd;                    /* (owned) (nullable) */
  guint64 dropped[2];
  gsize cut_offset[2];
  guint64 omitted_at[2];
  guint64 omitted_lines[2];
  GPtrArray *omitted_errors[2]; /* (owned) (nullable) (element-type TerretOutputLine) */
  TerretSpool *spool[2];        /* (owned) (nullable) */
  int exit_status;              /* -1 when none */
  int term_signal;              /* 0 when none */
  GArray *pipestatus;           /* (owned) (nullable) of int */
  TerretClock clock;
  TerretInputWait input;        /* (owned) prompt */
  TerretStopSignal ended_by;
  double stop_seconds;
  guint timed_out : 1;
  guint stalled : 1;
  guint running : 1;
};

G_END_DECLS

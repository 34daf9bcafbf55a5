/* bench-floor-common.h: what the two floor servers share
 *
 * A floor server speaks the stdio protocol (one JSON request a line, one
 * response a line) with the least a server of its kind can do, so that
 * the peers' own client, driving it exactly as it drives `terret-exec
 * serve` and the seeds, measures what no server of that kind can beat.
 * Deliberately no GLib main loop: blocking reads and writes, one request
 * at a time.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct
{
  JsonNode *root;               /* (owned) */
  JsonNode *id;                 /* (unowned) (nullable) in root */
  const char *op;               /* in root, "run" when absent */
  const char *session;          /* in root, "default" when absent */
  const char *command;          /* (nullable) in root */
} FloorRequest;

gboolean floor_read_request  (FloorRequest  *request);
void     floor_clear_request (FloorRequest  *request);
void     floor_respond       (FloorRequest  *request,
                              int            status,
                              const guint8  *out,
                              gsize          out_len,
                              const guint8  *err,
                              gsize          err_len,
                              gboolean       streams_merged);
void     floor_respond_error (FloorRequest  *request,
                              const char    *code,
                              const char    *message);
void     floor_write_all     (int            fd,
                              const void    *data,
                              gsize          len);

G_END_DECLS

/* terret-exec-read.h: the full-output files a server handed out, and
 * reading them (`read`, `bash_output`)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <terret-exec.h>

G_BEGIN_DECLS

typedef struct _CliOutputs CliOutputs;

CliOutputs *cli_outputs_new            (gboolean       take);
void        cli_outputs_free           (CliOutputs    *outputs);
void        cli_outputs_record         (CliOutputs    *outputs,
                                        const char    *session,
                                        TerretResult  *result);
void        cli_outputs_forget_session (CliOutputs    *outputs,
                                        const char    *session);
void        cli_outputs_forget_all     (CliOutputs    *outputs);

/*
 * CliReadRange:
 * @offset: the first byte, or -1
 * @length: bytes at most, or -1
 * @line: the first line (1-based), or -1
 * @lines: lines at most, or -1
 * @pattern: (nullable): a GRegex: only the lines it matches
 *
 * What a `read` asks of a file: a byte range or a line range (not both),
 * optionally filtered by @pattern.
 */
typedef struct
{
  gint64 offset;
  gint64 length;
  gint64 line;
  gint64 lines;
  const char *pattern;
} CliReadRange;

char       *cli_outputs_resolve        (CliOutputs    *outputs,
                                        const char    *session,
                                        const char    *path,
                                        TerretStream   stream,
                                        GError       **error);
void        cli_read_async             (const char          *path,
                                        const CliReadRange  *range,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
JsonNode   *cli_read_finish            (GAsyncResult        *result,
                                        GError             **error);
char       *cli_read_text              (JsonObject          *read);

G_END_DECLS

/* terret-exec-common.h: what the one-shot CLI, `serve` and `mcp` share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <terret-exec.h>

G_BEGIN_DECLS

/* Exit codes of the CLI beyond the command's own status (docs/cli.md). */
#define CLI_EXIT_TIMEOUT     124  /* the command ran past its timeout */
#define CLI_EXIT_NOT_RUN     125  /* nothing ran: bad usage, no backend, refused */
#define CLI_EXIT_NO_STATUS   255  /* the command ran but reported no status */
#define CLI_EXIT_SIGNAL_BASE 128  /* 128 + N: signal N ended the command or the CLI */

const char     *cli_error_code             (const GError        *error);
JsonNode       *cli_response_new           (JsonNode            *id,
                                            TerretResult        *result,
                                            const GError        *error);
gboolean        cli_parse_capture          (const char          *text,
                                            TerretCaptureMode   *mode,
                                            GError             **error);
void            cli_take_full_output       (TerretResult        *result);
int             cli_exit_code_for_result   (TerretResult        *result);
gboolean        cli_write_all              (int                  fd,
                                            const void          *data,
                                            gsize                len,
                                            GError             **error);
gboolean        cli_write_json_line        (int                  fd,
                                            JsonNode            *node,
                                            GError             **error);

int             cli_check                  (TerretExecutor      *executor);
int             cli_serve_main             (int                  argc,
                                            char               **argv);
int             cli_mcp_main               (int                  argc,
                                            char               **argv);

G_END_DECLS

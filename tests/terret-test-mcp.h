/* terret-test-mcp.h: a `terret-exec mcp` run as a real process and spoken
 * to in JSON-RPC lines as an MCP host would, for the mcp tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define REQUIRE_BACKEND(name)                                           \
  G_STMT_START {                                                        \
    if (!have_backend (name))                                           \
      {                                                                 \
        g_test_skip ("the " name " backend is not built");              \
        return;                                                         \
      }                                                                 \
  } G_STMT_END

/* A running `terret-exec mcp`, driven line by line. */
typedef struct
{
  GSubprocess *proc;
  GOutputStream *input;
  GDataInputStream *output;
  guint next_id;
} Mcp;

gboolean    have_backend   (const char *name);
void        mcp_clear      (Mcp        *mcp);
void        mcp_start_with (Mcp        *mcp,
                            const char *backend,
                            const char *setting);
void        mcp_start      (Mcp        *mcp,
                            const char *backend);
void        mcp_send_line  (Mcp        *mcp,
                            const char *line);
JsonNode   *mcp_recv       (Mcp        *mcp);
guint       mcp_request    (Mcp        *mcp,
                            const char *method,
                            const char *params_json);
JsonNode   *mcp_response   (Mcp        *mcp,
                            guint       id,
                            GPtrArray  *notes);
JsonNode   *mcp_call       (Mcp        *mcp,
                            const char *method,
                            const char *params_json);
JsonObject *result_of      (JsonNode   *response);
gint64      error_code_of  (JsonNode   *response);
void        mcp_initialize (Mcp        *mcp);
JsonNode   *mcp_tool       (Mcp        *mcp,
                            const char *tool,
                            const char *arguments_json);
const char *tool_text      (JsonObject *result);
JsonObject *structured_of  (JsonObject *result);
void        mcp_finish     (Mcp        *mcp);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Mcp, mcp_clear)

G_END_DECLS

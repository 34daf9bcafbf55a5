/* terret-exec-stdio.h: the stdio server under `serve` and `mcp`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <terret-exec.h>

#include "terret-exec-read.h"

G_BEGIN_DECLS

typedef struct _CliStdio CliStdio;
typedef struct _CliCall CliCall;

/*
 * CliRefusal:
 * @CLI_REFUSAL_NOT_JSON: the line is not JSON (nor UTF-8)
 * @CLI_REFUSAL_NOT_OBJECT: the line is JSON but not an object
 * @CLI_REFUSAL_TOO_LONG: the line is longer than the server reads
 * @CLI_REFUSAL_FIELD: a field of the object is at fault
 *
 * Why the server refused a line before its dialect saw it.
 */
typedef enum {
  CLI_REFUSAL_NOT_JSON,
  CLI_REFUSAL_NOT_OBJECT,
  CLI_REFUSAL_TOO_LONG,
  CLI_REFUSAL_FIELD,
} CliRefusal;

/*
 * CliOutcome:
 * @result: (nullable): what the command left behind: it ran
 * @error: (nullable): why nothing was done, or that the call was cancelled
 * @text: (nullable): what was done, in words a model reads
 * @data: (nullable): what an op that runs nothing found (a read), as the
 *   members of its answer; @text says it in words
 *
 * How a call ended: a result, an error, or neither (done, as @text says).
 */
typedef struct
{
  TerretResult *result;
  const GError *error;
  const char *text;
  JsonObject *data;
} CliOutcome;

/*
 * CliProgressFunc:
 *
 * Output of a call's command while it runs, as the backend reports it.
 */
typedef void (*CliProgressFunc) (CliCall *call,
                                 GBytes  *data);

/*
 * CliDialect:
 * @name: the subcommand, for messages and --help
 * @request_word: what the dialect calls a line: "request", "message"
 * @tools: it calls ops by their tools' names, and their fields arguments
 * @envelope: (array zero-terminated=1): members of a request that are no
 *   op's field (the id, the op's name)
 * @cancel_at_end: the end of input cancels the calls in flight rather than
 *   letting them answer
 * @strict_close: closing a session that no run named is an error
 * @keep_full_output: runs keep their full output unless the call or the
 *   host's `--set keep-full-output` says otherwise
 * @summary: the --help summary
 * @reference: the page that documents it, for --help
 * @handle: carries out one request, an object whose line had no fault
 *   the server could see
 * @refuse: answers a line the server refused: @message and @id are %NULL
 *   when the line was no object, @id also when the object's id was
 *   unreadable; @field names the field at fault (%CLI_REFUSAL_FIELD)
 * @respond: answers a call, which then leaves flight
 *
 * What `serve` and `mcp` each make of the lines the server reads.
 */
typedef struct
{
  const char *name;
  const char *request_word;
  gboolean tools;
  const char * const *envelope;
  gboolean cancel_at_end;
  gboolean strict_close;
  gboolean keep_full_output;
  char     *(*summary)     (void);
  const char *reference;
  void      (*handle)      (CliStdio         *server,
                            JsonObject       *request);
  void      (*refuse)      (CliStdio         *server,
                            JsonObject       *message,
                            JsonNode         *id,
                            CliRefusal        refusal,
                            const char       *field,
                            const GError     *error);
  void      (*respond)     (CliStdio         *server,
                            CliCall          *call,
                            const CliOutcome *outcome);
} CliDialect;

int              cli_stdio_main            (const CliDialect  *dialect,
                                            int                argc,
                                            char             **argv);

const CliDialect *cli_stdio_get_dialect    (CliStdio          *server);
TerretExecutor  *cli_stdio_get_executor    (CliStdio          *server);
GHashTable      *cli_stdio_get_sessions    (CliStdio          *server);
CliOutputs      *cli_stdio_get_outputs     (CliStdio          *server);
gboolean         cli_stdio_keeps_full_output (CliStdio        *server);
gpointer         cli_stdio_get_data        (CliStdio          *server);
void             cli_stdio_set_data        (CliStdio          *server,
                                            gpointer           data,
                                            GDestroyNotify     destroy);
void             cli_stdio_write           (CliStdio          *server,
                                            JsonNode          *message);
GList           *cli_stdio_get_calls       (CliStdio          *server);
gboolean         cli_stdio_has_call        (CliStdio          *server,
                                            const char        *key);
guint            cli_stdio_cancel_calls    (CliStdio          *server,
                                            const char        *key,
                                            const char        *session);

char            *cli_id_key                (JsonNode          *id);

CliCall         *cli_call_new              (CliStdio          *server,
                                            JsonNode          *id);
CliStdio        *cli_call_get_server       (CliCall           *call);
JsonNode        *cli_call_get_id           (CliCall           *call);
const char      *cli_call_get_key          (CliCall           *call);
const char      *cli_call_get_session      (CliCall           *call);
void             cli_call_set_session      (CliCall           *call,
                                            const char        *session);
GCancellable    *cli_call_get_cancellable  (CliCall           *call);
CliProgressFunc  cli_call_get_progress     (CliCall           *call);
void             cli_call_set_progress     (CliCall           *call,
                                            CliProgressFunc    progress);
gpointer         cli_call_get_data         (CliCall           *call);
void             cli_call_set_data         (CliCall           *call,
                                            gpointer           data,
                                            GDestroyNotify     destroy);
void             cli_call_return           (CliCall           *call,
                                            TerretResult      *result,
                                            const GError      *error,
                                            const char        *text);
void             cli_call_return_data      (CliCall           *call,
                                            JsonObject        *data,
                                            const char        *text);
void             cli_call_drop             (CliCall           *call);

G_END_DECLS

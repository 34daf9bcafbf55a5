/* terret-exec-conformance-util.h: what the conformance kit's checks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

/* A hung backend must not hang the kit: every run that is not about
 * timeouts carries this one. */
#define SAFETY_TIMEOUT 60.0

/* How long a process may take to disappear after its session was ended
 * (killed processes are reaped by whoever their parent is). */
#define GONE_WAIT_MS 10000

#define OTHER_SESSION "conformance-other"

/* The backend under test, and what it declares. */
typedef struct
{
  char *backend;
  char *config_dir;
  TerretCapabilities caps;
} ConformanceKit;

extern ConformanceKit kit;

#define REQUIRE_CAPS(needed)                                            \
  G_STMT_START {                                                        \
    if ((kit.caps & (needed)) != (needed))                              \
      {                                                                 \
        g_test_skip ("the backend does not declare " #needed);          \
        return;                                                         \
      }                                                                 \
  } G_STMT_END

#define REQUIRE_COMMANDS() REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS)

/* A run started with kit_async_done as its callback, until it is over. */
typedef struct
{
  GAsyncResult *result;         /* (owned) (nullable) */
} AsyncWait;

TerretExecutor *kit_new_executor          (void);
gboolean        kit_has_setting           (TerretExecutor  *executor,
                                           const char      *name);
void            kit_set_setting           (TerretExecutor  *executor,
                                           const char      *key,
                                           const char      *value);
TerretRequest  *kit_new_request           (const char      *command);
TerretResult   *kit_run_request           (TerretExecutor  *executor,
                                           TerretRequest   *request);
TerretResult   *kit_run_in                (TerretExecutor  *executor,
                                           const char      *session,
                                           const char      *command);
TerretResult   *kit_run                   (TerretExecutor  *executor,
                                           const char      *command);
void            kit_assert_bytes          (GBytes          *bytes,
                                           const char      *expected,
                                           gssize           expected_len);
char           *kit_bytes_to_string       (GBytes          *bytes);
void            kit_assert_exits          (TerretExecutor  *executor,
                                           const char      *command,
                                           int              status,
                                           const char      *expected,
                                           gssize           expected_len);
void            kit_async_done            (GObject         *object,
                                           GAsyncResult    *result,
                                           gpointer         user_data);
TerretResult   *kit_async_finish          (TerretExecutor  *executor,
                                           AsyncWait       *wait,
                                           GError         **error);
gboolean        kit_parse_stat            (const char      *line,
                                           char            *state,
                                           GPid            *sid);
gboolean        kit_read_stat             (GPid             pid,
                                           char            *state,
                                           GPid            *sid);
gboolean        kit_process_alive         (GPid             pid);
guint           kit_count_session_members (GPid             sid);
void            kit_assert_process_gone   (GPid             pid);
void            kit_assert_session_gone   (GPid             sid);
char           *kit_read_trimmed          (const char      *path);

/* terret-exec-conformance-runs.c */
void            conformance_add_run_checks     (void);
/* terret-exec-conformance-agent.c */
void            conformance_add_agent_checks   (void);
/* terret-exec-conformance-sessions.c */
void            conformance_add_session_checks (void);

G_END_DECLS

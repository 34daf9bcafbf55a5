/* terret-executor.h: the interface every backend implements
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-request.h"
#include "terret-result.h"
#include "terret-session-info.h"
#include "terret-types.h"

G_BEGIN_DECLS

/**
 * TERRET_EXECUTOR_EXTENSION_POINT_NAME:
 *
 * The GIO extension point backends implement. A backend module registers
 * its type with g_io_extension_point_implement() under this name, with
 * the backend's name and priority.
 *
 * Since: 0.1
 */
#define TERRET_EXECUTOR_EXTENSION_POINT_NAME "terret-executor"

/**
 * TERRET_EXECUTOR_ENV:
 *
 * The environment variable that picks the backend
 * [func@Terret.Executor.new_default] uses. The value `help` lists the
 * backends on stderr.
 *
 * Since: 0.1
 */
#define TERRET_EXECUTOR_ENV "TERRET_EXECUTOR"

/**
 * TERRET_EXEC_MODULE_PATH_ENV:
 *
 * The environment variable holding extra backend module directories,
 * separated by `:`, searched before the installed one.
 *
 * Since: 0.1
 */
#define TERRET_EXEC_MODULE_PATH_ENV "TERRET_EXEC_MODULE_PATH"

/**
 * TERRET_DEFINE_BACKEND_MODULE:
 * @load: the module's own load function, `void load (GTypeModule *module)`,
 *   which registers the module's types and implements
 *   %TERRET_EXECUTOR_EXTENSION_POINT_NAME with each backend's type, name
 *   and priority
 *
 * Defines the entry points GIO looks up in a backend module:
 * `g_io_module_load()`, which calls @load; `g_io_module_unload()`, which
 * does nothing, since a backend stays loaded for the life of the process;
 * and `g_io_module_query()`, which names the extension point. Use it once,
 * at file scope, without a semicolon:
 *
 * ```c
 * static void
 * my_module_load (GTypeModule *module)
 * {
 *   my_executor_register_type (module);
 *   g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
 *                                   my_executor_get_type (), "mine", 20);
 * }
 *
 * TERRET_DEFINE_BACKEND_MODULE (my_module_load)
 * ```
 *
 * Since: 0.2
 */
#define TERRET_DEFINE_BACKEND_MODULE(load)                                        \
  G_MODULE_EXPORT void                                                            \
  g_io_module_load (GIOModule *module)                                            \
  {                                                                               \
    load (G_TYPE_MODULE (module));                                                \
  }                                                                               \
                                                                                  \
  G_MODULE_EXPORT void                                                            \
  g_io_module_unload (G_GNUC_UNUSED GIOModule *module)                            \
  {                                                                               \
  }                                                                               \
                                                                                  \
  G_MODULE_EXPORT char **                                                         \
  g_io_module_query (void)                                                        \
  {                                                                               \
    char *points[] = { (char *) TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };     \
                                                                                  \
    return g_strdupv (points);                                                    \
  }

#define TERRET_TYPE_EXECUTOR (terret_executor_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_INTERFACE (TerretExecutor, terret_executor, TERRET, EXECUTOR, GObject)

/**
 * TerretExecutorInterface:
 * @g_iface: the parent interface
 * @get_capabilities: what the backend offers
 * @run_async: start one run; the task completes on the caller's
 *   thread-default main context. Required.
 * @run_finish: complete a run. Required.
 * @close_session: end one session and everything running in it. Closing
 *   a key that has no session is not an error.
 * @close_all: end every session
 * @get_session_pid: the process that carries a session, or 0
 * @send_input: write bytes to the standard input of the command running
 *   in a session; %NULL when the backend cannot
 *   (%TERRET_CAPABILITY_INPUT)
 * @interrupt: interrupt the command running in a session, and kill it
 *   after a grace when it ignores the interrupt; %NULL when the backend
 *   cannot (%TERRET_CAPABILITY_INTERRUPT)
 * @poll_async: wait up to a given time for new output of the command
 *   left running in a session; the task completes on the caller's
 *   thread-default main context. %NULL when the backend cannot
 *   (%TERRET_CAPABILITY_POLL)
 * @poll_finish: complete a poll
 * @dup_containment: describe how what commands start is contained and
 *   limited here (optional; since 0.2)
 * @list_async: list the sessions and the commands left running; the
 *   task completes on the caller's thread-default main context. %NULL
 *   when the backend cannot (%TERRET_CAPABILITY_LIST; since 0.2)
 * @list_finish: complete a list, returning a #GPtrArray of
 *   [class@Terret.SessionInfo] (since 0.2)
 * @close_session_full: end one session as @close_session does, adding
 *   to a #GPtrArray a [class@Terret.StoppedProcess] for each process the
 *   close had to stop; %NULL: @close_session, and nothing is added
 *   (since 0.3)
 *
 * The virtual methods of [iface@Terret.Executor]. Backends may also
 * implement [iface@Gio.Initable]: a backend that cannot work on this host fails
 * g_initable_init() and the next one is chosen.
 *
 * Since: 0.1
 */
struct _TerretExecutorInterface
{
  GTypeInterface g_iface;

  TerretCapabilities  (*get_capabilities) (TerretExecutor       *self);
  void                (*run_async)        (TerretExecutor       *self,
                                           TerretRequest        *request,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data);
  TerretResult       *(*run_finish)       (TerretExecutor       *self,
                                           GAsyncResult         *result,
                                           GError              **error);
  void                (*close_session)    (TerretExecutor       *self,
                                           const char           *session);
  void                (*close_all)        (TerretExecutor       *self);
  GPid                (*get_session_pid)  (TerretExecutor       *self,
                                           const char           *session);
  gboolean            (*send_input)       (TerretExecutor       *self,
                                           const char           *session,
                                           GBytes               *data,
                                           GError              **error);
  gboolean            (*interrupt)        (TerretExecutor       *self,
                                           const char           *session,
                                           GError              **error);
  void                (*poll_async)       (TerretExecutor       *self,
                                           const char           *session,
                                           double                wait,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data);
  TerretResult       *(*poll_finish)      (TerretExecutor       *self,
                                           GAsyncResult         *result,
                                           GError              **error);
  char               *(*dup_containment)  (TerretExecutor       *self);
  void                (*list_async)       (TerretExecutor       *self,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data);
  GPtrArray          *(*list_finish)      (TerretExecutor       *self,
                                           GAsyncResult         *result,
                                           GError              **error);

  void                (*close_session_full) (TerretExecutor     *self,
                                             const char         *session,
                                             GPtrArray          *stopped);

  /*< private >*/
  gpointer _reserved[4];
};

TERRET_AVAILABLE_IN_0_1
TerretExecutor     *terret_executor_new              (const char           *name,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
TerretExecutor     *terret_executor_new_default      (GError              **error);
TERRET_AVAILABLE_IN_0_1
TerretExecutor     *terret_executor_new_with_settings (const char          *name,
                                                      const char * const  *settings,
                                                      GError             **error);
TERRET_AVAILABLE_IN_0_1
const char         *terret_executor_get_name         (TerretExecutor       *self);
TERRET_AVAILABLE_IN_0_1
TerretCapabilities  terret_executor_get_capabilities (TerretExecutor       *self);
TERRET_AVAILABLE_IN_0_2
char               *terret_executor_dup_containment  (TerretExecutor       *self);
TERRET_AVAILABLE_IN_0_1
void                terret_executor_run_async        (TerretExecutor       *self,
                                                      TerretRequest        *request,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
TERRET_AVAILABLE_IN_0_1
TerretResult       *terret_executor_run_finish       (TerretExecutor       *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
TerretResult       *terret_executor_run              (TerretExecutor       *self,
                                                      TerretRequest        *request,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
void                terret_executor_close_session    (TerretExecutor       *self,
                                                      const char           *session);
TERRET_AVAILABLE_IN_0_3
void                terret_executor_close_session_full (TerretExecutor     *self,
                                                      const char           *session,
                                                      GPtrArray           **stopped);
TERRET_AVAILABLE_IN_0_1
void                terret_executor_close_all        (TerretExecutor       *self);
TERRET_AVAILABLE_IN_0_1
GPid                terret_executor_get_session_pid  (TerretExecutor       *self,
                                                      const char           *session);
TERRET_AVAILABLE_IN_0_1
gboolean            terret_executor_send_input       (TerretExecutor       *self,
                                                      const char           *session,
                                                      GBytes               *data,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
gboolean            terret_executor_interrupt        (TerretExecutor       *self,
                                                      const char           *session,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
void                terret_executor_poll_async       (TerretExecutor       *self,
                                                      const char           *session,
                                                      double                wait,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
TERRET_AVAILABLE_IN_0_1
TerretResult       *terret_executor_poll_finish      (TerretExecutor       *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
TerretResult       *terret_executor_poll             (TerretExecutor       *self,
                                                      const char           *session,
                                                      double                wait,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_2
void                terret_executor_list_async       (TerretExecutor       *self,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
TERRET_AVAILABLE_IN_0_2
GPtrArray          *terret_executor_list_finish      (TerretExecutor       *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_2
GPtrArray          *terret_executor_list             (TerretExecutor       *self,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_2
GParamSpec        **terret_executor_list_settings    (TerretExecutor       *self,
                                                      guint                *n_settings);
TERRET_AVAILABLE_IN_0_1
gboolean            terret_executor_set_setting      (TerretExecutor       *self,
                                                      const char           *key,
                                                      const char           *value,
                                                      GError              **error);
TERRET_AVAILABLE_IN_0_1
gboolean            terret_executor_apply_key_file   (TerretExecutor       *self,
                                                      GKeyFile             *key_file,
                                                      const char           *origin,
                                                      GError              **error);

TERRET_AVAILABLE_IN_0_2
char               *terret_setting_value_to_string   (const GValue         *value);

G_END_DECLS

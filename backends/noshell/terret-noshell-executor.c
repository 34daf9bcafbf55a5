/* terret-noshell-executor.c: the backend for a build or host with no shell
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <terret-exec.h>

/*
 * TerretNoshellExecutor:
 *
 * What a build without local shell backends resolves to: every run fails
 * in-band with TERRET_EXEC_ERROR_NO_SHELL, so the host (and a model
 * behind it) sees a failure it can report, and the operator reads what
 * setup is missing, instead of the host failing to start at all.
 */
#define TERRET_TYPE_NOSHELL_EXECUTOR (terret_noshell_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretNoshellExecutor, terret_noshell_executor, TERRET, NOSHELL_EXECUTOR, GObject)

struct _TerretNoshellExecutor
{
  GObject parent_instance;
};

static void executor_iface_init (TerretExecutorInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretNoshellExecutor, terret_noshell_executor, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (TERRET_TYPE_EXECUTOR, executor_iface_init))

#define NO_SHELL_MESSAGE \
  "no shell is available to run commands: this installation has only the noshell backend. " \
  "Build terret-exec with -Dlocal-shell=enabled for the pty and oneshot backends, or install " \
  "a backend module (in the backend directory or TERRET_EXEC_MODULE_PATH) and choose it with " \
  "TERRET_EXECUTOR or backend= in the [executor] group of terret-exec/executor.conf"

static TerretCapabilities
terret_noshell_executor_get_capabilities (TerretExecutor *executor)
{
  return TERRET_CAPABILITY_NONE;
}

static void
terret_noshell_executor_run_async (TerretExecutor      *executor,
                                   TerretRequest       *request,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (executor, cancellable, callback, user_data);

  g_task_set_source_tag (task, terret_noshell_executor_run_async);
  g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_SHELL,
                           "%s", NO_SHELL_MESSAGE);
}

static TerretResult *
terret_noshell_executor_run_finish (TerretExecutor  *executor,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->get_capabilities = terret_noshell_executor_get_capabilities;
  iface->run_async = terret_noshell_executor_run_async;
  iface->run_finish = terret_noshell_executor_run_finish;
}

static void
terret_noshell_executor_class_init (TerretNoshellExecutorClass *klass)
{
}

static void
terret_noshell_executor_class_finalize (TerretNoshellExecutorClass *klass)
{
}

static void
terret_noshell_executor_init (TerretNoshellExecutor *self)
{
}

static void
noshell_module_load (GTypeModule *module)
{
  terret_noshell_executor_register_type (module);
  /* Lowest of all: chosen by priority only when nothing can run commands. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  TERRET_TYPE_NOSHELL_EXECUTOR, "noshell", -100);
}

TERRET_DEFINE_BACKEND_MODULE (noshell_module_load)

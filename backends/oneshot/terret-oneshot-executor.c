/* terret-oneshot-executor.c: one `bash -c` process per command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <terret-exec.h>

/*
 * TerretOneshotExecutor:
 *
 * The `oneshot` backend: every command its own `bash -c COMMAND` on this
 * host, with stdout and stderr apart. All of it is the SDK's
 * TerretCommandExecutor, whose engine this backend uses as it is.
 */
#define TERRET_TYPE_ONESHOT_EXECUTOR (terret_oneshot_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretOneshotExecutor, terret_oneshot_executor, TERRET, ONESHOT_EXECUTOR, TerretCommandExecutor)

struct _TerretOneshotExecutor
{
  TerretCommandExecutor parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretOneshotExecutor, terret_oneshot_executor,
                                TERRET_TYPE_COMMAND_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static void
terret_oneshot_executor_class_init (TerretOneshotExecutorClass *klass)
{
}

static void
terret_oneshot_executor_class_finalize (TerretOneshotExecutorClass *klass)
{
}

static void
terret_oneshot_executor_init (TerretOneshotExecutor *self)
{
}

/* --- Module ------------------------------------------------------------ */

static void
oneshot_module_load (GTypeModule *module)
{
  terret_oneshot_executor_register_type (module);
  /* Below pty: without a persistent session, `cd` and `export` do not
   * carry over, which is not what a caller who named no backend expects
   * of a shell. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_oneshot_executor_get_type (), "oneshot", 50);
}

TERRET_DEFINE_BACKEND_MODULE (oneshot_module_load)

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

/* The entry points are declared by <gio/giomodule.h>; G_MODULE_EXPORT
 * keeps them visible from a module built with hidden symbols. */
G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  terret_oneshot_executor_register_type (G_TYPE_MODULE (module));
  /* Below pty: without a persistent session, `cd` and `export` do not
   * carry over, which is not what a caller who named no backend expects
   * of a shell. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_oneshot_executor_get_type (), "oneshot", 50);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *)TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}

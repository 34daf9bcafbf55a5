/* terret-far-side.h: where a backend's processes run when not on this host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

#define TERRET_TYPE_FAR_SIDE (terret_far_side_get_type ())

TERRET_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (TerretFarSide, terret_far_side, TERRET, FAR_SIDE, GObject)

/**
 * TerretFarSideStartFunc:
 * @far_side: the far side
 * @argv: (array zero-terminated=1): the arguments the launcher is given
 *   there, after its own path
 * @socket_fd: what becomes the launcher's descriptor 3 there
 * @output_fd: what becomes its descriptors 1 and 2 there
 * @user_data: the data given with the function
 * @error: return location for a #GError
 *
 * Starts the launcher on a far side reached with
 * [ctor@Terret.FarSide.new_for_socket]: the program
 * [func@Terret.FarSide.get_launcher] names, at its place there, with
 * @argv, @socket_fd as its descriptor 3, @output_fd as its standard
 * output and error and nothing (`/dev/null`) as its standard input. The
 * descriptors are borrowed: they are closed once this returns. Called
 * when the executor's first process starts, and again after the launcher
 * went away, on the thread that starts it, which it blocks: the function
 * returns once the launcher was started (or could not be), and the
 * library then waits for its answer on the socket.
 *
 * Returns: %TRUE when the launcher was started; %FALSE with @error set
 *   (%TERRET_EXEC_ERROR_UNAVAILABLE, saying why) otherwise
 *
 * Since: 0.3
 */
typedef gboolean (*TerretFarSideStartFunc) (TerretFarSide       *far_side,
                                            const char * const  *argv,
                                            int                  socket_fd,
                                            int                  output_fd,
                                            gpointer             user_data,
                                            GError             **error);

TERRET_AVAILABLE_IN_0_2
TerretFarSide *terret_far_side_new             (const char          *name,
                                                const char * const  *argv);
TERRET_AVAILABLE_IN_0_3
TerretFarSide *terret_far_side_new_for_socket  (const char             *name,
                                                TerretFarSideStartFunc  start,
                                                gpointer                user_data,
                                                GDestroyNotify          destroy);
TERRET_AVAILABLE_IN_0_2
void           terret_far_side_set_install     (TerretFarSide       *self,
                                                const char * const  *argv);
TERRET_AVAILABLE_IN_0_2
void           terret_far_side_set_probe       (TerretFarSide       *self,
                                                const char * const  *argv);
TERRET_AVAILABLE_IN_0_2
void           terret_far_side_set_timeout     (TerretFarSide       *self,
                                                double               seconds);
TERRET_AVAILABLE_IN_0_2
const char    *terret_far_side_get_launcher    (void);
TERRET_AVAILABLE_IN_0_2
const char    *terret_far_side_get_launcher_id (void);

G_END_DECLS

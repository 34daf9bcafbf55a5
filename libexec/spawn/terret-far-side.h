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

TERRET_AVAILABLE_IN_0_2
TerretFarSide *terret_far_side_new             (const char          *name,
                                                const char * const  *argv);
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

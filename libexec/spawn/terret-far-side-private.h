/* terret-far-side-private.h: what the library reads of a far side
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-far-side.h"

G_BEGIN_DECLS

const char         *_terret_far_side_get_name    (TerretFarSide *self);
const char * const *_terret_far_side_get_argv    (TerretFarSide *self);
const char * const *_terret_far_side_get_install (TerretFarSide *self);
const char * const *_terret_far_side_get_probe   (TerretFarSide *self);
double              _terret_far_side_get_timeout (TerretFarSide *self);
gboolean            _terret_far_side_start       (TerretFarSide       *self,
                                                  const char * const  *argv,
                                                  int                  socket_fd,
                                                  int                  output_fd,
                                                  GError             **error);
gboolean            _terret_far_side_has_socket  (TerretFarSide *self);
char               *_terret_far_side_dup_key     (TerretFarSide *self);

G_END_DECLS

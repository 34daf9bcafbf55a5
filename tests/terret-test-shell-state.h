/* terret-test-shell-state.h: shell state a command can set, as test cases
 * every persistent-session backend must pass
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

guint        terret_test_shell_state_n_cases (void);
const char  *terret_test_shell_state_name    (guint           i);
void         terret_test_shell_state_check   (TerretExecutor *executor,
                                              guint           i);

G_END_DECLS

/* terret-test-containment.h: what a command starts ends with its owner
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

/* How a run's owner ends what it started. */
typedef enum
{
  TERRET_TEST_END_RUN,          /* the run completes (oneshot) */
  TERRET_TEST_END_CLOSE,        /* close_all on the executor */
  TERRET_TEST_END_TIMEOUT,      /* the run's timeout */
  TERRET_TEST_END_CANCEL,       /* the run's cancellable */
  TERRET_TEST_END_DISPOSE,      /* the executor's last reference dropped */
} TerretTestEnd;

void  terret_test_containment_check       (TerretExecutor      *executor,
                                           TerretTestEnd        end,
                                           gboolean             detach);
void  terret_test_containment_host_killed (const char * const  *serve_args,
                                           gboolean             detach);

G_END_DECLS

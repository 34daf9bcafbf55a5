/* terret-exec.h: the umbrella header of terret-exec
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#define __TERRET_EXEC_INSIDE__

#include "terret-enum-types.h"
#include "terret-error.h"
#include "terret-request.h"
#include "terret-result.h"
#include "terret-output-line.h"
#include "terret-executor.h"
#include "terret-backend-info.h"
#include "terret-session-info.h"
#include "terret-stopped-process.h"
#include "terret-process.h"
#include "terret-launcher.h"
#include "terret-far-side.h"
#include "terret-shell-channel.h"
#include "terret-terminal-channel.h"
#include "terret-engine.h"
#include "terret-session-executor.h"
#include "terret-command-executor.h"

#undef __TERRET_EXEC_INSIDE__

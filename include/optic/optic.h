/* optic umbrella header: includes every public layer header.
 * Link with find_package(optic CONFIG) -> optic::optic, or pkg-config optic. */
#ifndef OPTIC_OPTIC_H
#define OPTIC_OPTIC_H

#include <optic/version.h>
#include <optic/core.h>
#include <optic/kernels.h>
#include <optic/graph.h>
#include <optic/attrs.h>
#include <optic/autodiff.h>
#include <optic/compile.h>
#include <optic/exec.h>
#include <optic/pod.h>
#include <optic/ckpt.h>
#include <optic/optim.h>

#endif /* OPTIC_OPTIC_H */

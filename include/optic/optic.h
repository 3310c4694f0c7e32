/* optic umbrella header: includes every public header.
 * Link with find_package(optic CONFIG) -> optic::optic, or pkg-config optic.
 *
 * Contents: <optic/core.h>, <optic/kernels.h>, the graph layer
 * (<optic/graph.h>, which includes <optic/graph_build.h>, <optic/passes.h>,
 * <optic/evaluate.h> and <optic/hlo.h>; <optic/attrs.h>, the typed attribute
 * view; <optic/autodiff.h>; and <optic/compile.h>), then
 * <optic/exec.h>, <optic/pod.h>, <optic/ckpt.h>, <optic/optim.h>. */
#ifndef OPTIC_OPTIC_H
#define OPTIC_OPTIC_H

#include <optic/version.h>
#include <optic/core.h>
#include <optic/kernels.h>
#include <optic/graph.h>
#include <optic/graph_build.h>
#include <optic/passes.h>
#include <optic/evaluate.h>
#include <optic/hlo.h>
#include <optic/attrs.h>
#include <optic/autodiff.h>
#include <optic/compile.h>
#include <optic/exec.h>
#include <optic/pod.h>
#include <optic/ckpt.h>
#include <optic/optim.h>

#endif /* OPTIC_OPTIC_H */

/* Devices: one host device whose cores follow OpenMP's thread count; sizing
 * calls, truncation to cap, lookup by id, bad arguments. */
#include <omp.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void one_host_device(void) {
  size_t count = 0;
  OT_EXPECT_OK(optic_device_list(NULL, 0, &count));
  OT_CHECK(count == 1, "%zu devices", count);
  optic_device d[4];
  memset(d, 0xff, sizeof d);
  size_t again = 0;
  OT_EXPECT_OK(optic_device_list(d, 4, &again));
  OT_CHECK(again == count);
  OT_CHECK(d[0].id == 0 && d[0].kind == OPTIC_DEVICE_HOST && strcmp(d[0].name, "host") == 0);
  OT_CHECK(d[0].cores == omp_get_max_threads() && d[0].cores >= 1, "cores %d, OpenMP %d", (int)d[0].cores,
           omp_get_max_threads());
  OT_CHECK(d[1].id == -1, "nothing written past count");
  optic_device g;
  OT_EXPECT_OK(optic_device_get(0, &g));
  OT_CHECK(memcmp(&g, &d[0], sizeof g) == 0);
}

static void cores_follow_openmp(void) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  optic_device d;
  OT_EXPECT_OK(optic_device_get(0, &d));
  OT_CHECK(d.cores == 1, "cores %d with 1 OpenMP thread", (int)d.cores);
  omp_set_num_threads(3);
  OT_EXPECT_OK(optic_device_get(0, &d));
  OT_CHECK(d.cores == 3, "cores %d with 3 OpenMP threads", (int)d.cores);
  omp_set_num_threads(saved);
}

static void bad_arguments(void) {
  optic_device d;
  size_t count;
  OT_EXPECT_STATUS(optic_device_list(&d, 1, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_device_list(NULL, 2, &count), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_device_get(1, &d), OPTIC_ERR_NOT_FOUND);
  OT_CHECK(strstr(optic_last_error(), "no device 1") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_device_get(-1, &d), OPTIC_ERR_NOT_FOUND);
  OT_EXPECT_STATUS(optic_device_get(0, NULL), OPTIC_ERR_INVALID_ARGUMENT);
}

static const ot_case cases[] = {
    {"one_host_device", one_host_device},
    {"cores_follow_openmp", cores_follow_openmp},
    {"bad_arguments", bad_arguments},
};

OT_MAIN(cases)

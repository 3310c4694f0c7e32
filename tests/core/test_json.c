/* JSON writer: escaping, numbers that read back exactly, structure errors are
 * reported instead of producing malformed text. */
#include <math.h>

#include <optic/optic.h>

#include "core/json.h"
#include "tests/harness.h"

static void writes_nested_document(void) {
  optic_json j;
  optic_json_init(&j, false);
  optic_json_begin_object(&j);
  optic_json_key(&j, "name");
  optic_json_string(&j, "a \"q\" \\ \n\t\x01");
  optic_json_key(&j, "list");
  optic_json_begin_array(&j);
  optic_json_int(&j, -5);
  optic_json_uint(&j, UINT64_MAX);
  optic_json_double(&j, 0.1);
  optic_json_double(&j, NAN);
  optic_json_bool(&j, true);
  optic_json_null(&j);
  optic_json_begin_object(&j);
  optic_json_end_object(&j);
  optic_json_end_array(&j);
  optic_json_end_object(&j);
  const char *text = NULL;
  OT_EXPECT_OK(optic_json_finish(&j, &text, NULL));
  const char *want =
      "{\"name\":\"a \\\"q\\\" \\\\ \\n\\t\\u0001\",\"list\":[-5,18446744073709551615,0.1,null,true,null,{}]}";
  OT_CHECK(text && strcmp(text, want) == 0, "got %s", text ? text : "(null)");
  optic_json_free(&j);
}

static void doubles_round_trip(void) {
  double values[] = {1.0 / 3.0, 1e-300, 123456789.125, -0.0, 5e-324, 1.7976931348623157e308};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    optic_json j;
    optic_json_init(&j, false);
    optic_json_double(&j, values[i]);
    const char *text;
    OT_EXPECT_OK(optic_json_finish(&j, &text, NULL));
    OT_CHECK(strtod(text, NULL) == values[i], "%s does not read back as %.17g", text, values[i]);
    optic_json_free(&j);
  }
}

static void structure_errors(void) {
  optic_json j;
  optic_json_init(&j, false);
  optic_json_begin_object(&j);
  optic_json_int(&j, 1); /* value without a key */
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);

  optic_json_init(&j, false);
  optic_json_begin_array(&j);
  optic_json_key(&j, "k"); /* key in an array */
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);

  optic_json_init(&j, false);
  optic_json_begin_array(&j);
  optic_json_end_object(&j); /* unbalanced */
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);

  optic_json_init(&j, false);
  optic_json_begin_object(&j); /* never closed */
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);

  optic_json_init(&j, false);
  for (int i = 0; i < OPTIC_JSON_MAX_DEPTH + 1; i++) optic_json_begin_array(&j);
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);

  optic_json_init(&j, false);
  optic_json_int(&j, 1);
  optic_json_int(&j, 2); /* two top-level values */
  OT_EXPECT_STATUS(optic_json_finish(&j, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  optic_json_free(&j);
}

static void pretty_output(void) {
  optic_json j;
  optic_json_init(&j, true);
  optic_json_begin_object(&j);
  optic_json_key(&j, "a");
  optic_json_begin_array(&j);
  optic_json_int(&j, 1);
  optic_json_int(&j, 2);
  optic_json_end_array(&j);
  optic_json_end_object(&j);
  const char *text;
  OT_EXPECT_OK(optic_json_finish(&j, &text, NULL));
  OT_CHECK(strcmp(text, "{\n  \"a\": [\n    1,\n    2\n  ]\n}") == 0, "got:\n%s", text);
  optic_json_free(&j);
}

static const ot_case cases[] = {
    {"writes_nested_document", writes_nested_document},
    {"doubles_round_trip", doubles_round_trip},
    {"structure_errors", structure_errors},
    {"pretty_output", pretty_output},
};
OT_MAIN(cases)

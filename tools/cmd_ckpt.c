/* `optic ckpt ls DIR | verify FILE... | show FILE | repair DIR...`: lists,
 * verifies, describes and repairs checkpoints through the library's verified
 * paths (ckpt.h). Exit codes: 0 everything valid, 1 a file is corrupt or
 * unreadable (one message per file on stderr), 2 usage. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic ckpt ls DIR [--verify]   list the checkpoints of DIR (step, bytes, entries, status)\n"
          "       optic ckpt verify FILE...      verify every byte of each file against its SHA-256s\n"
          "       optic ckpt show FILE           header, entries (dtype, shape, offset, bytes, SHA-256), metadata\n"
          "       optic ckpt repair DIR...       rewrite corrupt or missing replicas from a valid one\n"
          "       optic ckpt --help\n\n"
          "ls checks each file's index (header, entry table, metadata against the footer's\n"
          "SHA-256) and that the step it records matches its name; --verify checks the data\n"
          "too. verify also checks a ckpt-<step>.optic name against the recorded step (a\n"
          "checkpoint renamed or copied to another step's name is not valid). show checks\n"
          "the index only.\n"
          "Exit codes: 0 all valid, 1 a file is corrupt or unreadable (message per file on\n"
          "stderr), 2 usage error.\n");
}

static void hex(const uint8_t *b, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static int cmd_ls(const char *dir, bool verify) {
  size_t count = 0;
  if (optic_ckpt_list(dir, NULL, 0, &count) != OPTIC_OK) {
    fprintf(stderr, "optic ckpt ls: %s\n", optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  uint64_t *steps = malloc((count > 0 ? count : 1) * sizeof *steps);
  if (steps == NULL || optic_ckpt_list(dir, steps, count, &count) != OPTIC_OK) {
    fprintf(stderr, "optic ckpt ls: %s\n", steps ? optic_last_error() : "out of memory");
    free(steps);
    return OPTIC_EXIT_ERROR;
  }
  int rc = OPTIC_EXIT_OK;
  printf("%-20s %14s %8s  %-8s %s\n", "step", "bytes", "entries", "status", "file");
  for (size_t i = 0; i < count; i++) {
    char path[4352];
    optic_ckpt_path(dir, steps[i], path, sizeof path);
    optic_ckpt_reader_t *r = NULL;
    optic_status st = optic_ckpt_reader_create(path, NULL, &r);
    if (st == OPTIC_OK) st = verify ? optic_ckpt_verify(r) : optic_ckpt_check_name(r);
    if (st == OPTIC_OK) {
      printf("%-20" PRIu64 " %14" PRIu64 " %8zu  %-8s %s\n", steps[i], optic_ckpt_file_bytes(r),
             optic_ckpt_entry_count(r), verify ? "valid" : "index ok", path);
    } else {
      printf("%-20" PRIu64 " %14s %8s  %-8s %s\n", steps[i], "-", "-", "CORRUPT", path);
      fprintf(stderr, "optic ckpt ls: %s\n", optic_last_error());
      rc = OPTIC_EXIT_ERROR;
    }
    optic_ckpt_reader_destroy(r);
  }
  free(steps);
  return rc;
}

static int cmd_verify(int n, char **files) {
  int rc = OPTIC_EXIT_OK;
  for (int i = 0; i < n; i++) {
    optic_ckpt_reader_t *r = NULL;
    optic_status st = optic_ckpt_reader_create(files[i], NULL, &r);
    uint64_t t0 = optic_now_ns();
    if (st == OPTIC_OK) st = optic_ckpt_verify(r);
    if (st == OPTIC_OK) {
      double s = (double)(optic_now_ns() - t0) * 1e-9;
      char root[65], step[40] = "no step recorded";
      hex(optic_ckpt_root_sha256(r), 32, root);
      uint64_t recorded;
      if (optic_ckpt_step(r, &recorded) == OPTIC_OK) snprintf(step, sizeof step, "step %" PRIu64, recorded);
      printf("%s: valid (%zu entries, %" PRIu64 " bytes, %s, format v%u, index sha256 %s, verified in %.3f s)\n",
             files[i], optic_ckpt_entry_count(r), optic_ckpt_file_bytes(r), step, optic_ckpt_format_version(r), root,
             s);
    } else {
      fprintf(stderr, "%s: %s: %s\n", files[i], st == OPTIC_ERR_CORRUPT ? "CORRUPT" : optic_status_name(st),
              optic_last_error());
      rc = OPTIC_EXIT_ERROR;
    }
    optic_ckpt_reader_destroy(r);
  }
  return rc;
}

/* Text values print quoted; others as hex (first 64 bytes). */
static void print_value(const uint8_t *v, size_t len) {
  bool text = true;
  for (size_t i = 0; i < len && text; i++) text = v[i] >= 0x20 && v[i] != 0x7f;
  if (text) {
    printf("\"%.*s\"", (int)len, (const char *)v);
    return;
  }
  printf("0x");
  for (size_t i = 0; i < len && i < 64; i++) printf("%02x", v[i]);
  if (len > 64) printf("... (%zu bytes)", len);
}

static int cmd_show(const char *file) {
  optic_ckpt_reader_t *r = NULL;
  if (optic_ckpt_reader_create(file, NULL, &r) != OPTIC_OK) {
    fprintf(stderr, "%s: CORRUPT or unreadable: %s\n", file, optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  char root[65], h[65];
  hex(optic_ckpt_root_sha256(r), 32, root);
  printf("file        %s\n", file);
  printf("format      optic checkpoint v%u\n", optic_ckpt_format_version(r));
  uint64_t step;
  if (optic_ckpt_step(r, &step) == OPTIC_OK) printf("step        %" PRIu64 "\n", step);
  else printf("step        (not recorded)\n");
  if (optic_ckpt_check_name(r) != OPTIC_OK) printf("warning     %s\n", optic_last_error());
  printf("bytes       %" PRIu64 "\n", optic_ckpt_file_bytes(r));
  printf("chunk       %u bytes\n", optic_ckpt_chunk_bytes(r));
  printf("index       sha256 %s (checked; data not verified: run 'optic ckpt verify')\n", root);
  printf("entries     %zu\n", optic_ckpt_entry_count(r));
  for (size_t i = 0; i < optic_ckpt_entry_count(r); i++) {
    optic_ckpt_entry_info e;
    if (optic_ckpt_entry_at(r, i, &e) != OPTIC_OK) continue;
    char shape[160];
    optic_shape_format(&e.shape, e.dtype, shape, sizeof shape);
    hex(e.sha256, 32, h);
    printf("  %-4zu %-32s %-20s offset %-12" PRIu64 " bytes %-12" PRIu64 " sha256 %s\n", i, e.name, shape, e.offset,
           e.bytes, h);
  }
  printf("metadata    %zu\n", optic_ckpt_meta_count(r));
  for (size_t i = 0; i < optic_ckpt_meta_count(r); i++) {
    const char *key;
    const void *v;
    size_t len;
    if (optic_ckpt_meta_at(r, i, &key, &v, &len) != OPTIC_OK) continue;
    printf("  %s = ", key);
    print_value(v, len);
    printf("\n");
  }
  optic_ckpt_reader_destroy(r);
  return OPTIC_EXIT_OK;
}

static int cmd_repair(int n, char **dirs) {
  optic_ckpt_repair_report rep = {.size = sizeof rep};
  optic_status st = optic_ckpt_repair((const char *const *)dirs, (size_t)n, NULL, &rep);
  printf("checked %zu, valid %zu, repaired %zu, unrecoverable steps %zu\n", rep.checked, rep.valid, rep.repaired,
         rep.unrecoverable);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic ckpt repair: %s\n", optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  return OPTIC_EXIT_OK;
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...) {
  fprintf(stderr, "optic ckpt: ");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  usage(stderr);
  return OPTIC_EXIT_USAGE;
}

int optic_cmd_ckpt(int argc, char **argv) {
  if (argc < 2) return bad_usage("no subcommand given%s", "");
  const char *sub = argv[1];
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
    usage(stdout);
    return OPTIC_EXIT_OK;
  }
  int nargs = argc - 2;
  char **args = argv + 2;
  bool verify = false;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--help") == 0) {
      usage(stdout);
      return OPTIC_EXIT_OK;
    }
    if (strcmp(sub, "ls") == 0 && strcmp(args[i], "--verify") == 0) {
      verify = true;
      memmove(args + i, args + i + 1, (size_t)(nargs - i - 1) * sizeof *args);
      nargs--, i--;
    } else if (args[i][0] == '-' && args[i][1] != '\0') {
      return bad_usage("unknown option '%s'", args[i]);
    }
  }
  if (strcmp(sub, "ls") == 0) {
    if (nargs != 1) return bad_usage("ls takes one directory%s", "");
    return cmd_ls(args[0], verify);
  }
  if (strcmp(sub, "verify") == 0) {
    if (nargs < 1) return bad_usage("verify needs at least one file%s", "");
    return cmd_verify(nargs, args);
  }
  if (strcmp(sub, "show") == 0) {
    if (nargs != 1) return bad_usage("show takes one file%s", "");
    return cmd_show(args[0]);
  }
  if (strcmp(sub, "repair") == 0) {
    if (nargs < 1) return bad_usage("repair needs at least one directory%s", "");
    return cmd_repair(nargs, args);
  }
  return bad_usage("unknown subcommand '%s'", sub);
}

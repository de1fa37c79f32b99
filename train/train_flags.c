/* train_flags.c — twincache-train's options: one table drives parsing and
 * --help; a bad flag or value is one stderr line naming it, exit 2. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_args.h"
#include "tc_train.h"

static const char *const k_devices[] = {"auto", "cpu", "cuda", NULL}; /* DEV_* */

enum { N_TRAIN_OPTS = 35 };

/* Every flag of twincache-train, once. Returns the entries written to o. */
static size_t train_opts(opts *p, tc_opt *o) {
  const tc_opt t[] = {
      {.name = "--cache", .meta = "DIR", .kind = TC_OPT_STRING, .dst = &p->cache,
       .expect = "a directory", .help = "cache directory (required, except with --predict-only:\n"
               "its model predicts on --val-cache at any shape)"},
      {.name = "--mix", .meta = "DIR=W,...", .kind = TC_OPT_STRING, .dst = &p->mix,
       .expect = "DIR=W,DIR=W,...",
       .help = "instead of --cache: train on a mixture of 2..16 whole\n"
               "caches, each batch holding their graphs in the weights'\n"
               "shares (W > 0, default 1; e.g. twin=1,indep=1: twin and\n"
               "independent worlds mixed). Batches pad to the largest N,\n"
               "K, S (CUDA: stored caches of one S); no --val-split\n"
               "(validate with --val-cache); paths without ','; resumes\n"
               "like --cache"},
      {.name = "--val-split", .meta = "F", .kind = TC_OPT_F64, .dst = &p->val_split, .fhi = 1,
       .open = TC_OPEN_HI,
       .help = "fraction of the index range held out at the end for\n"
               "validation, 0 <= F < 1 (default {}; 0 = no evaluation;\n"
               "not with --val-cache)"},
      {.name = "--val-cache", .meta = "DIR", .kind = TC_OPT_STRING, .dst = &p->val_cache,
       .expect = "a directory",
       .help = "validate on every graph of this second cache instead\n"
               "(e.g. another graph family: out of distribution); all of\n"
               "--cache is then trained on. On the CPU its N, K, S and\n"
               "rows per world may differ from --cache's (the model scores\n"
               "each pair alone); the CUDA backend needs --cache's N, K, S"},
      {.name = "--local-nodes", .meta = "M", .kind = TC_OPT_U32, .dst = &p->local_nodes,
       .hi = UINT32_MAX,
       .help = "local mode: the ranks are M nodes of (ranks / M)\n"
               "consecutive ranks, and node k's ranks read --cache as\n"
               "node k's part of a set: exactly its shards k, k+M, ...\n"
               "(its local disk); every graph still once per epoch\n"
               "(README \"Local mode\"). Needs --val-cache; a checkpoint\n"
               "resumes with the same M (default 0: off)"},
      {.name = "--predict", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &p->predict,
       .expect = "a file name",
       .help = "after training, write the model's edge probabilities on\n"
               "every graph of --val-cache (a suite cell's directory) as\n"
               "the suite's predictions .npz (suite/SUITE.md), scored by\n"
               "`twincache-suite score DIR FILE`; needs --val-cache"},
      {.name = "--predict-only", .kind = TC_OPT_SWITCH, .dst = &p->predict_only,
       .help = "with --resume CKPT and --predict: train nothing, predict\n"
               "with the checkpoint's model, at any step (--batch, --seed,\n"
               "--val-split, --fresh-rows, --steps need not match its run;\n"
               "--fresh-rows S predicts on S-row worlds; --cache may be\n"
               "left out). A --resume with no step left of --steps and\n"
               "--predict predicts alike"},
      {.name = "--suite-version", .meta = "V", .kind = TC_OPT_U32, .dst = &p->suite_version, .lo = 1,
       .hi = 99,
       .help = "the suite the --val-cache cell belongs to (suite/vV.json):\n"
               "--predict's file says \"twincache-suite vV\", which score\n"
               "checks (default {})"},
      {.name = "--val-withhold-targets", .kind = TC_OPT_SWITCH, .dst = &p->val_withhold,
       .help = "validation (and --predict) batches carry no intervention\n"
               "targets, as the suite withholds them on a cell marked\n"
               "withhold_targets (inter-unknown); needs --val-cache"},
      {.name = "--fresh-rows", .meta = "S", .kind = TC_OPT_U32, .dst = &p->fresh_rows,
       .hi = TWINCACHE_MAX_SAMPLES,
       .help = "train on fresh worlds of the stored SCMs, S rows per world,\n"
               "new every epoch (0 = the stored worlds, default). Validation\n"
               "reads the stored worlds when they have S rows, else the\n"
               "fresh worlds of epoch 0 (the only way for an SCM-only cache)"},
      {.name = "--resample-every", .meta = "R", .kind = TC_OPT_U32, .dst = &p->resample_every, .lo = 1,
       .hi = UINT32_MAX, .help = "with --fresh-rows: R consecutive epochs share one draw\n(default {})"},
      {.name = "--batch", .meta = "G", .kind = TC_OPT_U32, .dst = &p->batch, .lo = 1, .hi = 4096,
       .help = "graphs per batch (per rank under mpirun), 1..4096 (default {})"},
      {.name = "--steps", .meta = "N", .kind = TC_OPT_U64, .dst = &p->steps, .lo = 1, .hi = UINT32_MAX,
       .help = "optimiser steps, >= 1 (default {})"},
      {.name = "--lr", .meta = "X", .kind = TC_OPT_F64, .dst = &p->lr, .fhi = 10, .open = TC_OPEN_LO,
       .help = "peak learning rate, > 0 (default {})"},
      {.name = "--weight-decay", .meta = "X", .kind = TC_OPT_F64, .dst = &p->weight_decay, .fhi = 10,
       .help = "AdamW decoupled weight decay, >= 0 (default {})"},
      {.name = "--warmup", .meta = "N", .kind = TC_OPT_U64, .dst = &p->warmup, .hi = UINT32_MAX,
       .help = "linear warm-up steps before the cosine decay (default {})"},
      {.name = "--pos-weight", .meta = "X", .kind = TC_OPT_F64, .dst = &p->pos_weight, .fhi = 1000,
       .open = TC_OPEN_LO, .help = "weight of positive (edge) pairs in the loss, > 0 (default {})"},
      {.name = "--device", .meta = "D", .kind = TC_OPT_CHOICE, .dst = &p->device, .choices = k_devices,
       .expect = "auto, cpu or cuda", .help = "auto | cpu | cuda (default {}: CUDA when usable)"},
      {.name = "--gpu", .meta = "N", .kind = TC_OPT_INT, .dst = &p->gpu, .hi = 1023,
       .help = "CUDA device index, 0..visible devices - 1 (default: the\n"
               "node-local rank mod the visible devices, so mpirun's ranks\n"
               "spread over a node's GPUs); not with --device cpu"},
      {.name = "--nccl", .kind = TC_OPT_SWITCH, .dst = &p->nccl,
       .help = "CUDA: sum the gradients with NCCL even in one process, as\n"
               "W ranks do (to time its overhead; on with mpirun -np W > 1)"},
      {.name = "--threads", .meta = "T", .kind = TC_OPT_U32, .dst = &p->threads, .lo = 1, .hi = 64,
       .help = "loader decode threads, 1..64 (default {})"},
      {.name = "--cpu-threads", .meta = "T", .kind = TC_OPT_U32, .dst = &p->cpu_threads, .lo = 1, .hi = 64,
       .help = "CPU backend compute threads, 1..64; results do not depend\n"
               "on it (default: online cores)"},
      {.name = "--seed", .meta = "S", .kind = TC_OPT_U64, .dst = &p->seed, .hi = UINT64_MAX,
       .help = "model init and shuffle seed (default {})"},
      {.name = "--eval-every", .meta = "E", .kind = TC_OPT_U64, .dst = &p->eval_every, .hi = UINT32_MAX,
       .help = "evaluate every E steps (default 0 = steps/5) and at the end"},
      {.name = "--checkpoint", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &p->checkpoint,
       .expect = "a file name", .help = "write a checkpoint at every evaluation and at the end"},
      {.name = "--checkpoint-every", .meta = "K", .kind = TC_OPT_U64, .dst = &p->checkpoint_every,
       .hi = UINT32_MAX, .help = "also/instead every K steps (default 0 = with evaluations)"},
      {.name = "--stop-after", .meta = "K", .kind = TC_OPT_U64, .dst = &p->stop_after, .hi = UINT32_MAX,
       .help = "stop after K steps of this run (checkpoint written), as\n"
               "if interrupted; --resume continues (default 0 = off)"},
      {.name = "--resume", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &p->resume,
       .expect = "a file name",
       .help = "continue from a checkpoint: model, AdamW moments and the\n"
               "loader's state (same flags reproduce the uninterrupted\n"
               "run exactly on the CPU; see 'on --resume')"},
      {.name = "--log", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &p->log, .expect = "a file name",
       .help = "metrics CSV: one row per step (eval columns on eval steps)"},
      {.name = "--batch-log", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &p->batch_log,
       .expect = "a file name",
       .help = "CSV of the batches trained on, one row per step:\n"
               "step,epoch,seq,graph ids (space-separated; with --mix\n"
               "source:index, source 0 = the first cache)"},
      {.name = "--sync-copies", .kind = TC_OPT_SWITCH, .dst = &p->sync_copies,
       .help = "CUDA: copy then compute, no overlap (for comparison)"},
      {.name = "--bench-h2d", .kind = TC_OPT_SWITCH, .dst = &p->bench_h2d,
       .help = "CUDA: time a plain pinned cudaMemcpy of one batch slab, exit"},
      {.name = "--json", .kind = TC_OPT_SWITCH, .dst = &p->json,
       .help = "print one JSON summary object on stdout (text to stderr)"},
      {.name = "--quiet", .kind = TC_OPT_SWITCH, .dst = &p->quiet, .help = "no learning-curve lines"},
      {.name = "--help", .kind = TC_OPT_SWITCH, .help = "this text"},
  };
  _Static_assert(sizeof t / sizeof t[0] <= N_TRAIN_OPTS, "N_TRAIN_OPTS too small");
  memcpy(o, t, sizeof t);
  return sizeof t / sizeof t[0];
}

static void defaults(opts *o) {
  memset(o, 0, sizeof *o);
  o->val_split = 0.1, o->batch = 32, o->threads = 2, o->steps = 1000, o->warmup = 50, o->resample_every = 1;
  o->suite_version = 1;
  o->seed = 1, o->lr = 3e-3, o->weight_decay = 1e-4, o->pos_weight = 1.0, o->device = DEV_AUTO;
  o->gpu = -1;
}

static void usage(FILE *f) {
  opts d;
  tc_opt t[N_TRAIN_OPTS];
  defaults(&d);
  size_t n = train_opts(&d, t);
  fprintf(f, "usage: " PROG " --cache DIR [options]\n"
             "Trains the twin-world edge model (train/MODEL.md) on a twincache cache.\n");
  tc_args_help(f, t, n, 25);
  fprintf(f,
          "on --resume: the checkpoint (version 3) holds the model, the AdamW moments, the\n"
          "  step, the train loader's 64-byte state (position in the stream, shuffle seed,\n"
          "  batch size, index range, rank/world, the cache's identity) and how its worlds are\n"
          "  drawn (--fresh-rows, --resample-every), so the resumed run\n"
          "  trains on exactly the batches the uninterrupted run would have. --steps, --lr,\n"
          "  --warmup, --weight-decay, --pos-weight, --eval-every, --checkpoint,\n"
          "  --checkpoint-every, --stop-after, --log, --batch-log, --device, --threads,\n"
          "  --cpu-threads and the output flags may differ from the checkpoint's run (the\n"
          "  values in effect are printed in one line); the global batch (--batch x ranks),\n"
          "  --seed, --val-split, --fresh-rows, --resample-every and the cache may not\n"
          "  (refused with exit 1, naming the flag or the loader-state field): they fix\n"
          "  the batch stream. A damaged, truncated or older-version checkpoint is\n"
          "  refused with exit 1 and one line naming the file and the fault. Checkpoints are\n"
          "  written to FILE.tmp, flushed, then renamed over FILE: a crash leaves the old one.\n"
          "cuda: the backend is linked into a build made with nvcc, or loaded at run time\n"
          "  from libtwincache_cuda.so beside the program or in ../lib/twincache (the\n"
          "  portable wheel's; $TWINCACHE_CUDA_PLUGIN names another file); without a usable\n"
          "  GPU --device auto trains on the CPU and says why.\n"
          "data parallel: mpirun -np W " PROG " ... runs W ranks (MPI linked, or loaded at\n"
          "  run time under a launcher: $TWINCACHE_MPI_LIBRARY, else libmpi.so.40,\n"
          "  libmpich.so.12 or libmpi.so.12): rank r takes every W-th batch of the stream,\n"
          "  the gradients are combined every step\n"
          "  (CPU: MPI_Allreduce; CUDA: ncclAllReduce on the device, NCCL loaded at run\n"
          "  time: libnccl.so.2, or $TWINCACHE_NCCL_LIBRARY) so W ranks at --batch B train\n"
          "  as one process at --batch W*B; each rank uses GPU (node-local rank mod visible\n"
          "  GPUs) unless --gpu; rank 0 alone logs, evaluates and checkpoints; a rank that\n"
          "  fails ends the job. A checkpoint of W ranks at --batch B\n"
          "  resumes at any W' ranks with --batch B*W/W' (the same global batch and\n"
          "  graphs per step; refused when W' does not divide B*W).\n"
          "exit status: 0 done (also after --stop-after), 1 runtime error (cache, checkpoint,\n"
          "  device, I/O), 2 usage error (one line naming the flag and what it accepts).\n");
}

static int given(int argc, char **argv, const char *flag) {
  size_t n = strlen(flag);
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], flag) || (!strncmp(argv[i], flag, n) && argv[i][n] == '=')) return 1;
  return 0;
}

/* --mix DIR=W,...: cut into o->mix_path/mix_weight; cache = the first
 * path. Prints one line and returns 1 on a bad value or combination. */
static int train_flags_mix(opts *o, int argc, char **argv) {
  if (o->cache) {
    fprintf(stderr, PROG ": --mix: not with --cache (the mixture's caches are its sources) (see --help)\n");
    return 1;
  }
  if (strlen(o->mix) >= sizeof o->mix_text) {
    fprintf(stderr, PROG ": --mix: value longer than %zu bytes\n", sizeof o->mix_text - 1);
    return 1;
  }
  strcpy(o->mix_text, o->mix);
  char *item = o->mix_text;
  for (;;) {
    char *comma = strchr(item, ',');
    if (comma) *comma = '\0';
    if (o->mix_n == TC_TRAIN_MIX_MAX) {
      fprintf(stderr, PROG ": --mix: more than %d caches\n", TC_TRAIN_MIX_MAX);
      return 1;
    }
    char *eq = strrchr(item, '=');
    double w = 1.0;
    if (eq) {
      char *end = NULL;
      *eq = '\0';
      w = strtod(eq + 1, &end);
      if (end == eq + 1 || *end != '\0' || !(w > 0) || w > 1e9) {
        fprintf(stderr, PROG ": --mix: cache %u (%s): weight '%s' is not a number in (0, 1e9]\n",
                o->mix_n + 1, item, eq + 1);
        return 1;
      }
    }
    if (item[0] == '\0') {
      fprintf(stderr, PROG ": --mix: cache %u has an empty path (DIR=W,DIR=W,...)\n", o->mix_n + 1);
      return 1;
    }
    o->mix_path[o->mix_n] = item, o->mix_weight[o->mix_n] = w, o->mix_n++;
    if (!comma) break;
    item = comma + 1;
  }
  if (o->mix_n < 2) {
    fprintf(stderr, PROG ": --mix: one cache (%s); a mixture needs 2..%d, one cache is --cache DIR\n",
            o->mix_path[0], TC_TRAIN_MIX_MAX);
    return 1;
  }
  if (given(argc, argv, "--val-split")) {
    fprintf(stderr, PROG ": --val-split: not with --mix (a mixture reads its caches whole; validate with "
            "--val-cache DIR) (see --help)\n");
    return 1;
  }
  if (o->local_nodes) {
    fprintf(stderr, PROG ": --local-nodes: not with --mix (local mode reads one set) (see --help)\n");
    return 1;
  }
  o->cache = o->mix_path[0], o->val_split = 0;
  return 0;
}

int train_flags_parse(int argc, char **argv, opts *o) {
  tc_opt t[N_TRAIN_OPTS];
  tc_args_error e;
  defaults(o);
  size_t n = train_opts(o, t);
  if (tc_args_parse(argc, argv, t, n, &e) != TC_ARGS_OK) {
    if (e.status == TC_ARGS_HELP) usage(stdout);
    return tc_args_report(stderr, PROG, &e);
  }
  if (o->mix && train_flags_mix(o, argc, argv) != 0) return 2;
  if (!o->cache && !o->predict_only) {
    fprintf(stderr, PROG ": --cache: required flag missing (only --predict-only goes without it) (see "
            "--help)\n");
    return 2;
  }
  if (!o->cache && o->local_nodes) {
    fprintf(stderr, PROG ": --local-nodes: needs --cache (it splits the training set; --predict-only "
            "without --cache reads --val-cache whole) (see --help)\n");
    return 2;
  }
  if (o->val_cache) { /* validation moves to the second cache: no held-out tail */
    if (given(argc, argv, "--val-split")) {
      fprintf(stderr, PROG ": --val-split: not with --val-cache (all of --cache is trained on, "
              "--val-cache validated on) (see --help)\n");
      return 2;
    }
    o->val_split = 0;
  }
  if (o->local_nodes && !o->val_cache) {
    fprintf(stderr, PROG ": --local-nodes: needs --val-cache DIR (a node holds only its shards, so no tail "
            "of the set can be held out for validation) (see --help)\n");
    return 2;
  }
  if (o->val_withhold && !o->val_cache) {
    fprintf(stderr, PROG ": --val-withhold-targets: needs --val-cache DIR (see --help)\n");
    return 2;
  }
  if (o->predict && !o->val_cache) {
    fprintf(stderr, PROG ": --predict: needs --val-cache DIR, the suite cell to predict on (see "
            "--help)\n");
    return 2;
  }
  if (o->predict_only && (!o->resume || !o->predict)) {
    fprintf(stderr, PROG ": --predict-only: needs --resume CKPT (the model) and --predict FILE (see "
            "--help)\n");
    return 2;
  }
  if ((o->gpu >= 0 || o->nccl) && o->device == DEV_CPU) {
    fprintf(stderr, PROG ": %s: the CUDA backend's, not with --device cpu (see --help)\n",
            o->gpu >= 0 ? "--gpu" : "--nccl");
    return 2;
  }
  if (o->resample_every != 1 && !o->fresh_rows) {
    fprintf(stderr, PROG ": --resample-every: needs --fresh-rows (stored worlds are the same every "
            "epoch) (see --help)\n");
    return 2;
  }
  if (o->cpu_threads == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    o->cpu_threads = c < 1 ? 1 : (c > 64 ? 64 : (uint32_t)c);
  }
  if (o->eval_every == 0) o->eval_every = o->steps / 5 ? o->steps / 5 : 1;
  return -1;
}

void train_flags_print_resumable(FILE *text, const opts *o) {
  fprintf(text,
          "resume: this run uses --steps %" PRIu64 " --lr %g --warmup %" PRIu64
          " --weight-decay %g --pos-weight %g --eval-every %" PRIu64 " --checkpoint-every %" PRIu64
          " --stop-after %" PRIu64 " --log %s --batch-log %s --checkpoint %s (these may differ from the "
          "checkpoint's run; --batch %u per rank --seed %" PRIu64 " --val-split %g match it)\n",
          o->steps, o->lr, o->warmup, o->weight_decay, o->pos_weight, o->eval_every,
          o->checkpoint_every, o->stop_after, o->log ? o->log : "(none)",
          o->batch_log ? o->batch_log : "(none)", o->checkpoint ? o->checkpoint : "(none)",
          o->batch, o->seed, o->val_split);
}

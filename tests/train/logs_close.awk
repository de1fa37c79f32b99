# logs_close.awk: two --log CSVs of the same steps pasted side by side
# (`paste -d,`, headers dropped; columns step, train_loss, lr, val_loss,
# val_auroc, val_auprc, val_shd, baseline_auprc, then the second run's).
# Fails unless both have the same steps, `rows` of them, and every value is
# within 1e-5 relative (empty = not evaluated, on both sides); prints the
# largest relative difference after `name`.
# Usage: paste -d, A B | awk -F, -v rows=50 -v name="..." -f logs_close.awk
{ n++
  if ($1 != $9) { printf "FAIL: row %d: step %s against step %s\n", n, $1, $9; bad = 1 }
  for (k = 2; k <= 8; k++) {
    if ($k == "" && $(k + 8) == "") continue
    d = $k - $(k + 8); if (d < 0) d = -d
    s = $k < 0 ? -$k : $k
    if (d > 1e-5 * s) { printf "FAIL: step %s column %d: %s against %s\n", $1, k, $k, $(k + 8); bad = 1 }
    if (d / (s > 0 ? s : 1) > worst) worst = d / (s > 0 ? s : 1)
  } }
END { if (n != rows) { print "FAIL: " n " rows, want " rows; exit 1 }
      printf "%s: %d steps, largest relative difference %.3g\n", name, n, worst; exit bad }

"""ctest entry point of the binding's tests: exit 77 (skipped) when numpy,
torch or pytest is missing from this interpreter, pytest's own status
otherwise (5, "no tests collected", counts as a failure: the suite exists)."""
import importlib.util
import sys

missing = [m for m in ("numpy", "torch", "pytest") if importlib.util.find_spec(m) is None]
if missing:
    print(f"skipped: {sys.executable} lacks {', '.join(missing)} "
          f"(install python3-numpy python3-torch python3-pytest: tools/install-deps.sh)")
    sys.exit(77)

import pytest  # noqa: E402

rc = pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]])
if rc == 5:
    print("run_pytest: pytest collected no tests")
    rc = 1
sys.exit(int(rc))

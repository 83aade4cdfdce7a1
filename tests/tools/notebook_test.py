"""docs/notebooks/example.ipynb runs from top to bottom without an error and draws its two figures (executed
with nbclient in a Jupyter kernel, as a reader would run it; nothing is written back to the notebook).

Skipped, saying why, without nbclient, nbformat or ipykernel (Debian: python3-nbclient, python3-nbformat,
python3-ipykernel) or without the simulator (build/rocesim or $ROCESIM_BIN)."""

import importlib.util
import os
import shutil
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(REPO, "docs", "notebooks", "example.ipynb")
sys.path.insert(0, os.path.join(REPO, "python"))
import rocesim  # noqa: E402


def missing():
    """Why the notebook cannot run here ("" when it can)."""
    absent = [m for m in ("nbformat", "nbclient", "ipykernel") if importlib.util.find_spec(m) is None]
    if absent:
        return f"{', '.join(absent)} not installed (Debian: " + ", ".join(f"python3-{m}" for m in absent) + ")"
    try:
        rocesim.find_binary()
    except rocesim.RocesimError as e:
        return str(e)
    return ""


WHY = missing()
if WHY:
    print(f"notebook_test: skipping docs/notebooks/example.ipynb: {WHY}", file=sys.stderr)


@unittest.skipIf(WHY, WHY)
class ExampleNotebook(unittest.TestCase):
    def test_runs_and_draws_its_figures(self):
        import nbclient
        import nbformat

        nb = nbformat.read(NOTEBOOK, as_version=4)
        self.assertTrue(all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"),
                        "the notebook is kept without outputs")
        # The runs' temporary directories go under a directory of this test's own.
        tmp = tempfile.mkdtemp(prefix="rocesim_notebook_test_")
        self.addCleanup(shutil.rmtree, tmp, True)
        # (The kernel's debugger, debugpy, warns about frozen modules on stderr unless told not to.)
        env = {"TMPDIR": tmp, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            t0 = time.time()
            nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                    resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}}).execute()
            wall = time.time() - t0
        finally:
            for k, v in old.items():
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        self.assertFalse([o for o in outputs if o.output_type == "error"])
        images = [o for o in outputs if "image/png" in o.get("data", {})]
        self.assertEqual(len(images), 2)
        text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
        self.assertIn("dcqcn", text)
        self.assertIn("none", text)
        self.assertIn("scheme=none,load=0.4", text)
        self.assertEqual(os.listdir(tmp), [], "the notebook removes its runs")
        self.assertLess(wall, 60)


if __name__ == "__main__":
    unittest.main(verbosity=1)

# The Python end-to-end suites (Tests/intake, Tests/client, ...) share Tests/support.
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "support"))

"""`not CMD...`: succeed when CMD fails with an ordinary error, fail when it succeeds
or crashes (a signal), as LLVM's `not` does."""
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
sys.exit(0 if rc > 0 else 1)

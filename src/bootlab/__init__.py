"""bootlab: make embedded Linux boot fast, and run predictably."""

import os

__version__ = "0.1.0"

# bootlab's numpy does no linear algebra, but numpy's import starts a pool of OpenBLAS
# threads (one per CPU) that spin while they wait: 0.06-0.1 s of CPU in every run that
# loads numpy.  One thread unless the user asks for more.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

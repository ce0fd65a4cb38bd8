"""`python -m mmcritic.cli`, the form `accelerate launch -m mmcritic.cli train RECIPE` needs.

A rank of a launched run leaves without the interpreter's teardown. Its work is written and its
process group destroyed by then (`mmcritic.cli.leave_process_group`), but at teardown the C++
threads of Gloo and DeepSpeed can still abort a finished rank ("terminate called without an
active exception", SIGABRT), and the launcher then kills the other ranks and reports the run as
failed. A single process ends as usual.
"""

import logging
import os
import sys

from mmcritic.cli import main

code = main()
if int(os.environ.get("WORLD_SIZE", "1")) > 1:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
raise SystemExit(code)

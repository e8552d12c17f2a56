"""Exit 0 when `import torchtpu` (from a neutral directory) finds the tree given as argv[1], else 1.

make's install step uses it: an editable install made from another clone, since moved or deleted, is still listed
by pip but imports nothing, so it must be redone."""
import importlib.util
import os
import sys

spec = importlib.util.find_spec("torchtpu")
root = os.path.realpath(sys.argv[1])
sys.exit(0 if spec and spec.origin and os.path.realpath(spec.origin).startswith(os.path.join(root, "torchtpu", "")) else 1)

"""headwater's start-up hook, run by Python because its directory is on PYTHONPATH.

Put there by ``headwater instrument`` (or by a cluster definition, with
``HEADWATER_INSTRUMENT=1``). It installs the lazy SparkSession hook, then runs
the ``sitecustomize`` this one shadows, if any, so the environment's own
start-up customisation still happens. It never raises.
"""

import os
import sys


def _run_shadowed_sitecustomize() -> None:
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    saved_path = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception:  # the other sitecustomize failed; Python would only have warned too
        pass
    finally:
        sys.path[:] = saved_path
        if ours is not None:
            sys.modules["sitecustomize"] = ours


def _install() -> None:
    if os.environ.get("HEADWATER_INSTRUMENT", "").strip().lower() not in ("1", "true", "yes"):
        return
    try:
        # Cheap: these packages import only the standard library; PySpark is
        # imported by the program itself, if ever, and only then hooked.
        from headwater.agent.instrument import maybe_install

        maybe_install()
    except Exception:  # headwater missing from this interpreter: run the program untouched
        pass


_install()
_run_shadowed_sitecustomize()

"""The one sentence a retriever module raises when its framework is not installed."""
from __future__ import annotations


def missing_extra(exc: ModuleNotFoundError, module: str, extra: str) -> ModuleNotFoundError:
    """The error for ``module`` when importing its framework failed with ``exc``: names the
    missing package and the extra that installs it."""
    missing = (exc.name or "").split(".")[0]
    return ModuleNotFoundError(f"{module} needs the {extra} extra ({missing} is missing): "
                               f"pip install 'kgstore[{extra}]'", name=exc.name)

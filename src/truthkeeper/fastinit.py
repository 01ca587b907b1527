"""A faster ``__init__`` for the frozen, slotted dataclasses a bulk load and every read
build by the thousand (:class:`~truthkeeper.values.Fact` and the results around it)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["quick_init"]

_MISSING = object()
_C = TypeVar("_C")


def quick_init(cls: type[_C]) -> type[_C]:
    """Give a frozen, slotted dataclass an ``__init__`` that stores each field through its
    slot's descriptor: the generated one goes through ``object.__setattr__`` per field
    (a Fact of 16 fields: 3.2 -> 1.5 us; a bulk load and every read build many). The
    signature, defaults, factories and keyword-only fields are the dataclass's; the class
    stays frozen (assignment raises ``FrozenInstanceError``).

    >>> @quick_init
    ... @dataclasses.dataclass(frozen=True, slots=True)
    ... class P:
    ...     x: int
    ...     tags: dict = dataclasses.field(default_factory=dict)
    ...     _: dataclasses.KW_ONLY
    ...     y: int = 2
    >>> P(1), P(1, {"a": 1}, y=3) == P(x=1, tags={"a": 1}, y=3), P(1).tags is not P(1).tags
    (P(x=1, tags={}, y=2), True, True)
    """
    fs = list(dataclasses.fields(cls))  # type: ignore[arg-type]
    if any(not f.init for f in fs) or hasattr(cls, "__post_init__"):
        msg = f"quick_init does not handle {cls.__name__}'s fields"
        raise TypeError(msg)
    ns: dict[str, Any] = {"_MISSING": _MISSING}
    params: list[str] = []
    kw: list[str] = []
    body: list[str] = []
    for f in fs:
        ns[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            ns[f"_d_{f.name}"] = f.default
            p = f"{f.name}=_d_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_f_{f.name}"] = f.default_factory
            p = f"{f.name}=_MISSING"
            body.append(f"    if {f.name} is _MISSING: {f.name} = _f_{f.name}()")
        else:
            p = f.name
        (kw if f.kw_only else params).append(p)
        body.append(f"    _set_{f.name}(self, {f.name})")
    sig = ", ".join(["self", *params, *(["*", *kw] if kw else [])])
    exec(f"def __init__({sig}):\n" + "\n".join(body), ns)  # noqa: S102 - names only
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = cls.__init__.__annotations__
    init.__signature__ = inspect.signature(cls.__init__)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls



"""The ``shortName`` nsys stores beside a kernel's demangled name."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=8192)
def kernel_short_name(demangled: str) -> str:
    """nsys's ``shortName`` for a demangled kernel name: the function's base name.

    ``void at::native::vectorized_elementwise_kernel<4, ...>(int, T2, T3)`` ->
    ``vectorized_elementwise_kernel``; plain C names (``nvjet_...``) come back unchanged.
    """
    # Cut at the top-level '(' that opens the parameter list.
    stack: list[str] = []
    end = len(demangled)
    for i, ch in enumerate(demangled):
        if ch in "<([":
            # The parameter list follows the name (`(anonymous namespace)` does not).
            if (
                ch == "("
                and not stack
                and i > 0
                and (demangled[i - 1].isalnum() or demangled[i - 1] in "_>]")
            ):
                end = i
                break
            stack.append(ch)
        elif ch == ">":
            if stack and stack[-1] == "<":
                stack.pop()
        elif ch in ")]":
            opener = "(" if ch == ")" else "["
            while stack and stack.pop() != opener:
                pass
    head = demangled[:end].rstrip()
    # Drop trailing template arguments.
    if head.endswith(">"):
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            if head[i] == ">":
                depth += 1
            elif head[i] == "<":
                depth -= 1
                if depth == 0:
                    head = head[:i]
                    break
    # Last top-level space separates the return type; last '::' the namespaces.
    depth = 0
    cut = 0
    for i, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            cut = i + 1
    head = head[cut:]
    return head.rsplit("::", 1)[-1] or demangled

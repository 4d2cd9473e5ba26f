"""Splits a load_inline CUDA source into a device part (kernels, no torch headers, for nvcc) and a host part
(the torch::Tensor wrappers, for the C++ compiler with a precompiled torch header), for split_build.py.

Each part is the original text with the other part's code blanked line for line, so a compiler message
points at the line the author wrote. Each kernel gets a launcher: defined in the device part right after the
kernel (on its closing line), declared in the host part where the kernel was; the host's `k<<<cfg>>>(args)`
becomes a call of that launcher. Both calls convert their arguments to the kernel's parameter types the same
way, so the program is the author's.

What it cannot split raises Unsplittable with the reason (the build falls back to load_inline as written):
templated kernels, launches it cannot rewrite, host code that touches device symbols other than by
launching them, device code that needs torch's headers, CUTLASS/CuTe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TORCH_INCLUDE = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|pybind11|THC)/')
HEAVY_INCLUDE = re.compile(r'#\s*include\s*[<"](cutlass|cute|cub|thrust)/')
TORCH_NAMES = re.compile(r"\b(torch|at|c10|pybind11|py)::|\bTORCH_\w+|\bAT_\w+|\bC10_\w+")
DEVICE_WORDS = re.compile(r"\b(__device__|__constant__|__shared__|__managed__)\b")
HOST_ONLY_USING = re.compile(r"^\s*using\s+namespace\s+(torch|at|c10|pybind11|py)\b")
TYPE_WORDS = re.compile(r"^\s*(?:template\s*<[^{;]*>\s*)?(?:typedef|using|struct|class|union|enum|static_assert)\b")
IDENT = re.compile(r"[A-Za-z_]\w*")
LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*<<<")
PREFIX = "kforge_launch_"


class Unsplittable(Exception):
    """The reason the fast path does not apply to this source."""


@dataclass
class Item:
    kind: str  # "pp" (preprocessor line), "decl" (a declaration or definition), "ns_open", "ns_close"
    start: int
    end: int
    header: str = ""  # a declaration's text before its body


@dataclass
class Kernel:
    name: str
    params: list[tuple[str, str]]  # (declaration, name)
    end: int  # offset just past the kernel's closing brace


@dataclass
class Split:
    device: str  # for nvcc: kernels, their helpers, launchers; no torch headers
    host: str  # for the C++ compiler: the wrappers, kernel launches rewritten
    kernels: list[str] = field(default_factory=list)


# -- scanning ---------------------------------------------------------------------------------------------

def _skip_literal(src: str, i: int) -> int:
    """Index past the comment, string or char literal at i (i itself when there is none)."""
    if src.startswith("//", i):
        j = src.find("\n", i)
        return len(src) if j < 0 else j
    if src.startswith("/*", i):
        j = src.find("*/", i + 2)
        return len(src) if j < 0 else j + 2
    m = re.match(r'R"([^(\s]*)\(', src[i:i + 20])
    if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
        j = src.find(")" + m.group(1) + '"', i)
        return len(src) if j < 0 else j + len(m.group(1)) + 2
    if src[i] in "\"'":
        if src[i] == "'" and i > 0 and src[i - 1].isalnum():  # a digit separator (1'000), not a char literal
            return i
        q, j = src[i], i + 1
        while j < len(src) and src[j] != q and src[j] != "\n":
            j += 2 if src[j] == "\\" else 1
        return j + 1
    return i


def _match(src: str, i: int, open_: str, close: str) -> int:
    """Index past the bracket that closes the one at i."""
    depth = 0
    while i < len(src):
        j = _skip_literal(src, i)
        if j != i:
            i = j
            continue
        c = src[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise Unsplittable(f"unbalanced '{open_}'")


def _code(text: str) -> str:
    """The text with comments and literals blanked (for searching names)."""
    out, i = [], 0
    while i < len(text):
        j = _skip_literal(text, i)
        if j != i:
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def top_level_items(src: str, start: int = 0, end: int | None = None) -> list[Item]:
    """Preprocessor lines and declarations at namespace scope; named namespaces are opened and walked."""
    end = len(src) if end is None else end
    items, i = [], start
    while i < end:
        j = _skip_literal(src, i)
        if j != i:
            i = j
            continue
        c = src[i]
        if c.isspace() or c == ";":
            i += 1
            continue
        if c == "#":
            j = i
            while True:
                nl = src.find("\n", j)
                if nl < 0 or nl >= end:
                    nl = end
                    break
                if src[nl - 1] != "\\":
                    break
                j = nl + 1
            items.append(Item("pp", i, nl))
            i = nl
            continue
        # a declaration: up to ';' at depth 0, or a body '{...}' (then ';' too for types and initialisers)
        j = i
        while j < end:
            k = _skip_literal(src, j)
            if k != j:
                j = k
                continue
            ch = src[j]
            if ch in "([":
                j = _match(src, j, ch, ")" if ch == "(" else "]")
                continue
            if ch == ";":
                items.append(Item("decl", i, j + 1, src[i:j]))
                j += 1
                break
            if ch == "{":
                header = src[i:j]
                close = _match(src, j, "{", "}")
                hcode = _code(header)
                if re.match(r"\s*(inline\s+)?namespace\b", hcode) or re.match(r'\s*extern\s+"C(\+\+)?"\s*$', hcode):
                    items.append(Item("ns_open", i, j + 1, header))
                    items += top_level_items(src, j + 1, close - 1)
                    items.append(Item("ns_close", close - 1, close))
                    j = close
                    break
                if TYPE_WORDS.match(hcode) or re.search(r"=\s*$", hcode):
                    semi = src.find(";", close)
                    j = (semi + 1) if semi >= 0 else close
                else:
                    j = close
                items.append(Item("decl", i, j, header))
                break
            j += 1
        else:
            items.append(Item("decl", i, end, src[i:end]))
        i = j
    return items


# -- kernels ----------------------------------------------------------------------------------------------

def _params(text: str) -> list[tuple[str, str]]:
    inner = text.strip()
    if inner in ("", "void"):
        return []
    out = []
    for p in _top_level_commas(inner, "(<[{", ")>]}"):  # template arguments hold commas too
        decl = p.split("=")[0].strip()
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", decl)
        words = IDENT.findall(decl)
        if not m or len(words) < 2 or m.group(1) in ("const", "int", "float", "double", "unsigned", "char", "long",
                                                      "short", "bool", "__restrict__", "volatile"):
            raise Unsplittable(f"a kernel parameter without a name ({decl!r})")
        if m.group(2):
            raise Unsplittable(f"a kernel parameter declared as an array ({decl!r})")
        out.append((decl, m.group(1)))
    return out


def _kernel(src: str, item: Item) -> Kernel:
    header = _code(item.header)
    if re.match(r"\s*template\b", header):
        raise Unsplittable("a templated __global__ kernel (its instantiations are chosen in host code)")
    at = header.index("__global__")
    m = next((m for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", header[at:])
              if m.group(1) not in ("__launch_bounds__", "__align__", "__attribute__", "__declspec")), None)
    if not m:
        raise Unsplittable("a __global__ declaration it cannot read")
    name, open_ = m.group(1), at + m.end() - 1
    close = _match(header, open_, "(", ")")
    if src[item.end - 1] != "}":
        raise Unsplittable(f"kernel {name} is declared apart from its definition")
    return Kernel(name, _params(header[open_ + 1:close - 1]), item.end)


# -- the split --------------------------------------------------------------------------------------------

def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _side(src: str, item: Item) -> str:
    """'device', 'host' or 'both'."""
    text = _code(src[item.start:item.end])
    if item.kind == "pp":
        if TORCH_INCLUDE.search(src[item.start:item.end]):
            return "host"
        if HEAVY_INCLUDE.search(src[item.start:item.end]):
            raise Unsplittable("CUTLASS, CuTe, CUB or Thrust headers (they need nvcc on both sides)")
        return "both"
    if item.kind in ("ns_open", "ns_close"):
        return "both"
    head = _code(item.header)
    if "__global__" in head or DEVICE_WORDS.search(head):
        return "device"
    if HOST_ONLY_USING.match(text):
        return "host"
    if TYPE_WORDS.match(head):
        return "host" if TORCH_NAMES.search(text) else "both"
    if re.match(r"\s*(static\s+)?(constexpr|const)\b", head) and "(" not in head.split("=")[0]:
        return "host" if TORCH_NAMES.search(text) else "both"
    return "host"


def split(source: str) -> Split:
    src = source
    items = top_level_items(src)
    device, host = list(src), list(src)

    def blank(buf, it):
        buf[it.start:it.end] = list(_blank(src[it.start:it.end]))

    kernels: list[Kernel] = []
    device_names: set[str] = set()
    for it in items:
        if it.kind == "ns_open" and re.match(r"\s*namespace\s*$", _code(it.header)):
            # an anonymous namespace would give each part its own launchers: open it in both (external linkage)
            for buf in (device, host):
                buf[it.start:it.end] = list(_blank(src[it.start:it.end]))
            it.kind = "anon_open"
            continue
        side = _side(src, it)
        if side == "device":
            head = _code(it.header)
            if TORCH_NAMES.search(_code(src[it.start:it.end])):
                raise Unsplittable("device code uses torch/ATen/c10 names (it needs torch's headers)")
            if "__global__" in head:
                kernels.append(_kernel(src, it))
                device_names.add(kernels[-1].name)
            else:
                m = re.findall(r"([A-Za-z_]\w*)\s*(?:\(|\[|=|;|$)", head)
                device_names.update(m[:1])
            blank(host, it)
        elif side == "host":
            blank(device, it)
    # the closing brace of an anonymous namespace: find the ns_close that pairs with each anon_open
    stack = []
    for it in items:
        if it.kind in ("ns_open", "anon_open"):
            stack.append(it)
        elif it.kind == "ns_close":
            opened = stack.pop()
            if opened.kind == "anon_open":
                device[it.start:it.end] = [" "]
                host[it.start:it.end] = [" "]

    host_text = "".join(host)
    host_code = _code(host_text)
    kernel_names = {k.name for k in kernels}
    for name in sorted(device_names - kernel_names):
        if re.search(rf"\b{re.escape(name)}\b", host_code):
            raise Unsplittable(f"host code uses device symbol {name}")
    for name in sorted(kernel_names):
        uses = len(re.findall(rf"\b{re.escape(name)}\b", host_code))
        launches = len(re.findall(rf"\b{re.escape(name)}\s*<<<", host_code))
        if uses != launches:
            raise Unsplittable(f"host code uses kernel {name} other than by launching it")
    if "<<<" in host_code and len(re.findall("<<<", host_code)) != len(LAUNCH.findall(host_code)):
        raise Unsplittable("a kernel launch it cannot rewrite (template arguments or an expression)")

    # launchers: defined after each kernel (same line), declared where the kernel was in the host part
    for k in sorted(kernels, key=lambda k: -k.end):
        params = "".join(", " + d for d, _ in k.params)
        args = ", ".join(n for _, n in k.params)
        sig = f"void {PREFIX}{k.name}(dim3 kforge_grid, dim3 kforge_block, size_t kforge_shmem, cudaStream_t kforge_stream{params})"
        device.insert(k.end, f" {sig} {{ {k.name}<<<kforge_grid, kforge_block, kforge_shmem, kforge_stream>>>({args}); }}")
        host.insert(k.end, f" {sig};")
    host_text = _rewrite_launches("".join(host), kernel_names)
    return Split("".join(device), host_text, [k.name for k in kernels])


def _rewrite_launches(text: str, kernels: set[str]) -> str:
    code = _code(text)
    out, last = [], 0
    for m in LAUNCH.finditer(code):
        name = m.group(1)
        if name not in kernels:
            raise Unsplittable(f"a launch of {name}, which is not a kernel of this source")
        cfg_start = m.end()
        cfg_end = code.find(">>>", cfg_start)
        if cfg_end < 0:
            raise Unsplittable("an unterminated <<<")
        cfg = _top_level_commas(text[cfg_start:cfg_end])
        if not 2 <= len(cfg) <= 4:
            raise Unsplittable(f"a launch of {name} with {len(cfg)} configuration arguments")
        j = cfg_end + 3
        while j < len(code) and code[j].isspace():
            j += 1
        if j >= len(code) or code[j] != "(":
            raise Unsplittable(f"a launch of {name} without arguments")
        close = _match(code, j, "(", ")")
        args = text[j + 1:close - 1]
        shmem = cfg[2] if len(cfg) > 2 else "0"
        stream = cfg[3] if len(cfg) > 3 else "0"
        call = (f"{PREFIX}{name}(dim3({cfg[0].strip()}), dim3({cfg[1].strip()}), static_cast<size_t>({shmem.strip()}), "
                f"static_cast<cudaStream_t>({stream.strip()}){', ' + args if args.strip() else ''})")
        lost = text[m.start():close].count("\n") - call.count("\n")  # keep the line count of what it replaces
        out += [text[last:m.start()], call + "\n" * max(lost, 0)]
        last = close
    out.append(text[last:])
    return "".join(out)


def _top_level_commas(text: str, opening: str = "([{", closing: str = ")]}") -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in opening
        depth -= ch in closing
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]

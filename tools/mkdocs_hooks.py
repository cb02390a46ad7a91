"""mkdocs hooks: the parts of the site that are generated at build time, never pasted by hand.

- The examples gallery: `examples/index.md` from examples/README.md, and one page per script
  in examples/ with its docstring, the command that runs it and its full source.
- The performance figures: SVG plots drawn with matplotlib from the benchmarks' JSON output in
  docs/bench/ (`python bench/bench_compile.py --json docs/bench/compile.json`, ...), and the
  tables of performance_figures.md, filled in where the page says `<!-- bench:NAME -->`.

mkdocs.yml names this file under `hooks:`; nothing here is imported by torchjax.
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import pathlib
import re

from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BENCH = ROOT / "docs" / "bench"

COLUMN_NAMES = {"jax": "jax.jit + optax", "torchjax-compiled": "torchjax.compile",
                "torchjax-eager": "torchjax eager", "torch-eager": "PyTorch eager",
                "torch-compile": "torch.compile"}


# ---------------------------------------------------------------- examples gallery

def _example_scripts() -> list[pathlib.Path]:
    return sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def _example_page(path: pathlib.Path) -> str:
    source = path.read_text()
    doc = ast.get_docstring(ast.parse(source)) or path.stem
    title, _, rest = doc.partition("\n")
    lines = [f"# {path.name}", "", f"**{title.strip()}**", "", rest.strip(), "",
             "## The source", "", f"```python title=\"examples/{path.name}\"", source.rstrip(),
             "```", ""]
    return "\n".join(lines)


def _gallery_index() -> str:
    text = (EXAMPLES / "README.md").read_text()
    # the README links to the scripts (`[x](x.py)`); on the site each has its own page
    return re.sub(r"\]\(([\w]+)\.py\)", r"](\1.md)", text)


# ---------------------------------------------------------------- performance figures

def _load(name: str) -> dict:
    path = BENCH / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: the performance figures are drawn from it. Make it with the "
            f"benchmark's --json option (see docs/performance_figures.md).")
    return json.loads(path.read_text())


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    import matplotlib.pyplot as plt
    plt.close(fig)
    return buf.getvalue()


def _pyplot():
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError("the site's performance figures need matplotlib: "
                          'pip install -e ".[docs]"') from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _compile_steady_figure(data: dict) -> str:
    plt = _pyplot()
    steady = {m: r for m, r in data["steady"].items() if r.get("median_s")}
    models = list(steady)
    columns = [c for c in data["columns"] if any(c in r["median_s"] for r in steady.values())]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(len(columns), 1)
    for i, c in enumerate(columns):
        xs = [j + (i - (len(columns) - 1) / 2) * width for j in range(len(models))]
        ys = [steady[m]["median_s"].get(c, float("nan")) * 1e3 for m in models]
        ax.bar(xs, ys, width, label=COLUMN_NAMES.get(c, c))
    ax.set_xticks(range(len(models)), models)
    ax.set_yscale("log")
    ax.set_ylabel("ms per training step (log)")
    ax.set_title("One training step, steady state (lower is better)")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def _compile_dynamic_figure(data: dict) -> str:
    plt = _pyplot()
    dyn = {k: v for k, v in data.get("dynamic", {}).items() if "programs" in v}
    fig, ax = plt.subplots(figsize=(6, 2.8))
    names = list(dyn)
    ax.barh(names, [dyn[k]["programs"] for k in names], color="tab:orange")
    ax.set_xlabel("XLA programs compiled for 8 batch sizes")
    ax.set_title("Changing batch size: programs compiled")
    ax.invert_yaxis()
    return _svg(fig)


def _distributed_figure(data: dict) -> str:
    plt = _pyplot()
    cols = data["columns"]
    names = list(cols)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.barh(names, [cols[k]["ms"] for k in names], color="tab:blue")
    a.set_xlabel("ms per step")
    a.invert_yaxis()
    b.barh(names, [cols[k]["device0_bytes"] / cols[k]["total_bytes"] for k in names],
           color="tab:green")
    b.set_xlabel("share of the state on device 0")
    b.set_yticks(range(len(names)), [""] * len(names))
    b.invert_yaxis()
    fig.suptitle("A training step on 8 virtual CPU devices")
    return _svg(fig)


def _compile_table(data: dict) -> str:
    cols = data["columns"]
    head = "| model | " + " | ".join(COLUMN_NAMES.get(c, c) for c in cols) + " |"
    rows = [head, "|---" * (len(cols) + 1) + "|"]
    for model, r in data["steady"].items():
        cells = []
        for c in cols:
            s = r.get("median_s", {}).get(c)
            cells.append("n/a" if s is None else f"{s * 1e3:.3g} ms ({r['ratio'][c]:.2f}x)")
        rows.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _distributed_table(data: dict) -> str:
    rows = ["| column | ms/step | vs jax | device 0 share | loss at step 1 |",
            "|---|---|---|---|---|"]
    for k, v in data["columns"].items():
        rows.append(f"| {k} | {v['ms']:.2f} | {v['ratio']:.2f}x | "
                    f"{v['device0_bytes'] / v['total_bytes']:.3f} | {v['first_loss']:.6f} |")
    return "\n".join(rows)


def _run_facts(data: dict) -> str:
    facts = [f"jax {data['jax']}" if "jax" in data else None,
             f"PyTorch {data['torch']}" if "torch" in data else None,
             f"{data['cores']} cores" if "cores" in data else None,
             f"{data['rounds']} interleaved rounds" if "rounds" in data else None,
             f"command line `{' '.join(data['argv'])}`" if data.get("argv") else None]
    return ", ".join(f for f in facts if f)


# ---------------------------------------------------------------- op-table API pages

# PyTorch's page for a name, by namespace; a link is made only where docs/coverage.md (made
# from PyTorch's own names by tools/coverage.py) lists the name as present in torchjax
PYTORCH_DOCS = "https://pytorch.org/docs/stable/"
COVERAGE_SECTIONS = {"torchjax": "torch", "torchjax.Tensor": "torch.Tensor",
                     "torchjax.nn.functional": "torch.nn.functional",
                     "torchjax.linalg": "torch.linalg", "torchjax.fft": "torch.fft",
                     "torchjax.special": "torch.special"}


def _pytorch_names() -> dict[str, set[str]]:
    names, section = {}, None
    for line in (ROOT / "docs" / "coverage.md").read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("present:") and section:
            names[section] = set(re.findall(r"`([^`]+)`", line))
    return names


def _pytorch_url(namespace: str, name: str) -> str:
    torch_ns = COVERAGE_SECTIONS[namespace]
    if torch_ns == "torch.special":
        return f"{PYTORCH_DOCS}special.html#torch.special.{name}"
    return f"{PYTORCH_DOCS}generated/{torch_ns}.{name}.html"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipes, links, HTML or emphasis."""
    text = text.replace("\\", "\\\\")
    for ch in "|[]*_<>`":
        text = text.replace(ch, "\\" + ch)
    return text


def _summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split())


def _signature(obj) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return sig if len(sig) <= 90 else sig[:87] + "...)"


def _api_table(namespace: str) -> str:
    import importlib
    import sys
    src = str(ROOT / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    if namespace == "torchjax.Tensor":
        import torchjax
        obj = torchjax.Tensor
        members = {n: getattr(obj, n) for n in dir(obj) if not n.startswith("_")}
    else:
        obj = importlib.import_module(namespace)
        public = getattr(obj, "__all__", None) or [n for n in dir(obj) if not n.startswith("_")]
        members = {n: getattr(obj, n) for n in public if hasattr(obj, n)}
    present = _pytorch_names().get(COVERAGE_SECTIONS[namespace], set())
    rows = {"class": [], "function": [], "other": []}
    for name in sorted(members):
        value = members[name]
        if inspect.ismodule(value):
            continue
        if inspect.isclass(value):
            group, sig = "class", ""
        elif callable(value):
            group, sig = "function", _signature(value)
        else:
            group, sig = "other", ""
        label = f"`{name}`"
        if name in present:
            label = f"[{label}]({_pytorch_url(namespace, name)})"
        if isinstance(value, property) and _summary(value):  # Tensor's properties: their doc
            summary = _cell(_summary(value))
        elif group != "other":
            summary = _cell(_summary(value))
        else:
            summary = f"a `{type(value).__name__}`"
        rows[group].append(f"| {label} | {_cell(sig)} | {summary} |")
    out = []
    titles = {"class": "Classes", "function": "Methods" if namespace == "torchjax.Tensor"
              else "Functions", "other": "Other names"}
    for group in ("function", "class", "other"):
        if rows[group]:
            out += [f"## {titles[group]}", "", "| name | signature | what it does |",
                    "|---|---|---|", *rows[group], ""]
    return "\n".join(out)


# ---------------------------------------------------------------- the hooks

def on_config(config):
    """Lists every example's page under "Examples" in the navigation."""
    pages = [f"examples/{p.stem}.md" for p in _example_scripts()]
    for item in config["nav"]:
        if isinstance(item, dict) and "Examples" in item:
            item["Examples"] = ["examples/index.md", *pages]
    return config


def on_files(files, config):
    """Adds the generated pages and pictures to the site's files."""
    files.append(File.generated(config, "examples/index.md", content=_gallery_index()))
    for p in _example_scripts():
        files.append(File.generated(config, f"examples/{p.stem}.md", content=_example_page(p)))
    compile_data, dist_data = _load("compile"), _load("distributed")
    for name, content in [("compile_steady", _compile_steady_figure(compile_data)),
                          ("compile_dynamic", _compile_dynamic_figure(compile_data)),
                          ("distributed", _distributed_figure(dist_data))]:
        files.append(File.generated(config, f"images/perf/{name}.svg", content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    """Fills the `<!-- bench:NAME -->` markers with tables made from the JSON, and the
    `<!-- api-table:MODULE -->` markers with the module's names, signatures and summaries."""
    markdown = re.sub(r"<!-- api-table:([\w.]+) -->", lambda m: _api_table(m.group(1)),
                      markdown)
    if "<!-- bench:" not in markdown:
        return markdown
    compile_data, dist_data = _load("compile"), _load("distributed")
    fill = {"compile-table": lambda: _compile_table(compile_data),
            "compile-facts": lambda: _run_facts(compile_data),
            "distributed-table": lambda: _distributed_table(dist_data)}
    return re.sub(r"<!-- bench:([\w-]+) -->", lambda m: fill[m.group(1)](), markdown)

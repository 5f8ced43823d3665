"""Write the API reference at build time: one page per public module of ``gradcode``.

The module list comes from walking ``src/gradcode`` (private ``_x`` modules and ``__main__``
left out), never from a hand-written list, so a module moved or added is documented by the
next build. mkdocstrings renders each page from the module's docstrings.
"""

from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "gradcode"


def public_modules() -> list[tuple[str, ...]]:
    """Dotted module paths of every public module and package, in file order."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts) or parts[-1] == "__main__":
            continue
        found.append(parts)
    return found


nav = mkdocs_gen_files.Nav()
for parts in public_modules():
    page = Path(*parts[1:]) / "index.md" if (PACKAGE.parent / Path(*parts)).is_dir() else None
    page = page or Path(*parts[1:]).with_suffix(".md")
    if parts == ("gradcode",):
        page = Path("index.md")
    nav[parts] = page.as_posix()
    with mkdocs_gen_files.open(Path("reference") / page, "w") as handle:
        handle.write(f"# `{'.'.join(parts)}`\n\n::: {'.'.join(parts)}\n")
with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as handle:
    handle.writelines(nav.build_literate_nav())

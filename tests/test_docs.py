"""The documentation site (mkdocs.yml, docs/): it builds with `--strict`, so a broken link or
anchor fails; its reference pages are what scripts/reference.py generates from the code today;
each provider folder's README.md is a page of it; and a page opened in Chromium shows the job
page's screenshot, with every link on it resolving."""

from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from types import ModuleType
from urllib.parse import urldefrag, urljoin

import pytest

from tests.support.serving import served_handler

ROOT = Path(__file__).resolve().parents[1]
WRITE = "run `uv run python scripts/reference.py --write`"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-3000:]}"
    return out


@pytest.mark.parametrize("name", ["settings.md", "cli.md", "metrics.md", "events.md"])
def test_reference_page_is_generated_from_the_code(name: str) -> None:
    reference = _script("reference")
    page = ROOT / "docs" / "reference" / name
    assert page.is_file(), f"docs/reference/{name} is missing: {WRITE}"
    assert page.read_text() == reference.render(name), f"docs/reference/{name} is stale: {WRITE}"


def test_site_builds_strict_with_a_page_per_provider_folder(site: Path) -> None:
    from integrations import registry

    folders = {p.parent.name for p in (ROOT / "integrations").glob("*/README.md")}
    assert set(registry.names()) <= folders
    for name in folders:
        page = site / "providers" / name / "index.html"
        assert page.is_file(), f"integrations/{name}/README.md is not a page of the site"
    for section in ("getting-started", "using", "operating/troubleshooting", "reference/cli"):
        assert (site / section / "index.html").is_file(), section


def _feature_rows(text: str) -> list[str]:
    """The feature table's rows (from its header to its last row), links made site-relative."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Feature | GitHub |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line.replace("(docs/using/index.md#", "(#").replace("(docs/using/", "("))
    return rows


def test_the_readme_and_the_manual_show_the_same_feature_table() -> None:
    """One table in two places (the README's front page, the manual's Using it): a cell
    changed in one is changed in the other."""
    readme = _feature_rows((ROOT / "README.md").read_text())
    manual = _feature_rows((ROOT / "docs" / "using" / "index.md").read_text())
    assert readme == manual


def test_troubleshooting_names_every_doctor_check() -> None:
    text = (ROOT / "docs" / "operating" / "troubleshooting.md").read_text()
    names: set[str] = set()
    for path in (ROOT / "resolver/cli/doctor.py", ROOT / "resolver/onboarding/preflight.py"):
        names.update(re.findall(r'Check\(\s*"([^"{]+)"', path.read_text()))
    for path in (ROOT / "integrations").glob("*/preflight.py"):
        for line in re.findall(r'^[A-Z_, ]+= (".*")$', path.read_text(), re.M):
            names.update(re.findall(r'"([^"]+)"', line))
    assert len(names) > 10
    missing = sorted(name for name in names if f"`{name}" not in text)
    assert not missing, f"docs/operating/troubleshooting.md does not say what to do: {missing}"


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    with served_handler(handler) as url:
        yield f"{url}/"


def test_a_site_page_shows_the_job_page_screenshot_and_its_links_resolve(served: str) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.test_browser import chromium

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            start = urljoin(served, "getting-started/")
            assert page.goto(start).status == 200
            shot = page.locator("img[src$='job-page.png']").first
            shot.wait_for()
            width = shot.evaluate("img => img.complete ? img.naturalWidth : 0")
            assert width > 0, "the job page's screenshot does not show"
            hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
            local = sorted({h for h in hrefs if h.startswith(served)})
            assert len(local) > 20, local
            for href in local:
                url, anchor = urldefrag(href)
                answer = page.request.get(url)
                assert answer.status == 200, href
                if anchor:
                    assert f'id="{anchor}"' in answer.text(), href
        finally:
            browser.close()

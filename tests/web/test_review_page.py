"""A review job's page shows each of its comments beside the lines of the diff it is on (the
anchored line marked), its suggested change, and the summary; the model's words as text."""

from __future__ import annotations

from resolver.contract.review import diff_files
from resolver.core.states import JobState, Outcome
from resolver.features.review_requests.contract import Remark, ReviewResult, place
from resolver.store import jobs
from resolver.store.db import session_scope
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, sign_in

PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,6 @@
 def add(a, b):
     return a - b
+
+
+def mul(a, b):
+    return a + b
"""


def _reviewed(job_id: int) -> None:
    files = diff_files(PATCH)
    remarks = [Remark("calc.py", 6, "RIGHT", "mul() adds <b>wrongly</b>.", "    return a * b")]
    placed, _ = place(remarks, files)
    excerpts = tuple(tuple(files[c.path].excerpt(c.line, c.side)) for c in placed)
    review = ReviewResult(
        "One bug.", "request_changes", placed, "h" * 40, "b" * 40, "s" * 40, None, excerpts
    )
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.transition(job, JobState.RUNNING)
        result = {"summary": "I reviewed the change.", "review": review.as_dict()}
        jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.ANSWERED, result=result)


def test_the_page_shows_each_comment_beside_its_lines(app, forge) -> None:
    job_id = new_job(repo=SECRET_REPO, task="review this")
    _reviewed(job_id)
    client = browser(app)
    sign_in(client, forge, "rita")
    page = client.get(f"/jobs/{job_id}").text
    assert "changes requested" in page and "<code>calc.py</code> line 6" in page
    # The anchored line, marked, among the lines around it; then the comment and its suggestion.
    assert '<span class="add anchor">+    return a + b</span>' in page
    assert '<span class="add">+def mul(a, b):</span>' in page
    assert "mul() adds &lt;b&gt;wrongly&lt;/b&gt;." in page
    assert '<span class="add">    return a * b</span>' in page
    assert "One bug." in page


def test_another_job_s_page_has_no_review(app, forge) -> None:
    job_id = new_job(repo=SECRET_REPO, task="fix it")
    client = browser(app)
    sign_in(client, forge, "rita")
    assert 'class="review"' not in client.get(f"/jobs/{job_id}").text

"""The webhook fixtures and the stand-in speak Bitbucket Cloud's API as published: every object
in a Cloud payload, every request the client sends and every answer the stand-in gives is
checked against Bitbucket's OpenAPI description (standin/openapi_subset.json)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.pipelines import PipelinesClient
from integrations.bitbucket.standin.api import API_ROUTES, BitbucketAPI
from integrations.bitbucket.standin.conformance import (
    answer_problems,
    definitions,
    description,
    operation,
    operations,
    request_problems,
    shape_problems,
)
from integrations.bitbucket.standin.pipelines import Step, run_json, step_json
from integrations.bitbucket.standin.state import Pull, Repo
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO
from tests.integrations.bitbucket.deliveries import fixture_paths

# The API objects a Cloud payload's fields hold (its event payloads page's common entities).
PAYLOAD_FIELDS = {
    "actor": "account",
    "repository": "repository",
    "pullrequest": "pullrequest",
    "comment": "pullrequest_comment",
    "commit_status": "commitstatus",
}
CLOUD = [
    p for p in fixture_paths() if p.name.startswith(("pullrequest_", "repo_push", "repo_commit"))
]


def test_the_subset_comes_from_the_published_description() -> None:
    assert "e2c7d3586f6114330692327da246d9cff5b8d3dc" in description()["source"]
    assert "swagger.v3.json" in description()["source"]
    assert len(operations()) > 100
    # Bitbucket Cloud takes `draft` when a pull request is created.
    assert (
        "draft" in operations()["POST /repositories/{workspace}/{repo_slug}/pullrequests"]["body"]
    )
    assert "draft" in definitions()["pullrequest"]["properties"]
    assert definitions()["user"]["bases"] == ["account"]
    # Bitbucket Pipelines: a commit's runs, their steps, a step's log (text, no schema).
    pipelines = "GET /repositories/{workspace}/{repo_slug}/pipelines"
    assert "target.commit.hash" in operations()[pipelines]["query"]
    assert "returns" not in operations()[f"{pipelines}/{{pipeline_uuid}}/steps/{{step_uuid}}/log"]
    assert definitions()["pipeline_step_state_completed_failed"]["bases"] == [
        "pipeline_step_state_completed_result"
    ]


@pytest.mark.parametrize("path", CLOUD, ids=[p.stem for p in CLOUD])
def test_every_cloud_fixture_object_is_the_apis(path: Path) -> None:
    payload = json.loads(path.read_text())
    problems = [
        problem
        for field, kind in PAYLOAD_FIELDS.items()
        if field in payload
        for problem in shape_problems(kind, payload[field], field)
    ]
    assert problems == []


def test_the_checker_flags_what_bitbucket_does_not_document() -> None:
    pulls = "/repositories/a/b/pullrequests"
    assert operation("GET", f"{pulls}/5") == (
        "GET /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
    )
    assert operation("GET", f"{pulls}/activity") == (
        "GET /repositories/{workspace}/{repo_slug}/pullrequests/activity"
    )
    assert request_problems("POST", f"{pulls}/5/comment", [], {}) == [
        f"POST {pulls}/5/comment: no such operation"
    ]
    assert request_problems("POST", pulls, [], {"title": "t", "wip": True}) == [
        "POST /repositories/{workspace}/{repo_slug}/pullrequests: unknown [] ['wip']"
    ]
    assert request_problems("POST", pulls, [], {"source": {"branch": {"label": "x"}}}) == [
        "POST /repositories/{workspace}/{repo_slug}/pullrequests body.source.branch: "
        "pullrequest_endpoint_branch has no 'label'"
    ]
    assert request_problems("GET", pulls, ["head"], None) == [
        "GET /repositories/{workspace}/{repo_slug}/pullrequests: unknown ['head'] []"
    ]
    assert shape_problems("account", {"type": "user", "nickname": "a", "login": "a"}, "a") == [
        "a: user has no 'login'"
    ]


def test_every_stand_in_route_is_a_bitbucket_operation() -> None:
    assert sorted(set(API_ROUTES) - set(operations())) == []


def test_a_pipeline_and_its_steps_are_the_apis_in_each_result(
    bitbucket_api: BitbucketAPI, repo: Repo
) -> None:
    steps = [Step(result) for result in ("SUCCESSFUL", "FAILED")] + [Step("ERROR", error="no")]
    runs = [bitbucket_api.add_pipeline(repo, "b", "c" * 40, steps[:n]) for n in (1, 2, 3)]
    assert [run.result for run in runs] == ["SUCCESSFUL", "FAILED", "ERROR"]
    problems = [
        p for run in runs for p in shape_problems("pipeline", run_json(run, bitbucket_api), "run")
    ]
    problems += [
        p for step in steps for p in shape_problems("pipeline_step", step_json(step), "step")
    ]
    assert problems == []
    # A key the description does not name is caught below the state's subtype, too.
    wrong = step_json(steps[1])
    wrong["state"]["result"]["reason"] = "tests"
    assert shape_problems("pipeline_step", wrong, "step") == [
        "step.state.result: pipeline_step_state_completed_failed has no 'reason'"
    ]


def test_every_request_and_answer_of_every_client_method_conforms(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo, pull: Pull
) -> None:
    bitbucket_api.add_workspace_admin("acme", "resolver")
    asked = bitbucket_api.add_comment(pull, "@resolver go", "alice", path="a.py", line=3)
    alice = bitbucket_api.add_user("alice")

    client.authenticated_user()
    assert client.can_write(REPO, alice)
    client.repository(REPO)
    status = client.post_comment(REPO, pull.id, "Queued")
    client.post_comment(REPO, pull.id, "Done it", parent=asked.id)
    client.edit_comment(REPO, pull.id, status, "Done")
    client.post_line_comment(REPO, pull.id, "Why?", {"path": "a.py", "from": 2})
    client.request_changes(REPO, pull.id)
    for n in range(11):
        bitbucket_api.add_comment(pull, f"note {n}", "bob")
    assert len(client.comments(REPO, pull.id)) == 15  # two pages
    made = client.open_draft_pull(REPO, "resolver/1-go", "main", "Go", "Fixes #1")
    client.open_draft_pull(REPO, "resolver/1-go", "main", "Go", "Fixes #1")  # the 400 path
    client.get_pull(REPO, made.number)
    client.edit_pull_body(REPO, made.number, "Verified")
    client.open_pulls(REPO, "main")
    hook = client.create_hook(REPO, "https://resolver.example/webhooks/bitbucket", "s3")
    client.create_hook("acme", "https://resolver.example/webhooks/bitbucket", "s3", workspace=True)
    assert len(client.hooks(REPO)) == len(client.hooks("acme", workspace=True)) == 1
    client.edit_hook(REPO, hook, "https://resolver.example/webhooks/bitbucket", "s4")
    workspace_hook = next(h.uuid for h in bitbucket_api.hooks.values() if h.owner == "acme")
    client.edit_hook(
        "acme", workspace_hook, "https://resolver.example/webhooks/bitbucket", "s4", workspace=True
    )
    pipelines = PipelinesClient(bitbucket_api.api_url, lambda: BOT_TOKEN)
    run = bitbucket_api.add_pipeline(repo, "resolver/1-go", "c" * 40, [Step("FAILED", log=b"x")])
    [found] = pipelines.pipelines(REPO, "c" * 40)
    [step] = pipelines.steps(REPO, str(found["uuid"]))
    assert pipelines.step_log_tail(REPO, run.uuid, str(step["uuid"]), 10, 100) == (b"x", False)
    bitbucket_api.logs_in_storage = False
    pipelines.step_log_tail(REPO, run.uuid, str(step["uuid"]), 10, 100)
    with httpx.Client(headers={"Authorization": f"Bearer {BOT_TOKEN}"}) as http:
        query = {"q": f'repository.full_name="{REPO}"'}
        mine = http.get(f"{bitbucket_api.api_url}/user/permissions/repositories", params=query)
        assert mine.json()["values"][0]["permission"] == "admin"

    used = {r.route for r in bitbucket_api.requests}
    assert used == set(API_ROUTES)
    assert [r.status for r in bitbucket_api.requests if r.status >= 300] == [400, 307]
    problems = [
        problem
        for r in bitbucket_api.requests
        for problem in request_problems(r.method, r.path, list(r.query), r.body)
    ]
    problems += [
        p for a in bitbucket_api.answers for p in answer_problems(a.method, a.path, a.body)
    ]
    assert problems == []

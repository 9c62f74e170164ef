import pytest

from resolver.core.states import TRANSITIONS, IllegalTransitionError, JobState, check_transition


@pytest.mark.parametrize(
    ("current", "target"),
    [(c, t) for c in JobState for t in JobState if t in TRANSITIONS[c]],
)
def test_every_edge_of_the_machine_is_allowed(current: JobState, target: JobState) -> None:
    check_transition(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [(c, t) for c in JobState for t in JobState if t not in TRANSITIONS[c]],
)
def test_every_missing_edge_raises(current: JobState, target: JobState) -> None:
    with pytest.raises(IllegalTransitionError, match=f"{current} -> {target}"):
        check_transition(current, target)


def test_a_succeeded_job_moves_only_to_failed_when_its_review_was_never_posted() -> None:
    assert TRANSITIONS[JobState.SUCCEEDED] == frozenset({JobState.FAILED})

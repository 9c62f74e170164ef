"""Running a job: lease, request, plan, push, commands."""

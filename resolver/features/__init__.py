"""Features that cross the floors, each one folder (a vertical slice, like `schedules/`):
`contract` (pure values and decisions), `worker` (what the job does), `callbacks` (what it
leaves behind). Each part keeps the floor its name says: see the flow layers in pyproject.toml.
"""

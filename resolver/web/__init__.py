"""The web app for people: sign-in with a forge, the jobs they may see, live job pages, stop
and run-again buttons, schedules and the admin's overview. Server-rendered (Jinja2), with
server-sent events where a page updates live."""

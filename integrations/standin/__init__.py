"""What every provider's stand-in server for tests builds on: a loopback HTTP server with
recorded requests, routes and faults (`server`), an OAuth code flow (`oauth_codes`) and git's
own smart-HTTP server (`git_http`). Test code only: the service never imports it."""

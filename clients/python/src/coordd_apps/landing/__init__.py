"""`coord land`: the client side of the landing queue (docs/PROTOCOL-1.2.md section 14).

The daemon orders, leases and fences; it never runs git. This package does
the git work for the head of a queue: `git.py` (one repository's commands,
each a subprocess with its output kept), `renewer.py` (the heartbeat that
keeps the landing's lease alive while a check runs), `lander.py` (the steps),
`queueing.py` (joining and leaving the queue), `plan.py` (what is asked, and
how it ends).
"""

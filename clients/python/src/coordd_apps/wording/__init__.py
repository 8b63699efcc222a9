"""How coordd words things to people and models, for every surface (issue 45 item 2).

`render` (tasks, events, reservations, times, for the CLI, the board summary, `coord
top` and `coord web`), `advice` (a refusal said for the surface that reads it: the
CLI's commands, the MCP tools' names, a hook's model), `render_messages`,
`render_slots` and `render_edits` (a message, a lease or landing, an edit in one
line). The library words nothing: what it needs of text (escaping someone else's,
parsing the wire's times) is `coordd_client.text`. Imports nothing here: the
pre-edit hook loads `advice` alone.
"""

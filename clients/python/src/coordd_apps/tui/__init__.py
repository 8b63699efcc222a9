"""`coord top`: the live board for the human watching several agents (the `tui` extra).

Built on Textual. The board comes from one paged read, then follows the
event stream (`events.subscribe`, resumed from the last seq after lag or a
daemon restart): events are applied to `BoardModel` as they arrive and the
screen redraws once per frame, however many arrived. Importing this package
imports Textual, so only `coord top` does.
"""

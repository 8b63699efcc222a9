"""The modal screens `coord top` asks and shows with: a yes/no, a small form, a page of text.

They only collect an answer and dismiss with it; what is done with the answer
(always as the human's agent, through the socket) is the app's (actions.py).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class Confirm(ModalScreen[bool]):
    """A question answered y or n: every action is confirmed before it is done."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("y", "answer(True)", "yes"),
        ("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str, facts: str = "") -> None:
        super().__init__()
        self.question = question
        #: What an approval signs, one fact a line (`approvals.facts_text`), under the question.
        self.facts = facts

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, markup=False)
            if self.facts:
                yield Label(self.facts, markup=False, id="facts")
            yield Label("y: yes   n: no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Ask(ModalScreen[dict[str, str] | None]):
    """A small form: one Input per field; Enter submits, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "cancel", "cancel")]

    def __init__(self, title: str, fields: list[tuple[str, str]]) -> None:
        super().__init__()
        self.form_title = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.form_title, markup=False)
            for name, placeholder in self.fields:
                yield Input(placeholder=placeholder, id=f"field-{name}")
            yield Button("OK (enter)", id="ok")

    def on_input_submitted(self) -> None:
        self._submit()

    def on_button_pressed(self) -> None:
        self._submit()

    def _submit(self) -> None:
        values = {name: self.query_one(f"#field-{name}", Input).value for name, _ in self.fields}
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Detail(ModalScreen[None]):
    """A page of text (a task's detail and history, the keys) until Escape."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape,q,enter", "close", "close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="detail"):
            yield Static(self.text, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)

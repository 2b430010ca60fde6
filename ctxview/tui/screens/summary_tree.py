"""``m``: the summary map: condensed summaries down to leaves and their source messages (a Textual ``Tree``).

Each summary shows its kind and depth, its tokens and the raw tokens it covers
with the compression ratio, its time range, and whether it is in the context now
and kept or evicted at the current settings; ⚠ marks summaries written without a
summary model or cut to size (fallback, truncated, capped).  Enter shows the
text; ``t`` jumps to the item's row in the items table (a summary outside the
context jumps to the nearest one above it that is in it).  The tree is read in
a thread (its own connection); the outcomes follow the inspector's ``assembly``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from ctxview.model import Trace, column
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.state import Assembly
from ctxview.tui.view import clean_block, clean_inline
from ctxview.whatif.summary_tree import (
    SummaryNode,
    SummaryTree,
    message_line,
    ratio_text,
    read_summary_tree,
    time_range,
    with_outcomes,
)

NodeRef = tuple[str, str | int]  # ("s", summary id) or ("m", message id)


def node_label(node: SummaryNode) -> Text:
    label = Text()
    if node.badges:
        label.append(f"⚠ {'/'.join(node.badges)} ", style="bold yellow")
    label.append(f"{node.kind} d{node.depth} ", style="bold")
    label.append(f"{node.tokens:,} tok ← {node.covered_tokens:,} ({ratio_text(node)})  ")
    label.append(f"{time_range(node)}  ", style="dim")
    if node.ordinal is None:
        label.append("not in context", style="dim")
    else:
        kept = node.outcome in ("kept", "fresh-tail", "stubbed", "focus")
        label.append(f"item {node.ordinal}: {(node.outcome or '').replace('-', ' ')}",
                     style="bold green" if kept else "bold red")
    label.append(f"  {node.summary_id}", style="dim")
    return label


class SummaryTreeScreen(Screen[str | None]):
    """The summary map of one conversation; dismisses with the decision key to jump to, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("summaries")

    DEFAULT_CSS = """
    SummaryTreeScreen {
        & > Horizontal { height: 1fr; }
        & Tree { width: 3fr; border: round $accent; }
        & #summary-text { width: 2fr; border: round $panel; padding: 0 1; }
        & #summary-text > Static { width: 1fr; }
    }
    """

    assembly: var[Assembly | None] = var(None, init=False)

    def __init__(self, db_path: Path, conversation_id: int, assembly: Assembly | None) -> None:
        super().__init__()
        self.db_path = db_path
        self.conversation_id = conversation_id
        self.set_reactive(SummaryTreeScreen.assembly, assembly)
        self.tree_data: SummaryTree | None = None
        self._branches: dict[str, list[TreeNode[NodeRef]]] = {}

    def compose(self) -> ComposeResult:
        with Horizontal():
            tree: Tree[NodeRef] = Tree("summaries", id="summary-tree")
            tree.show_root = False
            tree.auto_expand = False  # Enter shows the text; space opens and closes
            tree.border_title = "summary map"
            yield tree
            with VerticalScroll(id="summary-text"):
                yield Static(Text("Enter on a node shows its text.", style="dim"), id="summary-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        tree = self.query_one(Tree)
        tree.loading = True
        tree.border_subtitle = (
            f"enter text · space open/close · {app_key(self.app, 'summaries.jump')} to the items table · "
            f"{app_key(self.app, 'summaries.close')} closes"
        )
        tree.focus()
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _read(self) -> None:
        from ctxview.store import LcmStore

        try:
            with LcmStore(self.db_path) as store:
                tree = read_summary_tree(store.connection, self.conversation_id)
        except Exception as exc:  # an unreadable database: say so in the pane
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, tree)

    def _failed(self, message: str) -> None:
        self.query_one(Tree).loading = False
        self.query_one("#summary-body", Static).update(Text(f"cannot read the summaries: {message}", style="red"))

    def _loaded(self, data: SummaryTree) -> None:
        self.tree_data = with_outcomes(data, self._trace)
        tree = self.query_one(Tree)
        tree.loading = False
        tree.clear()
        self._branches = {}
        if not data.nodes:
            tree.root.add_leaf(Text("this conversation has no summaries", style="dim"))
            return
        for root in data.roots:
            self._add(tree.root, root, set())
        tree.root.expand()
        for child in tree.root.children:
            child.expand()
        tree.cursor_line = 0
        tree.border_title = f"summary map · {len(data.nodes):,} summaries · {len(data.messages):,} source messages"

    def _add(self, parent: TreeNode[NodeRef], summary_id: str, path: set[str]) -> None:
        assert self.tree_data is not None
        node = self.tree_data.nodes[summary_id]
        has_children = bool(node.children or node.message_ids)
        branch = parent.add(node_label(node), data=("s", summary_id), allow_expand=has_children)
        self._branches.setdefault(summary_id, []).append(branch)
        for child in node.children:
            if child in self.tree_data.nodes and child not in path:
                self._add(branch, child, path | {summary_id})

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeRef]) -> None:
        """A leaf's source messages are added the first time it opens (a long session has many)."""
        ref, data = event.node.data, self.tree_data
        if ref is None or data is None or ref[0] != "s" or getattr(event.node, "_messages_added", False):
            return
        event.node._messages_added = True  # type: ignore[attr-defined]
        for mid in data.nodes[str(ref[1])].message_ids:
            message = data.messages.get(mid)
            if message is not None:
                event.node.add_leaf(Text(clean_inline(message_line(message), 200)), data=("m", mid))

    @property
    def _trace(self) -> Trace | None:
        return self.assembly.trace if self.assembly is not None else None

    def watch_assembly(self) -> None:
        if self.tree_data is None or not self.is_attached:
            return
        with_outcomes(self.tree_data, self._trace)
        for sid, branches in self._branches.items():
            for branch in branches:
                branch.set_label(node_label(self.tree_data.nodes[sid]))

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        ref, data = event.node.data, self.tree_data
        if ref is None or data is None:
            return
        body = Text()
        if ref[0] == "s":
            node = data.nodes[str(ref[1])]
            body.append_text(node_label(node))
            if node.reason:
                body.append(f"\n{clean_inline(node.reason, 400)}", style="italic")
            body.append(f"\ncovers {node.covered_messages:,} messages · {len(node.children)} condensed summaries\n\n",
                        style="dim")
            body.append(clean_block(node.content))
        else:
            message = data.messages.get(int(ref[1]))
            if message is not None:
                body.append(message_line(message) + "\n", style="bold")
                body.append("(the first characters of the stored content)", style="dim")
        self.query_one("#summary-body", Static).update(body)

    def jump_key(self, node: TreeNode[NodeRef] | None) -> str | None:
        """The decision key of a node's row, or of the nearest node above it that is in the context."""
        trace = self._trace
        if trace is None or self.tree_data is None:
            return None
        while node is not None and node.data is not None:
            kind, ref = node.data
            if kind == "s":
                summary = self.tree_data.nodes[str(ref)]
                if summary.ordinal is not None:
                    return f"o:{summary.ordinal}"
            else:
                for index, mid in enumerate(column(trace.decisions, "message_id")):
                    if mid == ref and trace.decisions[index].ordinal is not None:
                        return trace.decisions[index].key
            node = node.parent
        return None

    def action_jump(self) -> None:
        key = self.jump_key(self.query_one(Tree).cursor_node)
        if key is None:
            self.notify("neither this node nor any above it is in the context", timeout=3)
            return
        self.dismiss(key)

    def action_close(self) -> None:
        self.dismiss(None)

"""`palimpsest query`: ask a running service and show why each item ranked where it did."""
from __future__ import annotations

import typer


def query_cmd(
    question: str = typer.Argument(...),
    url: str = typer.Option("http://127.0.0.1:8000", envvar="PALIMPSEST_URL"),
    api_key: str = typer.Option(..., envvar="PALIMPSEST_API_KEY"),
    conversation: str = typer.Option(None, "--conversation", "-c"),
    top_k: int = typer.Option(10),
    token_budget: int = typer.Option(2000),
    pipeline: list[str] = typer.Option([], "--pipeline", "-p", help="stage override key=value (repeatable)"),
    show_context: bool = typer.Option(False, "--context", help="also print the assembled context"),
) -> None:
    """Ask a running service and print the ranked evidence with each signal's rank and score, one block
    per item, wrapped to the terminal's width."""
    import json

    import httpx

    overrides = {}
    for item in pipeline:
        k, _, v = item.partition("=")
        try:
            overrides[k] = json.loads(v)
        except json.JSONDecodeError:
            overrides[k] = v
    body = {"query": question, "top_k": top_k, "token_budget": token_budget}
    if conversation:
        body["conversation_id"] = conversation
    if overrides:
        body["pipeline"] = overrides
    try:
        r = httpx.post(f"{url}/v1/query", json=body, headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
    except httpx.ConnectError:
        typer.echo(f"error: no service answers at {url} (start one with `make run`, or pass --url)", err=True)
        raise typer.Exit(1) from None
    if r.status_code != 200:
        try:
            detail = r.json().get("detail", r.text)
        except ValueError:
            detail = r.text
        typer.echo(f"error {r.status_code}: {detail}", err=True)
        raise typer.Exit(1)
    typer.echo(render(question, r.json(), _width(), show_context))


def _width() -> int:
    import shutil

    return max(40, shutil.get_terminal_size(fallback=(80, 24)).columns)  # COLUMNS wins when set


def render(question: str, out: dict, width: int = 80, show_context: bool = False) -> str:
    """The answer as text that fits `width` columns: one block per item (rank, score, when, who,
    whether it is in the context), its content wrapped below, then each signal's rank and score."""
    import textwrap

    indent = "    "
    wrap = textwrap.TextWrapper(width=width, initial_indent=indent, subsequent_indent=indent,
                                break_long_words=True, break_on_hyphens=False)
    head = [f"{question}", f"{len(out.get('items', []))} items, {out.get('context_tokens', 0)} context tokens"
            + (f", intent {out['intent']['label']}" if isinstance(out.get("intent"), dict)
               and out["intent"].get("label") else "")
            + (", abstain" if out.get("abstain") else "")]
    lines = [*(textwrap.wrap(head[0], width) or [""]), *textwrap.wrap(head[1], width), ""]
    for rank, it in enumerate(out.get("items", []), start=1):
        when = str(it.get("occurred_at", ""))[:16].replace("T", " ")
        flags = [x for x in ("in context" if it.get("in_context") else "",
                             "superseded" if it.get("superseded_by") or it.get("superseded") else "") if x]
        top = f"{rank:>2}. {it.get('score', 0):.4f}  {when}  {it.get('speaker', '')}"
        lines += textwrap.wrap(top + (f"  [{', '.join(flags)}]" if flags else ""), width,
                               subsequent_indent=indent)
        content = str(it.get("content", ""))
        if len(content) > 1000:
            content = content[:1000] + "…"
        for para in content.splitlines() or [""]:
            lines += wrap.wrap(para) or [indent]
        signals = [f"{name} #{sig['rank']} ({sig['score']:.3f})" for name, sig in sorted(it.get("signals", {}).items())]
        if signals:
            lines += textwrap.wrap(" · ".join(signals), width, initial_indent=indent, subsequent_indent=indent)
        lines.append("")
    if show_context:
        lines += ["context:", ""]
        for para in str(out.get("context", "")).splitlines():
            lines += textwrap.wrap(para, width, subsequent_indent="  ") or [""]
    return "\n".join(lines).rstrip() + "\n"

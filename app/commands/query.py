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
    """Ask a running service and print the ranked evidence with each signal's rank and score."""
    import json

    import httpx
    from rich.console import Console
    from rich.table import Table

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
    r = httpx.post(f"{url}/v1/query", json=body, headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
    if r.status_code != 200:
        typer.echo(f"error {r.status_code}: {r.text}", err=True)
        raise typer.Exit(1)
    out = r.json()
    signals = sorted({name for it in out["items"] for name in it["signals"]})
    table = Table(title=f"{question}  ({out['context_tokens']} context tokens)")
    for col in ("#", "score", *signals, "ctx", "when", "speaker", "content"):
        table.add_column(col, overflow="fold")
    for rank, it in enumerate(out["items"], start=1):
        cells = [f"{it['signals'][s]['rank']} ({it['signals'][s]['score']:.3f})" if s in it["signals"] else "-"
                 for s in signals]
        table.add_row(str(rank), f"{it['score']:.4f}", *cells, "✓" if it["in_context"] else "",
                      it["occurred_at"][:16], it["speaker"], it["content"][:200])
    console = Console()
    console.print(table)
    if show_context:
        console.print(out["context"])

// Palimpsest memory explorer: plain JS against the HTTP API (same origin, Bearer key in localStorage).
"use strict";

const state = { key: localStorage.getItem("palimpsest-key") || "", conversation: null, eventsById: new Map() };
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

async function api(path, options = {}) {
  const res = await fetch(path, {
    ...options,
    headers: { "Authorization": `Bearer ${state.key}`, "Content-Type": "application/json", ...(options.headers || {}) },
  });
  if (res.status === 404 && options.optional) return null;
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${res.status}: ${JSON.stringify(body.detail ?? body)}`);
  return body;
}

const when = (iso) => iso.replace("T", " ").slice(0, 16);

async function loadConversations() {
  const list = $("#conversations");
  list.replaceChildren();
  try {
    const { conversations } = await api("/v1/conversations");
    $("#key-status").textContent = `${conversations.length} conversations`;
    $("#key-status").className = "";
    for (const c of conversations) {
      list.append(el("li", { "data-id": c.conversation_id, onclick: () => openConversation(c.conversation_id) },
        c.conversation_id, el("span", { class: "count" }, c.events)));
    }
  } catch (err) {
    $("#key-status").textContent = err.message;
    $("#key-status").className = "error";
  }
}

async function allEvents(conversationId, max = 2000) {
  const events = [];
  let cursor = null;
  do {
    const q = new URLSearchParams({ limit: "1000", ...(cursor ? { cursor } : {}) });
    const page = await api(`/v1/conversations/${encodeURIComponent(conversationId)}/events?${q}`);
    events.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor && events.length < max);
  return events;
}

async function openConversation(conversationId) {
  state.conversation = conversationId;
  document.querySelectorAll("#conversations li").forEach((li) => li.classList.toggle("active", li.dataset.id === conversationId));
  $("#timeline-title").textContent = `Timeline — ${conversationId}`;
  const timeline = $("#timeline");
  timeline.replaceChildren(el("p", { class: "muted" }, "loading…"));
  const cid = encodeURIComponent(conversationId);
  const [events, episodes] = await Promise.all([
    allEvents(conversationId),
    api(`/v1/conversations/${cid}/episodes`, { optional: true }).catch(() => null),
  ]);
  state.eventsById = new Map(events.map((e) => [e.id, e]));
  timeline.replaceChildren();
  const groups = episodes && episodes.episodes && episodes.episodes.length
    ? episodes.episodes.map((ep) => ({ head: `Episode ${ep.index + 1} · ${when(ep.start)} → ${when(ep.end)} · ${ep.boundary}`,
                                       summary: ep.summary, ids: ep.event_ids }))
    : [{ head: `${events.length} events`, summary: "", ids: events.map((e) => e.id) }];
  for (const g of groups) {
    const box = el("div", { class: "episode" }, el("div", { class: "episode-head" }, g.head));
    if (g.summary) box.append(el("div", { class: "summary" }, g.summary));
    for (const id of g.ids) {
      const e = state.eventsById.get(id);
      if (!e) continue;
      box.append(el("div", { class: "event", id: `event-${e.id}` },
        el("time", {}, when(e.occurred_at)), el("span", { class: "speaker" }, `${e.speaker}:`), e.content));
    }
    timeline.append(box);
  }
}

function renderResults(out) {
  const results = $("#results");
  results.replaceChildren();
  document.querySelectorAll(".event.hit").forEach((n) => n.classList.remove("hit"));
  if (out.abstain) results.append(el("p", { class: "muted" }, "The service abstains: nothing relevant enough."));
  results.append(el("p", { class: "muted" }, `${out.items.length} items · ${out.context_tokens} context tokens`));
  const top = Math.max(...out.items.map((i) => i.score), 1e-9);
  for (const item of out.items) {
    const signals = el("div", { class: "signals" });
    for (const [name, s] of Object.entries(item.signals)) {
      signals.append(el("span", { class: "signal", title: `score ${s.score}` }, `${name} #${s.rank}`));
    }
    const bar = el("div", { class: "bar" });
    bar.style.width = `${Math.round((100 * item.score) / top)}%`;
    results.append(el("div", { class: `item${item.in_context ? " in-context" : ""}`, "data-event": item.id },
      el("div", {}, el("time", {}, when(item.occurred_at)), " ", el("b", {}, `${item.speaker}: `), item.content),
      signals, bar));
    const row = document.getElementById(`event-${item.id}`);
    if (row) row.classList.add("hit");
  }
  results.append(el("details", {}, el("summary", {}, "context handed to the answer model"),
    el("div", { class: "context" }, out.context)));
}

async function runQuery(ev) {
  ev.preventDefault();
  const query = $("#query").value.trim();
  if (!query) return;
  const body = { query, token_budget: Number($("#budget").value) || 1000 };
  if (state.conversation) body.conversation_id = state.conversation;
  try {
    const out = await api("/v1/query", { method: "POST", body: JSON.stringify(body) });
    renderResults(out);
    await showGraph(query);
  } catch (err) {
    $("#results").replaceChildren(el("p", { class: "error" }, err.message));
  }
}

async function showGraph(query) {
  const pane = $("#graph");
  if (!state.conversation) return;
  const q = new URLSearchParams({ query, limit: "40" });
  const g = await api(`/v1/conversations/${encodeURIComponent(state.conversation)}/graph?${q}`, { optional: true }).catch(() => null);
  if (!g || !g.nodes || !g.nodes.length) {
    pane.replaceChildren(el("p", { class: "muted" }, "No graph for this conversation yet."));
    return;
  }
  const W = 460, H = 360, cx = W / 2, cy = H / 2;
  const pos = new Map();
  g.nodes.forEach((n, i) => {
    const a = (2 * Math.PI * i) / g.nodes.length, r = n.kind === "entity" ? 90 : 160;
    pos.set(n.id, [cx + r * Math.cos(a), cy + r * Math.sin(a)]);
  });
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("id", "graph-svg");
  for (const e of g.edges) {
    const [a, b] = [pos.get(e.src), pos.get(e.dst)];
    if (!a || !b) continue;
    const line = document.createElementNS(NS, "line");
    Object.entries({ x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: "#bbb" }).forEach(([k, v]) => line.setAttribute(k, v));
    line.append(Object.assign(document.createElementNS(NS, "title"), { textContent: e.type }));
    svg.append(line);
  }
  for (const n of g.nodes) {
    const [x, y] = pos.get(n.id);
    const c = document.createElementNS(NS, "circle");
    Object.entries({ cx: x, cy: y, r: n.kind === "entity" ? 7 : 4, fill: n.kind === "entity" ? "#ef8354" : "#4f5d75", class: `node ${n.kind}` })
      .forEach(([k, v]) => c.setAttribute(k, v));
    const t = document.createElementNS(NS, "text");
    t.setAttribute("x", x + 8); t.setAttribute("y", y + 3);
    t.textContent = (n.label || n.id).slice(0, 28);
    svg.append(c, t);
  }
  pane.replaceChildren(svg);
}

$("#key-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  state.key = $("#api-key").value.trim();
  localStorage.setItem("palimpsest-key", state.key);
  loadConversations();
});
$("#query-form").addEventListener("submit", runQuery);
if (state.key) { $("#api-key").value = state.key; loadConversations(); }

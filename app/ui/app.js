// Palimpsest memory explorer: plain JS against the HTTP API (same origin, Bearer key).
// The key lives in sessionStorage: it survives a reload, not the browser session. The page's state is
// in the URL fragment: #conversation=<id>&event=<event's id> (shareable; the key never is), and
// #key=<key> opens the page already connected (the key moves to sessionStorage and leaves the URL).
import { drawGraph, legend } from "./graph.js";

const KEY = "palimpsest-key";
localStorage.removeItem(KEY);  // earlier versions kept the key for good: not any more
const state = { key: sessionStorage.getItem(KEY) || "", connected: false, conversation: null,
                eventsById: new Map(), graphSeed: null, zoom: null };
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

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, options = {}) {
  const res = await fetch(path, {
    ...options,
    headers: { "Authorization": `Bearer ${state.key}`, "Content-Type": "application/json", ...(options.headers || {}) },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const fields = (body.fields || []).map((f) => `${f.path}: ${f.message}`).join("; ");
    const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail ?? body);
    throw new ApiError(res.status, `${res.status}: ${detail}${fields ? ` (${fields})` : ""}`);
  }
  return body;
}

const when = (iso) => iso.replace("T", " ").slice(0, 16);

// --- the URL fragment -------------------------------------------------------------------------

function fragment() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

export function linkTo(conversationId, eventId) {
  const p = new URLSearchParams({ conversation: conversationId });
  if (eventId) p.set("event", String(eventId));
  return `#${p}`;
}

// A key in the fragment goes to sessionStorage and out of the URL (and out of the history entry).
function takeKeyFromUrl() {
  const p = fragment();
  const key = p.get("key");
  if (key === null) return false;
  p.delete("key");
  const rest = p.toString();
  history.replaceState(null, "", `${location.pathname}${location.search}${rest ? `#${rest}` : ""}`);
  if (key.trim()) setKey(key.trim());
  return true;
}

function setKey(key) {
  state.key = key;
  state.connected = false;
  state.conversation = null;
  if (key) sessionStorage.setItem(KEY, key); else sessionStorage.removeItem(KEY);
  $("#api-key").value = key;
}

// --- conversations and the timeline -----------------------------------------------------------

function say(text, cls = "") {
  $("#key-status").textContent = text;
  $("#key-status").className = cls;
}

async function connect() {
  const list = $("#conversations");
  list.replaceChildren();
  try {
    const { conversations } = await api("/v1/conversations");
    state.connected = true;
    say(`connected · ${conversations.length} conversations`, "ok");
    $("#disconnect").hidden = false;
    for (const c of conversations) {
      list.append(el("li", { "data-id": c.conversation_id },
        el("a", { href: linkTo(c.conversation_id) }, c.conversation_id), el("span", { class: "count" }, c.events)));
    }
    markActive();
    return true;
  } catch (err) {
    say(err.status === 401 ? "401: this key is not valid here" : err.message, "error");
    return false;
  }
}

function markActive() {
  document.querySelectorAll("#conversations li").forEach((li) => li.classList.toggle("active", li.dataset.id === state.conversation));
}

async function allEvents(conversationId, untilEvent, max = 2000) {
  const events = [];
  let cursor = null;
  do {
    const q = new URLSearchParams({ limit: "1000", ...(cursor ? { cursor } : {}) });
    const page = await api(`/v1/conversations/${encodeURIComponent(conversationId)}/events?${q}`);
    events.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor && (events.length < max || (untilEvent && !events.some((e) => e.id === untilEvent))));
  return events;
}

async function openConversation(conversationId, untilEvent) {
  state.conversation = conversationId;
  markActive();
  $("#timeline-title").replaceChildren(`Timeline — ${conversationId} `,
    el("a", { class: "permalink", href: linkTo(conversationId), title: "link to this conversation" }, "#"));
  const timeline = $("#timeline");
  timeline.replaceChildren(el("p", { class: "muted" }, "loading…"));
  const cid = encodeURIComponent(conversationId);
  const [events, episodes, changes] = await Promise.all([
    allEvents(conversationId, untilEvent),
    api(`/v1/conversations/${cid}/episodes`).catch(() => null),
    allAssertions(conversationId).catch((err) => err),
  ]);
  renderChanges(conversationId, changes);
  state.eventsById = new Map(events.map((e) => [e.id, e]));
  timeline.replaceChildren();
  if (!events.length) timeline.append(el("p", { class: "muted" }, `No events in ${conversationId}.`));
  const eps = episodes?.episodes || [];
  const inEpisode = new Set(eps.flatMap((ep) => ep.event_ids));
  const groups = eps.map((ep) => ({ head: `Episode ${ep.index + 1} · ${when(ep.start)} → ${when(ep.end)} · ${ep.boundary}`,
                                    summary: ep.summary, ids: ep.event_ids }));
  const rest = events.filter((e) => !inEpisode.has(e.id)).map((e) => e.id);
  const n = (k, what) => `${k} ${what}${k === 1 ? "" : "s"}`;
  const corrected = rest.every((id) => state.eventsById.get(id)?.superseded_by);  // the layers read their newer version
  if (rest.length) groups.push({ head: !eps.length ? n(events.length, "event")
                                   : corrected ? `${n(rest.length, "corrected event")} (the layers read the correction)`
                                   : `${n(rest.length, "event")} not yet in an episode`,
                                 summary: "", ids: rest });
  for (const g of groups) {
    const box = el("div", { class: "episode" }, el("div", { class: "episode-head" }, g.head));
    if (g.summary) box.append(el("div", { class: "summary" }, g.summary));
    for (const id of g.ids) {
      const e = state.eventsById.get(id);
      if (!e) continue;
      const row = el("div", { class: `event${e.superseded_by ? " superseded" : ""}`, id: `event-${e.id}`, "data-event": e.id },
        el("a", { class: "permalink", href: linkTo(conversationId, e.id), title: `link to event ${e.id}` }, "#"),
        el("time", { datetime: e.occurred_at }, when(e.occurred_at)), el("span", { class: "speaker" }, `${e.speaker}:`),
        el("span", { class: "content" }, e.content));
      if (e.superseded_by) row.append(el("span", { class: "badge", title: `corrected by ${e.superseded_by}` }, "corrected later"));
      if (e.supersedes) row.append(el("span", { class: "badge", title: `corrects ${e.supersedes}` }, "correction"));
      box.append(row);
    }
    timeline.append(box);
  }
  $("#results").replaceChildren();
  await showGraph({});
}

// --- what changed: the assertion timeline (GET /timeline) -----------------------------------------

async function allAssertions(conversationId, max = 2000) {
  const out = { assertions: [], contradictions: [], layer_version: null };
  let cursor = null;
  do {
    const q = new URLSearchParams({ limit: "500", ...(cursor ? { cursor } : {}) });
    const page = await api(`/v1/conversations/${encodeURIComponent(conversationId)}/timeline?${q}`);
    out.assertions.push(...page.assertions);
    out.contradictions.push(...page.contradictions);
    out.layer_version = page.layer_version;
    cursor = page.next_cursor;
  } while (cursor && out.assertions.length < max);
  return out;
}

const day = (iso) => iso.slice(0, 10);
const shown = (a) => (a.negated ? `not ${a.value}` : a.value);

// One row per assertion, oldest first: its date, who, what, the value, and whether it still stands or
// which later value replaced it (and when); below, the contradictions the consolidation layer recorded.
function renderChanges(conversationId, t) {
  const box = $("#changes");
  box.hidden = false;
  const head = el("h3", {}, "What changed ", el("span", { class: "muted" }, "assertions in time order"));
  if (t instanceof Error || !t) {
    box.replaceChildren(head, el("p", { class: "error" }, t?.message || "no timeline"));
    return;
  }
  if (!t.assertions.length) {
    box.replaceChildren(head, el("p", { class: "muted" }, t.layer_version
      ? "No assertions (where someone lives, works, …) in this conversation."
      : "No timeline yet: the consolidation layer has not run."));
    return;
  }
  const byId = new Map(t.assertions.map((a) => [a.id, a]));
  const table = el("table", { class: "assertions" },
    el("thead", {}, el("tr", {}, ...["date", "who", "what", "value", "state"].map((h) => el("th", {}, h)))));
  const body = el("tbody");
  for (const a of t.assertions) {
    const later = a.superseded_by ? byId.get(a.superseded_by) : null;
    const state = !a.superseded_by ? (a.negated ? "ended" : "current")
      : later ? `superseded by ${shown(later)} · ${day(later.time)}` : `superseded (${a.superseded_by})`;
    body.append(el("tr", { class: `assertion ${a.superseded_by ? "superseded" : "current"}${a.negated ? " negated" : ""}`,
                           "data-id": a.id, "data-event": a.event_id },
      el("td", {}, el("a", { class: "permalink", href: linkTo(conversationId, a.event_id), title: `event ${a.event_id}` }, "#"),
         el("time", { datetime: a.time }, day(a.time)),
         a.valid_from ? el("span", { class: "valid-from muted", title: "the day the claim takes effect, as its words say" },
                           ` from ${a.valid_from}`) : ""),
      el("td", { class: "who" }, a.entity), el("td", { class: "what" }, a.attribute),
      el("td", { class: "value" }, shown(a)), el("td", { class: "state" }, state)));
  }
  table.append(body);
  const parts = [head, table];
  if (t.contradictions.length) {
    parts.push(el("div", { class: "contradictions-head" }, `Contradictions (${t.contradictions.length})`),
      el("ul", { class: "contradictions" }, ...t.contradictions.map((c) => el("li", { "data-id": c.id },
        `${c.entity} · ${c.attribute}: `, el("span", { class: "old" }, c.earlier_value), ` (${day(c.earlier_time)}) → `,
        el("b", {}, c.later_value), ` (${day(c.later_time)}) · ${c.kind}`))));
  }
  box.replaceChildren(...parts);
}

function showEvent(eventId) {
  document.querySelectorAll(".event.linked").forEach((n) => n.classList.remove("linked"));
  const row = document.getElementById(`event-${eventId}`);
  if (!row) return false;
  row.classList.add("linked");
  const pane = $("#timeline-pane"), r = row.getBoundingClientRect(), p = pane.getBoundingClientRect();
  pane.scrollTop += r.top - p.top - (pane.clientHeight - r.height) / 2;  // centre it; the page stays put
  document.querySelectorAll("#graph-svg .node.fact").forEach((n) => n.classList.toggle("linked", n.dataset.event === String(eventId)));
  return true;
}

// Where the fragment says to be: connect, open the conversation, show the event.
async function route() {
  takeKeyFromUrl();
  if (!state.key) { say("not connected: paste an API key"); return; }
  if (!state.connected && !(await connect())) return;
  const p = fragment();
  let conversation = p.get("conversation");
  const eventId = Number(p.get("event")) || null;
  if (p.has("event") && !eventId) { say(`no such event: ${p.get("event")}`, "error"); return; }
  if (eventId && !conversation) {
    try {
      conversation = (await api(`/v1/events/${eventId}`)).conversation_id;
      history.replaceState(null, "", linkTo(conversation, eventId));
    } catch (err) {
      say(err.status === 404 ? `event ${eventId} not found` : err.message, "error");
      return;
    }
  }
  if (!conversation) return;
  if (conversation !== state.conversation) await openConversation(conversation, eventId);
  if (!eventId) showEvent(null);
  else if (!showEvent(eventId)) say(`event ${eventId} is not in ${conversation}`, "error");
}

// --- questions and evidence -------------------------------------------------------------------

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
      el("div", {}, el("a", { class: "permalink", href: linkTo(item.conversation_id || state.conversation, item.id),
                              title: "show in the timeline" }, "#"),
         el("time", {}, when(item.occurred_at)), " ", el("b", {}, `${item.speaker}: `), item.content),
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
    await showGraph({ query });
  } catch (err) {
    $("#results").replaceChildren(el("p", { class: "error" }, err.message));
  }
}

// --- the entity graph -------------------------------------------------------------------------

async function showGraph(seed) {
  const pane = $("#graph");
  if (!state.conversation) return;
  state.graphSeed = seed;
  const q = new URLSearchParams({ limit: $("#graph-limit").value, ...seed });
  let g = null;
  try {
    g = await api(`/v1/conversations/${encodeURIComponent(state.conversation)}/graph?${q}`);
  } catch (err) {
    if (err.status !== 404) { pane.replaceChildren(el("p", { class: "error" }, err.message)); return; }
  }
  const about = seed.entity ? `around ${seed.entity}` : seed.query ? `around the entities of “${seed.query}”`
    : "around the conversation's most mentioned entities";
  if (!g || !g.nodes?.length) {
    $("#graph-caption").textContent = "";
    pane.replaceChildren(el("p", { class: "muted" }, `No graph ${about} yet.`));
    state.zoom = null;
    return;
  }
  const s = g.stats || {};
  $("#graph-caption").textContent = `${about} · ${g.nodes.length} nodes${s.truncated ? ` (cut at ${q.get("limit")})` : ""}`;
  const order = (n) => {
    const e = state.eventsById.get(n.event_id);
    return e ? Date.parse(e.occurred_at) : Number.MAX_SAFE_INTEGER - 1e6 + (n.event_id || 0);
  };
  state.zoom = drawGraph(pane, g, {
    factOrder: order,
    markSeeds: Boolean(seed.entity || seed.query),
    onFact: (n) => { if (n.event_id) location.hash = linkTo(state.conversation, n.event_id); },
    onEntity: (n) => showGraph({ entity: n.label }),
  });
  const linked = Number(fragment().get("event"));
  if (linked) document.querySelectorAll("#graph-svg .node.fact").forEach((n) => n.classList.toggle("linked", n.dataset.event === String(linked)));
}

// --- wiring -----------------------------------------------------------------------------------

$("#graph-legend-slot").replaceWith(legend());
$("#key-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  setKey($("#api-key").value.trim());
  route();
});
$("#disconnect").addEventListener("click", () => {
  setKey("");
  state.conversation = null;
  $("#conversations").replaceChildren();
  $("#changes").hidden = true;
  $("#disconnect").hidden = true;
  say("disconnected: the key is forgotten");
});
$("#query-form").addEventListener("submit", runQuery);
$("#zoom-in").addEventListener("click", () => state.zoom?.zoomIn());
$("#zoom-out").addEventListener("click", () => state.zoom?.zoomOut());
$("#zoom-reset").addEventListener("click", () => state.zoom?.reset());
$("#graph-all").addEventListener("click", () => showGraph({}));
$("#graph-limit").addEventListener("change", () => showGraph(state.graphSeed || {}));
window.addEventListener("hashchange", route);
$("#api-key").value = state.key;
route();

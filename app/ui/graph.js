// The entity graph: a layered drawing (entities | facts in time order | topics) in plain SVG.
// Every label sits in its own row of its own column, so no two labels overlap at any zoom;
// a label too long for its column is shortened with an ellipsis and shown whole on hover.
"use strict";

const NS = "http://www.w3.org/2000/svg";
const ROW = 26, PILL = 20, TOP = 34, MARGIN = 8;

// Colours by entity kind (the graph layer's kinds); anything else is "other".
export const ENTITY_KINDS = [
  ["person", "#d9622b"], ["animal", "#a8841a"], ["place", "#2f6fdb"], ["organization", "#7a4fa3"],
  ["event", "#c2185b"], ["thing", "#6a8a2e"], ["concept", "#23877a"], ["other", "#6b6b6b"],
];
const KIND_COLOUR = new Map(ENTITY_KINDS);
const COLUMNS = [
  { key: "entity", title: "Entities", share: 0.2 },
  { key: "fact", title: "Facts, oldest first", share: 0.42 },
  { key: "topic", title: "Topics", share: 0.2 },
];

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

const column = (n) => (n.kind === "entity" ? 0 : n.kind === "facet_point" ? 1 : 2);
const entityKind = (n) => (KIND_COLOUR.has(n.data?.kind) ? n.data.kind : "other");

// The legend: what each colour, shape and line means. Plain HTML, next to the drawing.
export function legend() {
  const box = document.createElement("div");
  box.id = "graph-legend";
  box.setAttribute("aria-label", "legend");
  const item = (cls, colour, text) => {
    const span = document.createElement("span");
    span.className = "legend-item";
    const sw = document.createElement("i");
    sw.className = `swatch ${cls}`;
    if (colour) sw.style.background = colour;
    span.append(sw, text);
    box.append(span);
  };
  for (const [kind, colour] of ENTITY_KINDS) item("entity", colour, kind);
  item("fact", null, "fact (click: its event)");
  item("topic", null, "topic");
  item("seed", null, "named in the question");
  item("line-mention", null, "mentions");
  item("line-topic", null, "about");
  item("line-time", null, "next in time");
  item("line-change", null, "changed / caused");
  return box;
}

// Lay the nodes out in three columns: facts in time order, entities and topics ordered by the mean
// row of the facts they touch (fewer crossings). Returns rows per column and each node's box.
export function layout(g, width, factOrder) {
  const cols = [[], [], []];
  for (const n of g.nodes) cols[column(n)].push(n);
  cols[1].sort((a, b) => factOrder(a) - factOrder(b) || a.id.localeCompare(b.id));
  const neighbours = new Map(g.nodes.map((n) => [n.id, new Set()]));
  for (const e of g.edges) {
    if (neighbours.has(e.src) && neighbours.has(e.dst) && e.src !== e.dst) {
      neighbours.get(e.src).add(e.dst);
      neighbours.get(e.dst).add(e.src);
    }
  }
  const rowOf = new Map(cols[1].map((n, i) => [n.id, i]));
  for (const c of [0, 2]) {
    const bary = (n) => {
      const rows = [...neighbours.get(n.id)].filter((id) => rowOf.has(id)).map((id) => rowOf.get(id));
      return rows.length ? rows.reduce((s, r) => s + r, 0) / rows.length : Infinity;
    };
    const key = new Map(cols[c].map((n) => [n.id, bary(n)]));
    cols[c].sort((a, b) => key.get(a.id) - key.get(b.id) || a.label.localeCompare(b.label));
  }
  const rows = Math.max(1, ...cols.map((c) => c.length));
  const height = TOP + rows * ROW + MARGIN;
  const gap = (width - 2 * MARGIN - COLUMNS.reduce((s, c) => s + c.share * width, 0)) / 2;
  const boxes = new Map();
  let x = MARGIN;
  cols.forEach((nodes, c) => {
    const w = COLUMNS[c].share * width, step = (rows * ROW) / Math.max(1, nodes.length);
    nodes.forEach((n, i) => boxes.set(n.id, { x, y: TOP + (i + 0.5) * step - PILL / 2, w, h: PILL, col: c, node: n }));
    COLUMNS[c].x = x;
    x += w + gap;
  });
  return { boxes, neighbours, width, height, gap };
}

function fitText(text, full, maxWidth) {
  text.textContent = full;
  if (text.getComputedTextLength() <= maxWidth) return;
  let lo = 0, hi = full.length;
  while (lo < hi) {  // the longest prefix that fits with an ellipsis
    const mid = Math.ceil((lo + hi) / 2);
    text.textContent = `${full.slice(0, mid).trimEnd()}…`;
    if (text.getComputedTextLength() <= maxWidth) lo = mid; else hi = mid - 1;
  }
  text.textContent = `${full.slice(0, lo).trimEnd()}…`;
}

function linkKind(a, b, type) {
  if (a.col === b.col) return type === "temporal" ? "time" : "change";
  if (Math.abs(a.col - b.col) === 2) return null;  // entity-topic: already said through the facts
  return a.col === 0 || b.col === 0 ? "mention" : "topic";
}

function linkPath(a, b) {
  if (a.col === b.col) {  // an arc on the column's right side
    const x = a.x + a.w, y1 = a.y + a.h / 2, y2 = b.y + b.h / 2, bulge = Math.min(60, 12 + Math.abs(y2 - y1) / 4);
    return `M${x},${y1} C${x + bulge},${y1} ${x + bulge},${y2} ${x},${y2}`;
  }
  const [l, r] = a.col < b.col ? [a, b] : [b, a];
  const x1 = l.x + l.w, y1 = l.y + l.h / 2, x2 = r.x, y2 = r.y + r.h / 2, mx = (x1 + x2) / 2;
  return `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
}

// Draw `g` (the API's GraphOut) into `pane`. `opts`: factOrder(node) -> number, onFact(node),
// onEntity(node), markSeeds (outline the seeds: the entities a question or a click named). Returns the zoom controls' handlers.
export function drawGraph(pane, g, opts) {
  const width = Math.max(560, pane.clientWidth - 4);
  const lay = layout(g, width, opts.factOrder);
  const seeds = new Set(opts.markSeeds ? g.stats?.seeds || [] : []);
  const svg = svgEl("svg", { id: "graph-svg", width, height: lay.height, viewBox: `0 0 ${width} ${lay.height}`,
                             role: "img", "aria-label": "entity graph" });
  const view = svgEl("g", { class: "viewport" });
  svg.append(view);
  pane.replaceChildren(svg);
  COLUMNS.forEach((c) => {
    const head = svgEl("text", { x: c.x, y: 16, class: "col-head" });
    head.textContent = c.title;
    view.append(head);
  });
  const links = svgEl("g", { class: "links" }), nodes = svgEl("g", { class: "nodes" });
  view.append(links, nodes);
  const seen = new Set(), incident = new Map([...lay.boxes.keys()].map((id) => [id, []]));
  for (const e of g.edges) {
    const a = lay.boxes.get(e.src), b = lay.boxes.get(e.dst);
    const pair = [e.src, e.dst].sort().join("\u0000");
    if (!a || !b || e.src === e.dst || seen.has(pair)) continue;
    const kind = linkKind(a, b, e.type);
    if (!kind) continue;
    seen.add(pair);
    const path = svgEl("path", { d: linkPath(a, b), class: `link ${kind}`, "data-type": e.type });
    path.append(Object.assign(svgEl("title"), { textContent: e.type }));
    links.append(path);
    incident.get(e.src).push(path); incident.get(e.dst).push(path);
  }
  for (const [id, box] of lay.boxes) {
    const n = box.node, kind = ["entity", "fact", "topic"][box.col];
    const group = svgEl("g", { class: `node ${kind}${seeds.has(id) ? " seed" : ""}`, "data-id": id,
                               tabindex: "0", ...(n.event_id ? { "data-event": n.event_id } : {}) });
    const rect = svgEl("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: box.col === 1 ? 3 : 10 });
    if (box.col === 0) {
      rect.style.fill = KIND_COLOUR.get(entityKind(n));
      group.dataset.kind = entityKind(n);
    }
    const text = svgEl("text", { x: box.x + 7, y: box.y + box.h / 2 + 4, class: "label" });
    group.append(rect, text, Object.assign(svgEl("title"), { textContent: tooltip(n) }));
    nodes.append(group);
    fitText(text, n.label || id, box.w - 14);
    group.addEventListener("mouseenter", () => focus(svg, group, id, lay.neighbours, incident));
    group.addEventListener("mouseleave", () => unfocus(svg));
    const activate = () => (box.col === 0 ? opts.onEntity?.(n) : box.col === 1 ? opts.onFact?.(n) : null);
    group.addEventListener("click", (ev) => { if (!svg.dataset.dragged) activate(); ev.stopPropagation(); });
    group.addEventListener("keydown", (ev) => { if (ev.key === "Enter") activate(); });
  }
  return zoomable(svg, view, width, lay.height);
}

function tooltip(n) {
  const bits = [n.label];
  if (n.kind === "entity") {
    bits.push(`${n.data?.kind || "entity"}${n.data?.mentions ? `, ${n.data.mentions} mentions` : ""}`);
    if (n.data?.aliases?.length) bits.push(`also: ${n.data.aliases.join(", ")}`);
  } else if (n.kind === "facet_point") {
    for (const d of n.data?.dates || []) bits.push(`“${d.surface}” = ${d.label}`);
    if (n.event_id) bits.push(`event ${n.event_id}: click to open it in the timeline`);
  }
  return bits.join("\n");
}

function focus(svg, group, id, neighbours, incident) {
  svg.classList.add("focus");
  const on = new Set([id, ...neighbours.get(id)]);
  svg.querySelectorAll(".node").forEach((g) => g.classList.toggle("on", on.has(g.dataset.id)));
  svg.querySelectorAll(".link").forEach((p) => p.classList.remove("on"));
  incident.get(id).forEach((p) => p.classList.add("on"));
}

function unfocus(svg) {
  svg.classList.remove("focus");
}

// Zoom (buttons, Ctrl+wheel) and pan (drag) by one transform on the drawing's group.
function zoomable(svg, view, width, height) {
  const z = { k: 1, x: 0, y: 0 };
  const apply = () => {
    view.setAttribute("transform", `translate(${z.x},${z.y}) scale(${z.k})`);
    svg.dataset.zoom = z.k.toFixed(2);
  };
  const zoomAt = (factor, px, py) => {
    const k = Math.min(4, Math.max(0.5, z.k * factor));
    z.x = px - ((px - z.x) * k) / z.k;
    z.y = py - ((py - z.y) * k) / z.k;
    z.k = k;
    apply();
  };
  svg.addEventListener("wheel", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey)) return;  // a plain wheel scrolls the page
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, zx: z.x, zy: z.y }; delete svg.dataset.dragged; });
  svg.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 4) svg.dataset.dragged = "1";
    if (svg.dataset.dragged) { z.x = drag.zx + dx; z.y = drag.zy + dy; apply(); }
  });
  const end = () => { drag = null; setTimeout(() => delete svg.dataset.dragged, 0); };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointerleave", end);
  apply();
  return {
    zoomIn: () => zoomAt(1.25, width / 2, height / 2),
    zoomOut: () => zoomAt(1 / 1.25, width / 2, height / 2),
    reset: () => { Object.assign(z, { k: 1, x: 0, y: 0 }); apply(); },
  };
}

// Rendering of parts and artifacts by type, with DOM nodes only (textContent, never innerHTML):
// text, markdown (shown as text with minimal formatting), JSON data, files (a download link) and
// images (inline when the page holds their bytes; a link to open when they live at a URL).

import { PASSIVE_MEDIA_TYPES } from "./media-types.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function isMarkdown(part) {
  return part.mediaType === "text/markdown" || /\.(md|markdown)$/i.test(part.filename || "");
}

// Markdown, safely: every character stays text. Headings, list items, fenced code and **bold** get a
// little formatting; nothing else is interpreted (no links, no HTML).
export function markdown(source) {
  const root = el("div", { class: "markdown" });
  let fence = null;
  for (const line of source.split("\n")) {
    if (line.startsWith("```")) {
      if (fence) {
        root.append(fence);
        fence = null;
      } else fence = el("pre", { class: "code" });
      continue;
    }
    if (fence) {
      fence.append(line + "\n");
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      root.append(el("div", { class: `md-h md-h${heading[1].length}`, text: heading[2] }));
      continue;
    }
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    const row = el("div", { class: item ? "md-li" : "md-p" });
    inline(row, item ? item[1] : line);
    root.append(row);
  }
  if (fence) root.append(fence);
  return root;
}

function inline(node, text) {
  const pieces = text.split(/(\*\*[^*]+\*\*|`[^`]+`)/);
  for (const piece of pieces) {
    if (/^\*\*[^*]+\*\*$/.test(piece)) node.append(el("strong", { text: piece.slice(2, -2) }));
    else if (/^`[^`]+`$/.test(piece)) node.append(el("code", { text: piece.slice(1, -1) }));
    else if (piece) node.append(piece);
  }
}

function essence(mediaType) {
  return (mediaType || "").split(";")[0].trim().toLowerCase();
}

// A media type that cannot run script when a browser opens it: on the S3 adapter's allowlist
// (adapters/s3_blobs.py, which console/_static.py serves as media-types.js). Anything else (HTML,
// SVG, XML, JavaScript, unknown) is never linked for viewing, since it would run on the origin of its
// URL (moto's on the local stack, the console's own for a blob), and its bytes are kept as opaque.
function isPassive(mediaType) {
  return PASSIVE_MEDIA_TYPES.has(essence(mediaType));
}

function isImage(mediaType) {
  return isPassive(mediaType) && essence(mediaType).startsWith("image/");
}

function blobUrl(part) {
  const bytes = Uint8Array.from(atob(part.raw), (c) => c.charCodeAt(0));
  const type = isPassive(part.mediaType) ? essence(part.mediaType) : "application/octet-stream";
  return URL.createObjectURL(new Blob([bytes], { type }));
}

function download(href, name) {
  return el("a", { href, download: name, class: "download", text: `Download ${name}` });
}

// A file whose bytes the part carries: a blob of this page's origin, typed only when passive (an
// opened HTML blob would run as the console), shown inline when an image, and a download link.
function rawFile(part, name, box) {
  const url = blobUrl(part);
  if (isImage(part.mediaType)) box.append(el("img", { src: url, alt: name, class: "inline-image" }));
  box.append(download(url, name));
}

// A file at a URL. An image is never fetched by itself (the CSP allows images from this origin and
// data:/blob: only: an agent's URL would be a beacon on whoever views it): a click opens it. A
// data: URL holds its bytes and is shown like a blob. An active or unknown type is not linked.
function urlFile(part, name, box) {
  const url = part.url;
  const scheme = (/^(https?|data):/i.exec(url) || [])[1]?.toLowerCase();
  const host = scheme && scheme !== "data" ? hostOf(url) : null;
  if (!isPassive(part.mediaType) || !(scheme === "data" || host)) {
    const what = `${part.mediaType || "no media type"}, at a URL the console does not open`;
    box.append(el("span", { class: "unlinked", text: `${name} (${what}): ${clip(url)}` }));
    return;
  }
  if (scheme === "data") {
    if (isImage(part.mediaType)) box.append(el("img", { src: url, alt: name, class: "inline-image" }));
    box.append(download(url, name));
    return;
  }
  const text = isImage(part.mediaType) ? `Open image ${name} from ${host} (not loaded until you click)` : `Open ${name} from ${host}`;
  box.append(el("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: "external", text }));
}

function hostOf(url) {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}

function clip(text) {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export function renderPart(part) {
  if (part.text !== undefined) {
    return isMarkdown(part) ? markdown(part.text) : el("div", { class: "part text", text: part.text });
  }
  if (part.data !== undefined) {
    return el("pre", { class: "part data", text: JSON.stringify(part.data, null, 2) });
  }
  if (part.raw !== undefined || part.url !== undefined) {
    const fromUrl = /^https?:/i.test(part.url || "") ? part.url.split("?")[0].split("/").pop() : "";
    const name = part.filename || fromUrl || "file";
    const box = el("div", { class: "part file" });
    if (part.raw !== undefined) rawFile(part, name, box);
    else urlFile(part, name, box);
    if (part.mediaType) box.append(el("span", { class: "muted", text: ` ${part.mediaType}` }));
    return box;
  }
  return el("pre", { class: "part data", text: JSON.stringify(part, null, 2) });
}

export function renderParts(parts) {
  const box = el("div", { class: "parts" });
  for (const part of parts || []) box.append(renderPart(part));
  return box;
}

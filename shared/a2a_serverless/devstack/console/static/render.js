// Rendering of parts and artifacts by type, with DOM nodes only (textContent, never innerHTML):
// text, markdown (shown as text with minimal formatting), JSON data, files (a download link) and
// images (inline).

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

function fileUrl(part) {
  if (part.url !== undefined) return /^(https?:|data:)/i.test(part.url) ? part.url : null;
  const bytes = Uint8Array.from(atob(part.raw), (c) => c.charCodeAt(0));
  return URL.createObjectURL(new Blob([bytes], { type: part.mediaType || "application/octet-stream" }));
}

export function renderPart(part) {
  if (part.text !== undefined) {
    return isMarkdown(part) ? markdown(part.text) : el("div", { class: "part text", text: part.text });
  }
  if (part.data !== undefined) {
    return el("pre", { class: "part data", text: JSON.stringify(part.data, null, 2) });
  }
  if (part.raw !== undefined || part.url !== undefined) {
    const url = fileUrl(part);
    const name = part.filename || (part.url ? part.url.split("/").pop().split("?")[0] : "file");
    const box = el("div", { class: "part file" });
    if (url && (part.mediaType || "").startsWith("image/")) box.append(el("img", { src: url, alt: name, class: "inline-image" }));
    if (url) box.append(el("a", { href: url, download: name, class: "download", text: `Download ${name}` }));
    else box.append(el("span", { text: `${name} (an URL the console does not open: ${part.url})` }));
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

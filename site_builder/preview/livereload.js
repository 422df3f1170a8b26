// The preview's live reload (site_builder/serve.py injects it into every page it serves).
// On each new site the tab fetches its page again and changes only what differs, in place: no
// reload, no new request for its stylesheet and scripts, the scroll position and open details
// kept, the page's scripts run again. A page that loads other stylesheets or scripts than the
// one shown, or that cannot be fetched, is reloaded whole. When the preview serves a new
// search index for the same pages, the page is not fetched again: it gets a
// "preview:search-index" event (the search page starts its search over on the new index).
(() => {
  "use strict";
  const SELF = "/__livereload.js";
  const LOADED = 'link[rel~="stylesheet"][href], script[src]';
  const RUNS = 'script:not([type]), script[type="module"], script[type="text/javascript"]';
  let version = document.currentScript.dataset.version;
  let indexed = document.currentScript.dataset.index || "";

  const own = (node) => (node.getAttribute("src") || "").startsWith(SELF);
  // What a page loads, in order: a swap keeps the loaded stylesheets and scripts.
  const loads = (doc) =>
    [...doc.querySelectorAll(LOADED)]
      .filter((node) => !own(node))
      .map((node) => node.getAttribute("src") || node.getAttribute("href"))
      .join("\n");

  // A parsed page's scripts are inert: a copy of one runs (in order) once inserted.
  const runnable = (script) => {
    const copy = document.createElement("script");
    for (const { name, value } of script.attributes) copy.setAttribute(name, value);
    copy.async = false;
    copy.textContent = script.textContent;
    return copy;
  };

  // Give `from` the attributes of `to`; a details element keeps whether the reader opened it.
  const copyAttributes = (from, to) => {
    for (const { name } of [...from.attributes]) {
      if (!to.hasAttribute(name) && !(name === "open" && from.localName === "details")) {
        from.removeAttribute(name);
      }
    }
    for (const { name, value } of to.attributes) {
      if (from.getAttribute(name) !== value) from.setAttribute(name, value);
    }
  };

  // Make the live node `from` like the parsed node `to`, changing only what differs, so the
  // browser lays out and paints only that: children are matched in order by node name.
  const morph = (from, to) => {
    if (from.nodeType !== Node.ELEMENT_NODE) {
      if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
      return;
    }
    copyAttributes(from, to);
    let child = from.firstChild;
    for (const node of [...to.childNodes]) {
      if (child && child.nodeName === node.nodeName) {
        morph(child, node);
        child = child.nextSibling;
      } else {
        from.insertBefore(document.adoptNode(node), child);
      }
    }
    while (child) {
      const after = child.nextSibling;
      child.remove();
      child = after;
    }
  };

  const swap = (next) => {
    copyAttributes(document.documentElement, next.documentElement);
    for (const node of [...document.head.children]) {
      if (!node.matches(LOADED)) node.remove();
    }
    for (const node of [...next.head.children]) {
      if (!node.matches(LOADED)) document.head.append(document.adoptNode(node));
    }
    morph(document.body, next.body);
    // The page's scripts run again over the new content (a loaded one from the cache).
    for (const script of document.querySelectorAll(RUNS)) {
      if (!own(script)) script.replaceWith(runnable(script));
    }
    const mine = [...document.querySelectorAll("script[src]")].find(own);
    if (mine) indexed = mine.dataset.index || "";
    return mine ? mine.dataset.version : version;
  };

  const update = async () => {
    try {
      const response = await fetch(location.href, { cache: "no-store" });
      const type = response.headers.get("Content-Type") || "";
      if (!type.startsWith("text/html")) throw new Error("not a page");
      const next = new DOMParser().parseFromString(await response.text(), "text/html");
      if (loads(next) !== loads(document)) throw new Error("other stylesheets or scripts");
      version = swap(next);
      listen();
    } catch {
      location.reload();
    }
  };

  const listen = () => {
    const query = new URLSearchParams({ version, index: indexed });
    const events = new EventSource("/__livereload?" + query);
    events.addEventListener("reload", () => {
      events.close();
      update();
    });
    events.addEventListener("search", (event) => {
      // The page now shows what a tab opened on the new index shows: its script says so.
      indexed = event.data;
      const mine = [...document.querySelectorAll("script[src]")].find(own);
      if (mine) mine.dataset.index = indexed;
      window.dispatchEvent(new Event("preview:search-index"));
    });
  };

  // A tab listens once its page is on screen: the preview's checks wait for that.
  if (document.hidden || !window.PerformanceObserver) return listen();
  let listening = false;
  const once = () => {
    if (!listening) {
      listening = true;
      listen();
    }
  };
  new PerformanceObserver(once).observe({ type: "paint", buffered: true });
  setTimeout(once, 2000);
})();
